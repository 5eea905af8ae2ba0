#include "sim/case.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

// toml++ 3.3 turns its internal assertions into optimiser assumptions under NDEBUG, and some
// malformed inputs reach them (found by tests/fuzz: "[\nx]"). Make them throw instead, so a bad
// case file is a syntax error, never undefined behaviour.
namespace tiersim {
struct TomlInternalAssert {
  const char* expr;
};
[[noreturn]] inline void toml_internal_assert(const char* expr) { throw TomlInternalAssert{expr}; }
}  // namespace tiersim
#ifdef NDEBUG
#define TIERSIM_NDEBUG_WAS_SET
#undef NDEBUG
#endif
#define TOML_ASSERT(expr) ((expr) ? static_cast<void>(0) : ::tiersim::toml_internal_assert(#expr))
#define TOML_EXCEPTIONS 1
#include <toml++/toml.h>
#ifdef TIERSIM_NDEBUG_WAS_SET
#define NDEBUG
#endif

#include "base/error.hpp"
#include "base/printable.hpp"

namespace tiersim {
namespace {

const char* type_name(KeySpec::Type t) {
  switch (t) {
    case KeySpec::Type::Int:
      return "an integer";
    case KeySpec::Type::Float:
      return "a number";
    case KeySpec::Type::String:
      return "a string";
    case KeySpec::Type::Bool:
      return "true or false";
  }
  return "?";
}

// Which model each section belongs to; [run] and [strategy] belong to every run, and each listed
// stencil equation's section to the stencil model (stencil_equation_sections()).
struct SectionModel {
  const char* section;
  const char* model;
};
constexpr SectionModel kSectionModels[] = {{"nbody", "nbody"},  {"kepler", "nbody"}, {"collision", "nbody"},
                                           {"galaxy", "nbody"}, {"grid", "stencil"}, {"stencil", "stencil"}};

const KeySpec* find_spec(const std::string& key) {
  for (const auto& s : case_schema())
    if (s.key == key) return &s;
  return nullptr;
}

// Edit distance, for "did you mean" on unknown keys.
std::size_t distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + std::size_t(a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string unknown_key_message(const std::string& key) {
  std::string best;
  std::size_t best_d = 4;
  for (const auto& s : case_schema()) {
    const std::size_t d = distance(key, s.key);
    if (d < best_d) best_d = d, best = s.key;
  }
  return key + ": unknown key" + (best.empty() ? "" : " (did you mean '" + best + "'?)");
}

std::string format_float(double v) {
  char buf[64];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;  // shortest text that round-trips
  std::string s(buf, end);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // keep it a TOML float
  return s;
}

// A bound of a key's range as people write it: integers as integers.
std::string bound_text(KeySpec::Type type, double v) {
  char buf[64];
  if (type == KeySpec::Type::Int)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

// A TOML string as toml++ writes it: one line, every control character escaped, unicode as it is.
// (Escaping by hand missed control characters: a title with a BEL made the stored case unreadable.)
std::string quote(const std::string& s) {
  toml::table t;
  t.insert("v", s);
  std::ostringstream os;
  os << toml::toml_formatter(t, toml::format_flags::allow_unicode_strings);
  const std::string line = os.str();
  return line.substr(line.find('=') + 2);
}

// Checks a TOML node against its spec; returns the canonical text or throws with `where`.
std::string canonical(const KeySpec& spec, const toml::node& node, const std::string& where) {
  const std::string prefix = where + spec.key + ": ";
  switch (spec.type) {
    case KeySpec::Type::Int: {
      if (!node.is_integer()) throw Error(prefix + "expected " + type_name(spec.type));
      const auto v = node.as_integer()->get();
      if (double(v) < spec.min || double(v) > spec.max || (spec.min_exclusive && double(v) <= spec.min)) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "%lld is out of range (%s %s%s)", static_cast<long long>(v),
                      spec.min_exclusive ? "must be >" : "must be >=", bound_text(spec.type, spec.min).c_str(),
                      spec.max < 1e300 ? (" and <= " + bound_text(spec.type, spec.max)).c_str() : "");
        throw Error(prefix + buf);
      }
      return std::to_string(v);
    }
    case KeySpec::Type::Float: {
      double v;
      if (node.is_integer())
        v = double(node.as_integer()->get());
      else if (node.is_floating_point())
        v = node.as_floating_point()->get();
      else
        throw Error(prefix + "expected " + type_name(spec.type));
      if (!std::isfinite(v)) throw Error(prefix + "must be a finite number, not " + format_float(v));
      if (v < spec.min || v > spec.max || (spec.min_exclusive && v <= spec.min)) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "%.6g is out of range (must be %s %.6g%s)", v,
                      spec.min_exclusive ? ">" : ">=", spec.min,
                      spec.max < 1e300 ? (" and <= " + format_float(spec.max)).c_str() : "");
        throw Error(prefix + buf);
      }
      return format_float(v);
    }
    case KeySpec::Type::String: {
      if (!node.is_string()) throw Error(prefix + "expected " + type_name(spec.type));
      const std::string v = node.as_string()->get();
      if (!spec.choices.empty()) {
        std::string allowed;
        for (const auto& c : spec.choices) {
          if (c == v) return quote(v);
          allowed += (allowed.empty() ? "" : "|") + c;
        }
        throw Error(prefix + "unknown value '" + printable(v, 40) + "' (expected " + allowed + ")");
      }
      return quote(v);
    }
    case KeySpec::Type::Bool:
      if (!node.is_boolean()) throw Error(prefix + "expected " + type_name(spec.type));
      return node.as_boolean()->get() ? "true" : "false";
  }
  return {};
}

// Checks, before toml++ sees it, that the text is valid UTF-8 and that non-ASCII characters
// appear only inside strings and comments (the only places TOML 1.0 allows them). toml++ 3.3
// reaches undefined behaviour on some non-ASCII characters elsewhere (found by tests/fuzz).
//
// A quote opens a string only where TOML's parser reads one: where a key or a value starts (the
// start of a line, after the '=' that ends a key, after '[', '{' or ',' that themselves stand
// where a value or key starts, after the '.' of a dotted key). Elsewhere, e.g. `x = 0"é"`,
// `x = 0="é"` or `x = 0["é"`, toml++ scans the bytes as part of a bare value, where a non-ASCII
// character must not reach it (it runs into __builtin_unreachable on some).
void check_case_text(const std::string& text, const std::string& source) {
  enum class State { Normal, Comment, Basic, Literal, MultiBasic, MultiLiteral } st = State::Normal;
  int line = 1;
  bool open = true;        // a key or value may start here
  bool key = true;         // a key is being read (until its '=')
  std::vector<char> nest;  // '[' and '{' opened where a value or key starts, innermost last
  auto fail = [&](const std::string& what) {
    throw Error(source + ":" + std::to_string(line) + ": syntax error: " + what);
  };
  auto newline = [&] {
    ++line;
    if (nest.empty()) open = key = true;  // inside an array or inline table a line break changes nothing
  };
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char ch = static_cast<unsigned char>(text[i]);
    if (ch >= 0x80) {
      // Validate one UTF-8 sequence.
      const int len = ch >= 0xF0 && ch < 0xF5 ? 4 : ch >= 0xE0 ? (ch < 0xF0 ? 3 : 0) : ch >= 0xC2 ? 2 : 0;
      if (len == 0 || i + len > n) fail("invalid UTF-8");
      for (int k = 1; k < len; ++k)
        if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) fail("invalid UTF-8");
      if (st == State::Normal) fail("non-ASCII character outside a string or comment");
      i += len - 1;
      continue;
    }
    if (ch == 0) fail("NUL character");
    const bool starts3 = i + 2 < n && text[i + 1] == text[i] && text[i + 2] == text[i];
    switch (st) {
      case State::Normal:
        if (ch == '#') {
          st = State::Comment;
        } else if ((ch == '"' || ch == '\'') && open) {
          const bool basic = ch == '"';
          st = starts3 ? (basic ? State::MultiBasic : State::MultiLiteral) : (basic ? State::Basic : State::Literal);
          if (starts3) i += 2;
        } else if (ch == '\n') {
          newline();
        } else if (ch == '[' || ch == '{') {
          if (open) {
            const bool header = ch == '[' && nest.empty() && key;  // [table] or [[array]]: a key follows
            nest.push_back(char(ch));
            key = ch == '{' || header;
          }
          // open stays: a value or key may follow; '[' or '{' inside a bare value opens nothing
        } else if (ch == ']' || ch == '}') {
          if (!nest.empty()) nest.pop_back();
          open = false;
        } else if (ch == ',') {
          open = !nest.empty();
          if (open && nest.back() == '{') key = true;
        } else if (ch == '=') {
          open = key;
          key = false;
        } else if (ch == '.') {
          open = key;
        } else if (ch != ' ' && ch != '\t' && ch != '\r') {
          open = false;
        }
        continue;
      case State::Comment:
        if (ch == '\n') st = State::Normal, newline();
        continue;
      case State::Basic:
      case State::MultiBasic:
        if (ch == '\\') {
          if (i + 1 < n && static_cast<unsigned char>(text[i + 1]) >= 0x80) fail("invalid escape sequence");
          // A backslash before whitespace in a multi-line string (a line-ending backslash): toml++
          // skips the whitespace and line breaks that follow and tests the first other character
          // for whitespace, which must not be a non-ASCII one.
          std::size_t j = i + 1;
          while (st == State::MultiBasic && j < n &&
                 (text[j] == ' ' || text[j] == '\t' || text[j] == '\r' || text[j] == '\n'))
            ++j;
          if (j > i + 1) {
            for (std::size_t k = i + 1; k < j; ++k) line += text[k] == '\n';
            if (j < n && static_cast<unsigned char>(text[j]) >= 0x80)
              fail("non-ASCII character after a line-ending backslash");
            i = j - 1;
            continue;
          }
          ++i;  // the escaped character
          if (i < n && text[i] == '\n') ++line;
          continue;
        }
        if (ch == '"' && (st == State::Basic || starts3)) {
          if (st == State::MultiBasic) i += 2;
          st = State::Normal, open = false;
        } else if (ch == '\n' && st == State::Basic) {
          st = State::Normal, newline();  // toml++ reports the unterminated string
          continue;
        }
        break;
      case State::Literal:
      case State::MultiLiteral:
        if (ch == '\'' && (st == State::Literal || starts3)) {
          if (st == State::MultiLiteral) i += 2;
          st = State::Normal, open = false;
        } else if (ch == '\n' && st == State::Literal) {
          st = State::Normal, newline();
          continue;
        }
        break;
    }
    if (ch == '\n') ++line;
  }
}

std::string location(const std::string& file, const toml::node& n) {
  const auto& src = n.source();
  return file + ":" + std::to_string(src.begin.line) + ": ";
}

}  // namespace

std::string key_model(const std::string& key) {
  const std::string section = key.substr(0, key.find('.'));
  for (const SectionModel& s : kSectionModels)
    if (section == s.section) return s.model;
  static const std::vector<std::string> equation_sections = stencil_equation_sections();
  for (const std::string& s : equation_sections)
    if (section == s) return "stencil";
  return "";
}

Case::Value& Case::find(const std::string& key) {
  for (auto& v : values_)
    if (v.spec->key == key) return v;
  throw Error(unknown_key_message(key));
}
const Case::Value& Case::find(const std::string& key) const { return const_cast<Case*>(this)->find(key); }

namespace {

// A case file is a few kB; anything much larger is not one (and is not read whole into memory).
constexpr std::size_t kMaxCaseBytes = std::size_t(1) << 20;

const char* file_kind(mode_t m) {
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  return "not a file";
}

// The text of the case file `path`: only a regular file (after following links) of at most
// kMaxCaseBytes. A link to /dev/zero or /dev/urandom, a FIFO or a device would be read without end.
std::string read_case_file(const std::string& path) {
  auto cannot_open = [&](int e) { return Error(path + ": cannot open case file: " + std::strerror(e)); };
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw cannot_open(errno);
  if (S_ISDIR(st.st_mode)) throw Error(path + ": is a directory, not a case file");
  if (!S_ISREG(st.st_mode))
    throw Error(path + ": not a regular file (" + file_kind(st.st_mode) +
                "); a case file is read from a regular file only");
  // O_NONBLOCK: were the file swapped for a FIFO since, opening it must not wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw cannot_open(errno);
  std::string text;
  try {
    if (::fstat(fd, &st) != 0) throw cannot_open(errno);
    if (!S_ISREG(st.st_mode))
      throw Error(path + ": not a regular file (" + file_kind(st.st_mode) +
                  "); a case file is read from a regular file only");
    auto too_large = [&](std::uintmax_t bytes) {
      return Error(path + ": " + std::to_string(bytes) + " bytes, larger than a case file may be (" +
                   std::to_string(kMaxCaseBytes) + " bytes)");
    };
    if (std::uintmax_t(st.st_size) > kMaxCaseBytes) throw too_large(std::uintmax_t(st.st_size));
    char buf[65536];
    for (;;) {
      const ssize_t r = ::read(fd, buf, sizeof buf);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw Error(path + ": cannot read case file: " + std::strerror(errno));
      if (r == 0) break;
      text.append(buf, std::size_t(r));
      if (text.size() > kMaxCaseBytes) throw too_large(text.size());  // grew while being read
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return text;
}

}  // namespace

Case Case::load(const std::string& path, const std::vector<std::string>& overrides) {
  return parse(read_case_file(path), path, overrides);
}

Case Case::parse(const std::string& text, const std::string& source_name, const std::vector<std::string>& overrides) {
  Case c;
  c.source_ = source_name;
  for (const auto& s : case_schema()) {
    std::string text = s.default_value;
    if (!text.empty()) text = canonical(s, *toml::parse("v = " + text).get("v"), "schema default ");
    c.values_.push_back({&s, text, false});
  }

  // A UTF-8 byte order mark, which some editors write first, marks the encoding; it is not text.
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  const std::string_view body = std::string_view(text).starts_with(kBom) ? std::string_view(text).substr(3) : text;
  toml::table root;
  check_case_text(std::string(body), source_name);
  try {
    root = toml::parse(body, source_name);
  } catch (const toml::parse_error& e) {
    throw Error(source_name + ":" + std::to_string(e.source().begin.line) +
                ": syntax error: " + std::string(e.description()));
  } catch (const TomlInternalAssert&) {
    throw Error(source_name + ": syntax error: malformed TOML");
  }
  for (const auto& [section_key, section] : root) {
    const std::string section_name(section_key.str());
    if (!section.is_table())
      throw Error(location(source_name, section) + section_name + ": keys belong in a section such as [run]");
    for (const auto& [k, node] : *section.as_table()) {
      const std::string key = section_name + "." + std::string(k.str());
      const KeySpec* spec = find_spec(key);
      if (!spec) throw Error(location(source_name, node) + unknown_key_message(key));
      Value& v = c.find(key);
      v.text = canonical(*spec, node, location(source_name, node));
      v.given = true;
      v.where = location(source_name, node);
    }
  }
  for (const auto& o : overrides) c.set_override(o);
  for (const auto& v : c.values_)
    if (v.text.empty()) throw Error(source_name + ": " + v.spec->key + ": missing required key");
  // A key of the other model is a mistake (a [grid] section pasted into an N-body case): it would
  // be ignored, so the run would not be the one the file describes.
  const std::string model = c.get_string("run.model");
  for (const auto& v : c.values_) {
    const std::string owner = key_model(v.spec->key);
    if (v.given && !owner.empty() && owner != model)
      throw Error(v.where + v.spec->key + ": a key of run.model = \"" + owner + "\"; this case is run.model = \"" +
                  model + "\" (remove the key, or change run.model)");
  }
  return c;
}

void Case::set_override(const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw Error("--set " + assignment + ": expected section.key=value");
  set(assignment.substr(0, eq), assignment.substr(eq + 1));
}

void Case::set(const std::string& key, const std::string& value_text) {
  const KeySpec* spec = find_spec(key);
  if (!spec) throw Error("--set " + unknown_key_message(key));
  toml::table t;
  check_case_text(value_text, "--set " + key);
  try {
    t = toml::parse("v = " + value_text);
  } catch (const TomlInternalAssert&) {
    throw Error("--set " + key + ": '" + printable(value_text, 60) + "' is not valid TOML");
  } catch (const toml::parse_error&) {
    // Bare words are strings on the command line: --set strategy.layout=aos
    if (spec->type != KeySpec::Type::String) {
      throw Error("--set " + key + ": '" + printable(value_text, 60) + "' is not " + type_name(spec->type));
    }
    t.insert_or_assign("v", value_text);
  }
  Value& v = find(key);
  v.text = canonical(*spec, *t.get("v"), "--set ");
  v.given = true;
  v.where = "--set ";
}

namespace {
toml::table parse_value(const std::string& text) { return toml::parse("v = " + text); }
}  // namespace

std::int64_t Case::get_int(const std::string& key) const {
  return *parse_value(find(key).text)["v"].value<std::int64_t>();
}
double Case::get_float(const std::string& key) const { return *parse_value(find(key).text)["v"].value<double>(); }
std::string Case::get_string(const std::string& key) const {
  return *parse_value(find(key).text)["v"].value<std::string>();
}
bool Case::get_bool(const std::string& key) const { return *parse_value(find(key).text)["v"].value<bool>(); }
bool Case::was_given(const std::string& key) const { return find(key).given; }

std::string Case::effective_toml() const {
  std::ostringstream os;
  os << "# effective case: " << source_ << " with overrides and defaults applied\n";
  const std::string model = get_string("run.model");
  std::string section;
  for (const auto& v : values_) {
    const std::string owner = key_model(v.spec->key);
    if (!owner.empty() && owner != model) continue;
    const auto dot = v.spec->key.find('.');
    const std::string s = v.spec->key.substr(0, dot);
    if (s != section) {
      os << (section.empty() ? "" : "\n") << "[" << s << "]\n";
      section = s;
    }
    os << v.spec->key.substr(dot + 1) << " = " << v.text << "\n";
  }
  return os.str();
}

std::string case_keys_markdown() {
  std::ostringstream os;
  os << "| key | type | default | meaning |\n|---|---|---|---|\n";
  for (const auto& s : case_schema()) {
    std::string type = s.type == KeySpec::Type::Int     ? "int"
                       : s.type == KeySpec::Type::Float ? "float"
                       : s.type == KeySpec::Type::Bool  ? "bool"
                                                        : "string";
    if (!s.choices.empty()) {
      type.clear();
      for (const auto& c : s.choices) type += (type.empty() ? "" : " \\| ") + c;
    }
    os << "| `" << s.key << "` | " << type << " | "
       << (s.default_value.empty() ? "required" : "`" + s.default_value + "`") << " | " << s.doc << " |\n";
  }
  return os.str();
}

namespace {

// "int, >= 0 and <= 1000000000000", "float, > 0", "string: aos | soa", "true | false".
std::string type_and_range(const KeySpec& s) {
  switch (s.type) {
    case KeySpec::Type::Bool:
      return "true | false";
    case KeySpec::Type::String: {
      if (s.choices.empty()) return "string";
      std::string t = "string: ";
      for (std::size_t i = 0; i < s.choices.size(); ++i) t += (i ? " | " : "") + s.choices[i];
      return t;
    }
    case KeySpec::Type::Int:
    case KeySpec::Type::Float: {
      std::string t = s.type == KeySpec::Type::Int ? "int" : "float";
      const bool lo = s.min > -1e300, hi = s.max < 1e300;
      if (lo) t += std::string(s.min_exclusive ? ", > " : ", >= ") + bound_text(s.type, s.min);
      if (hi) t += (lo ? " and <= " : ", <= ") + bound_text(s.type, s.max);
      return t;
    }
  }
  return "?";
}

// Comment lines "# ..." of at most `width` characters, broken at spaces.
std::string comment_wrapped(const std::string& text, std::size_t width = 98) {
  std::string out, line;
  std::istringstream words(text);
  std::string w;
  while (words >> w) {
    if (!line.empty() && line.size() + 1 + w.size() > width - 2) {
      out += "# " + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + w;
  }
  if (!line.empty()) out += "# " + line + "\n";
  return out;
}

}  // namespace

std::string case_example_toml() {
  std::ostringstream os;
  os << "# tiersim example case: every key a case file may hold, with its meaning, type, range and\n"
        "# default. Generated from the key schema (sim/case_schema.cpp) by `tiersim keys --toml`; a test\n"
        "# keeps cases/example.toml equal to it, so change the schema, not this file.\n"
        "#\n"
        "# The required keys are set; every other key is shown commented out at its default: uncomment a\n"
        "# line to change it. As written this runs an N-body Plummer sphere ("
     << find_spec("nbody.count")->default_value << " bodies, " << find_spec("run.steps")->default_value
     << " steps):\n"
        "#   tiersim run cases/example.toml\n";
  std::string sections = "[grid], [stencil]";
  const std::vector<std::string> eqs = stencil_equation_sections();
  for (std::size_t i = 0; i < eqs.size(); ++i) sections += (i + 1 == eqs.size() ? " and [" : ", [") + eqs[i] + "]";
  os << comment_wrapped(
      "Command-line flags (--backend, --layout, --steps, ...) override the file, and --set section.key=value "
      "overrides both. A case holds the keys of its own model only, and a key of the other one is refused: "
      "[nbody], [kepler], [collision] and [galaxy] are run.model = \"nbody\"'s ([kepler], [collision] and [galaxy] "
      "go with nbody.ic); " +
      sections + " are run.model = \"stencil\"'s (one equation section, with stencil.equation).");
  std::string section;
  for (const auto& s : case_schema()) {
    const auto dot = s.key.find('.');
    const std::string sec = s.key.substr(0, dot), name = s.key.substr(dot + 1);
    if (sec != section) {
      os << "\n[" << sec << "]\n";
      section = sec;
    }
    const bool required = s.default_value.empty();
    if (required && s.example.empty())
      throw Error(s.key + ": a required key needs an example value in the schema (sim/case_schema.cpp)");
    os << "\n"
       << comment_wrapped(s.doc)
       << comment_wrapped(type_and_range(s) + "; " + (required ? "required" : "default " + s.default_value));
    if (required)
      os << name << " = " << s.example << "\n";
    else
      os << "# " << name << " = " << s.default_value << "\n";
  }
  return os.str();
}

}  // namespace tiersim
