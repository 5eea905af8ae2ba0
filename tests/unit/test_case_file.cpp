// Case files: every kind of mistake gets one line naming the file, the key and the problem.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "kernels/physics/equations.hpp"
#include "sim/case.hpp"
#include "sim/model.hpp"
#include "base/error.hpp"

using namespace tiersim;

namespace {

std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    Case::parse(text, "case.toml", overrides);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

const char* kValid = "[run]\nmodel = \"nbody\"\ndt = 0.01\n[nbody]\ncount = 64\n";

TEST(CaseFile, ValidCaseGetsDefaults) {
  const Case c = Case::parse(kValid, "case.toml");
  EXPECT_EQ(c.get_string("run.model"), "nbody");
  EXPECT_DOUBLE_EQ(c.get_float("run.dt"), 0.01);
  EXPECT_EQ(c.get_int("nbody.count"), 64);
  EXPECT_EQ(c.get_string("strategy.layout"), "soa");  // default
  EXPECT_TRUE(c.was_given("nbody.count"));
  EXPECT_FALSE(c.was_given("nbody.softening"));
}

TEST(CaseFile, OverridesWinAndAreTyped) {
  const Case c = Case::parse(kValid, "case.toml", {"nbody.count=128", "strategy.layout=aos", "run.dt=2e-3"});
  EXPECT_EQ(c.get_int("nbody.count"), 128);
  EXPECT_EQ(c.get_string("strategy.layout"), "aos");
  EXPECT_DOUBLE_EQ(c.get_float("run.dt"), 2e-3);
}

TEST(CaseFile, EffectiveCaseRoundTrips) {
  const Case c = Case::parse(kValid, "case.toml", {"nbody.softening=0.25"});
  const Case again = Case::parse(c.effective_toml(), "effective.toml");
  EXPECT_DOUBLE_EQ(again.get_float("nbody.softening"), 0.25);
  EXPECT_EQ(again.effective_toml().substr(again.effective_toml().find('\n')),
            c.effective_toml().substr(c.effective_toml().find('\n')));
}

struct BadCase {
  const char* what;
  std::string text;
  std::vector<std::string> overrides;
  std::string expected;  // substring of the one-line message
};

class CaseFileErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(CaseFileErrors, OneLineNamingFileKeyAndProblem) {
  const BadCase& b = GetParam();
  const std::string msg = error_of(b.text, b.overrides);
  EXPECT_NE(msg.find(b.expected), std::string::npos) << b.what << ": got '" << msg << "'";
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "message must be one line: " << msg;
}

const std::string base = "[run]\nmodel = \"nbody\"\ndt = 0.01\n";

INSTANTIATE_TEST_SUITE_P(
    Table, CaseFileErrors,
    ::testing::Values(
        BadCase{"syntax", "[run]\nmodel = \"nbody\ndt = 0.01\n", {}, "case.toml:2: syntax error"},
        BadCase{"unknown key",
                base + "[nbody]\ncuont = 5\n",
                {},
                "case.toml:5: nbody.cuont: unknown key (did you mean 'nbody.count'?)"},
        BadCase{"unknown section", base + "[bogus]\nx = 1\n", {}, "bogus.x: unknown key"},
        BadCase{
            "wrong type", base + "[nbody]\ncount = \"many\"\n", {}, "case.toml:5: nbody.count: expected an integer"},
        BadCase{"negative count", base + "[nbody]\ncount = -3\n", {}, "nbody.count: -3 is out of range"},
        // Integer bounds print as integers (not 2147483647.0).
        BadCase{"count too large",
                base + "[nbody]\ncount = 3000000000\n",
                {},
                "case.toml:5: nbody.count: 3000000000 is out of range (must be >= 1 and <= 2147483647)"},
        BadCase{"override steps too large",
                base,
                {"run.steps=2000000000000"},
                "--set run.steps: 2000000000000 is out of range (must be >= 0 and <= 1000000000000)"},
        BadCase{"dt zero",
                "[run]\nmodel = \"nbody\"\ndt = 0.0\n",
                {},
                "case.toml:3: run.dt: 0 is out of range (must be > 0"},
        BadCase{"dt negative", "[run]\nmodel = \"nbody\"\ndt = -1\n", {}, "run.dt: -1 is out of range"},
        BadCase{
            "softening negative", base + "[nbody]\nsoftening = -0.1\n", {}, "nbody.softening: -0.1 is out of range"},
        BadCase{"nan", base + "[nbody]\nsoftening = nan\n", {}, "nbody.softening: must be a finite number"},
        BadCase{"inf", "[run]\nmodel = \"nbody\"\ndt = inf\n", {}, "run.dt: must be a finite number"},
        BadCase{"missing model", "[run]\ndt = 0.1\n", {}, "case.toml: run.model: missing required key"},
        BadCase{"missing dt", "[run]\nmodel = \"nbody\"\n", {}, "case.toml: run.dt: missing required key"},
        BadCase{"bad choice",
                base + "[strategy]\nlayout = \"zigzag\"\n",
                {},
                "strategy.layout: unknown value 'zigzag' (expected aos|soa|aosoa|float4)"},
        BadCase{"key outside section", "model = \"nbody\"\n", {}, "model: keys belong in a section"},
        BadCase{
            "override unknown", base, {"nbody.cout=5"}, "--set nbody.cout: unknown key (did you mean 'nbody.count'?)"},
        BadCase{"override no equals", base, {"nbody.count"}, "--set nbody.count: expected section.key=value"},
        BadCase{"override wrong type", base, {"nbody.count=lots"}, "--set nbody.count: 'lots' is not an integer"},
        BadCase{"override out of range", base, {"run.steps=-5"}, "--set run.steps: -5 is out of range"},
        // Inputs the fuzzer found that reach undefined behaviour inside toml++ 3.3:
        BadCase{"newline in table header", "[\nx]\n", {}, "case.toml:1: syntax error"},
        BadCase{"invalid utf8", "[run\xb0\x12model = \"", {}, "case.toml:1: syntax error: invalid UTF-8"},
        BadCase{"non-ascii outside string",
                base + "steps = 1 \xc3\xa9\n",
                {},
                "case.toml:4: syntax error: non-ASCII character outside a string"},
        BadCase{"non-ascii escape",
                base + "title = \"\\\xc3\xa9\"\n",
                {},
                "case.toml:4: syntax error: invalid escape sequence"},
        BadCase{"non-ascii after a line-ending backslash",
                base + "title = \"\"\"a\\ \n  \xc3\xa9\"\"\"\n",
                {},
                "case.toml:5: syntax error: non-ASCII character after a line-ending backslash"}),
    [](const ::testing::TestParamInfo<BadCase>& i) {
      std::string s = i.param.what;
      for (auto& ch : s)
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return s;
    });

// A byte order mark first (some editors write one) is read past; anywhere else it is a character.
TEST(CaseFile, AByteOrderMarkFirstIsReadPast) {
  const Case c = Case::parse("\xEF\xBB\xBF" + base + "steps = 7\n", "case.toml");
  EXPECT_EQ(c.get_int("run.steps"), 7);
  try {
    Case::parse(base + "\xEF\xBB\xBFsteps = 7\n", "case.toml");
    FAIL() << "a byte order mark inside the file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("case.toml:4: syntax error: non-ASCII character"), std::string::npos)
        << e.what();
  }
}

TEST(CaseFile, NonAsciiInsideStringsAndCommentsIsFine) {
  const Case c =
      Case::parse(base + "title = \"caf\xc3\xa9 # not a comment\"  # commentaire \xc3\xa9t\xc3\xa9\n", "case.toml");
  EXPECT_EQ(c.get_string("run.title"), "caf\xc3\xa9 # not a comment");
  // A line-ending backslash before ASCII text, then non-ASCII text, in a multi-line string.
  const Case m = Case::parse(base + "title = \"\"\"a\\\n  b\xc3\xa9\"\"\"\n", "case.toml");
  EXPECT_EQ(m.get_string("run.title"), "ab\xc3\xa9");
}

TEST(CaseFile, MissingFileNamesThePath) {
  try {
    Case::load("/nonexistent/dir/case.toml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/dir/case.toml: cannot open case file: No such file or directory");
  }
}

}  // namespace

// The README's key table is the schema's own (`tiersim keys`): it cannot drift from the code.
TEST(CaseFile, ReadmeKeyTableMatchesTheSchema) {
  std::ifstream f(std::string(TIERSIM_SOURCE_DIR) + "/README.md");
  ASSERT_TRUE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_NE(ss.str().find(case_keys_markdown()), std::string::npos)
      << "README.md's key table is out of date: replace it with the output of `tiersim keys`";
}

namespace {
std::string read_source_file(const std::string& relative) {
  std::ifstream f(std::string(TIERSIM_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
}  // namespace

// cases/example.toml is the schema's own (`tiersim keys --toml`), like the README table.
TEST(CaseFile, ExampleCaseIsTheGeneratedOne) {
  const std::string committed = read_source_file("cases/example.toml");
  ASSERT_FALSE(committed.empty()) << "cases/example.toml is missing";
  EXPECT_EQ(committed, case_example_toml())
      << "cases/example.toml is out of date: replace it with the output of `tiersim keys --toml`";
}

// The example runs as written (required keys set, nothing else given) and documents every key
// at its default: uncommenting each "# key = value" line of a section gives every key of the
// schema, each at its default, with its meaning, type and default in the comment above it.
TEST(CaseFile, ExampleCaseSetsRequiredKeysAndDocumentsEveryKeyAtItsDefault) {
  const std::string text = case_example_toml();
  const Case as_written = Case::parse(text, "example.toml");
  for (const auto& s : case_schema()) {
    EXPECT_EQ(as_written.was_given(s.key), s.default_value.empty()) << s.key;
  }
  EXPECT_EQ(as_written.get_string("run.model"), "nbody");

  std::istringstream in(text);
  std::string line, section, uncommented, previous_comments;
  int assignments = 0;
  while (std::getline(in, line)) {
    if (line.starts_with("[")) section = line.substr(1, line.find(']') - 1);
    std::string body = line.starts_with("# ") ? line.substr(2) : line;
    const auto eq = body.find(" = ");
    bool is_key = false;
    if (!section.empty() && eq != std::string::npos)
      for (const auto& s : case_schema())
        if (s.key == section + "." + body.substr(0, eq)) {
          is_key = true;
          // The comment block above names the type and the default (or says it is required).
          EXPECT_NE(previous_comments.find(s.default_value.empty() ? "; required" : "; default " + s.default_value),
                    std::string::npos)
              << s.key << ":\n"
              << previous_comments;
          EXPECT_NE(previous_comments.find(s.doc.substr(0, 20)), std::string::npos) << s.key;
        }
    if (is_key) {
      ++assignments;
      // The example is an N-body case: the stencil's keys stay commented (they would be refused).
      const bool other_model = key_model(section + ".") == "stencil";
      uncommented += (other_model ? line : body) + "\n";
      previous_comments.clear();
    } else {
      uncommented += line + "\n";
      previous_comments += line.starts_with("# ") ? line + "\n" : "";
    }
  }
  EXPECT_EQ(assignments, static_cast<int>(case_schema().size()));
  const Case all = Case::parse(uncommented, "example-uncommented.toml");
  for (const auto& s : case_schema())
    EXPECT_EQ(all.was_given(s.key), key_model(s.key) != "stencil") << s.key << " is not in the example";
  // Uncommenting a stencil key in this N-body case is refused, naming it.
  EXPECT_NE(error_of(uncommented, {"grid.n=8"}).find("grid.n: a key of run.model = \"stencil\""), std::string::npos);
  // Every value shown is the default: the uncommented example's effective case is as_written's.
  EXPECT_EQ(all.effective_toml().substr(all.effective_toml().find('\n')),
            as_written.effective_toml().substr(as_written.effective_toml().find('\n')));
}

// A case holds its own model's keys only: a key of the other model, in the file or by --set, is
// refused naming the key, where it was given and both models.
TEST(CaseFile, KeysOfTheOtherModelAreRefused) {
  EXPECT_EQ(
      error_of(std::string(kValid) + "[grid]\nn = 32\n"),
      "case.toml:7: grid.n: a key of run.model = \"stencil\"; this case is run.model = \"nbody\" (remove the key, or "
      "change run.model)");
  EXPECT_NE(error_of(kValid, {"heat.diffusivity=2"}).find("--set heat.diffusivity: a key of run.model = \"stencil\""),
            std::string::npos);
  const std::string stencil = "[run]\nmodel = \"stencil\"\ndt = 1e-5\n[grid]\nn = 8\n";
  EXPECT_NE(
      error_of(stencil + "[kepler]\neccentricity = 0.1\n").find("kepler.eccentricity: a key of run.model = \"nbody\""),
      std::string::npos);
  EXPECT_EQ(error_of(stencil), "(no error)");
  // Every listed equation's keys (its section, from its traits) are the stencil model's.
  StencilEquations::for_each([&](auto eq) {
    for (const auto& k : decltype(eq)::kKeys) {
      EXPECT_EQ(key_model(k.key), "stencil") << k.key;
      for (const auto& s : case_schema()) {
        if (s.key == k.key) {
          EXPECT_NE(
              error_of(kValid, {s.key + "=" + s.default_value}).find(s.key + ": a key of run.model = \"stencil\""),
              std::string::npos)
              << s.key;
        }
      }
    }
  });
  // The stored case holds the sections of its model only, and reads back as the same case.
  const Case c = Case::parse(kValid, "case.toml");
  EXPECT_EQ(c.effective_toml().find("[grid]"), std::string::npos);
  EXPECT_NE(c.effective_toml().find("[kepler]"), std::string::npos);
  EXPECT_EQ(error_of(c.effective_toml()), "(no error)");
}

// A strategy value that serves one model only (--tiling temporal: the stencil's) is refused in an
// N-body case, in one line naming the key and both models; the stencil model takes it.
TEST(CaseFile, StrategyValuesOfTheOtherModelAreRefused) {
  const Case nb = Case::parse(kValid, "case.toml", {"strategy.tiling=\"temporal\""});
  try {
    (void)strategy_from_case(nb);
    ADD_FAILURE() << "tiling = temporal accepted for an N-body case";
  } catch (const Error& e) {
    EXPECT_STREQ(
        e.what(),
        "strategy.tiling = \"temporal\" is a strategy of the stencil model; this case is run.model = \"nbody\"");
  }
  const Case st =
      Case::parse("[run]\nmodel = \"stencil\"\ndt = 1e-5\n[strategy]\ntiling = \"temporal\"\n", "case.toml");
  EXPECT_EQ(strategy_from_case(st).tiling, Tiling::Temporal);
}

// Strings of any content are stored as TOML that reads back as the same string: control
// characters, quotes, backslashes, newlines, tabs, DEL, unicode (the stored case is what a
// restart reads).
TEST(CaseFile, StringsRoundTripThroughTheStoredCase) {
  const std::pair<const char*, std::string> titles[] = {
      {R"("bell\u0007")", "bell\x07"},
      {R"("quote\" 'single' '''triple''' \"\"\"")", "quote\" 'single' '''triple''' \"\"\""},
      {R"("back\\slash \\u0041 not an escape")", "back\\slash \\u0041 not an escape"},
      {R"("line\nbreak\r\n tab\t")", "line\nbreak\r\n tab\t"},
      {R"("del\u007f esc\u001b[31m \u0001")", "del\x7f esc\x1b[31m \x01"},
      {"\"caf\xc3\xa9 \xe4\xb8\xad \\U0001F600\"", "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80"},
      {R"('literal \n stays')", "literal \\n stays"},
      {R"("")", ""},
      {R"(" # not a comment")", " # not a comment"},
  };
  for (const auto& [toml_text, title] : titles) {
    const Case c = Case::parse(kValid, "case.toml", {std::string("run.title=") + toml_text});
    ASSERT_EQ(c.get_string("run.title"), title) << toml_text;
    const Case back = Case::parse(c.effective_toml(), "stored.toml");
    EXPECT_EQ(back.get_string("run.title"), title) << c.effective_toml();
    EXPECT_EQ(back.effective_toml().substr(back.effective_toml().find('\n')),
              c.effective_toml().substr(c.effective_toml().find('\n')));
    // One line per key: a newline in a value is escaped, not written raw.
    const std::string stored = c.effective_toml();
    const auto at = stored.find("title = ");
    ASSERT_NE(at, std::string::npos);
    EXPECT_EQ(stored.substr(at, stored.find('\n', at) - at).find_first_of("\r\t\x07\x7f"), std::string::npos) << stored;
  }
}
