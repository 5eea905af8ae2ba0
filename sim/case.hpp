// Case files (TOML) and their schema. Every key a case may hold is declared once in a
// KeySpec table (sim/case_schema.cpp): its type, default, range and meaning. Validation,
// --set overrides, the README key table (`tiersim keys`) and the stored effective case all
// come from that table, so they cannot drift apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tiersim {

struct KeySpec {
  enum class Type { Int, Float, String, Bool };
  std::string key;  // "section.name"
  Type type;
  std::string default_value;         // as TOML text; empty: required
  std::string doc;                   // one line for the README table
  double min = -1e308, max = 1e308;  // numeric range (inclusive unless *_exclusive)
  bool min_exclusive = false;
  std::vector<std::string> choices;  // allowed strings (empty: any)
  std::string example;               // required keys: the value cases/example.toml gives (TOML text)
};

const std::vector<KeySpec>& case_schema();

// The model whose section holds `key` ("nbody" for [nbody], [kepler], [collision], [galaxy];
// "stencil" for [grid], [stencil] and each listed stencil equation's section), or "" for a key of
// every run ([run], [strategy]). A case may not give keys of the other model.
std::string key_model(const std::string& key);

// The sections of the listed stencil equations' keys ([heat], [wave], ...), in the order of the
// list (kernels/physics/equations.hpp; sim/stencil_keys.cpp).
std::vector<std::string> stencil_equation_sections();

class Case {
 public:
  // Reads and validates a case file with `key=value` overrides applied on top. Throws Error
  // with "FILE:LINE: key: what is wrong" on the first problem found.
  static Case load(const std::string& path, const std::vector<std::string>& overrides = {});
  static Case parse(const std::string& text, const std::string& source_name,
                    const std::vector<std::string>& overrides = {});

  std::int64_t get_int(const std::string& key) const;
  double get_float(const std::string& key) const;
  std::string get_string(const std::string& key) const;
  bool get_bool(const std::string& key) const;
  bool was_given(const std::string& key) const;  // in the file or an override (not a default)
  // The value as the stored case writes it (canonical TOML: a string quoted and escaped).
  const std::string& toml_text(const std::string& key) const { return find(key).text; }

  // Applies one more override after loading (used by CLI flags such as --layout).
  void set(const std::string& key, const std::string& value_text);
  void set_override(const std::string& assignment);  // "section.key=value"

  // The effective case (file + overrides + defaults) as TOML text; stored with the output. Only the
  // sections of its model, and the common ones.
  std::string effective_toml() const;
  const std::string& source_name() const { return source_; }

 private:
  struct Value {
    const KeySpec* spec;
    std::string text;  // canonical TOML text of the value
    bool given = false;
    std::string where;  // where it was given: "FILE:LINE: " or "--set "
  };
  std::vector<Value> values_;  // schema order
  std::string source_;
  Value& find(const std::string& key);
  const Value& find(const std::string& key) const;
};

// Markdown table of every key (README, `tiersim keys`).
std::string case_keys_markdown();

// A runnable example case (an N-body Plummer sphere) that documents every key: its meaning,
// type, range and default. Required keys are set to their example values, every other key
// is commented out at its default (`tiersim keys --toml`; committed as cases/example.toml).
std::string case_example_toml();

}  // namespace tiersim
