#include "query/schema_rules.h"

#include <fmt/format.h>

#include <cctype>
#include <vector>

namespace witness {
namespace {

// Joins terms with `op`, as a balanced tree of parentheses: a set of a thousand tuples stays within
// the query language's nesting limit.
std::string join(const std::vector<std::string>& terms, std::size_t lo, std::size_t hi, const char* op,
                 const char* empty) {
  if (lo >= hi) return empty;
  if (hi - lo == 1) return terms[lo];
  const std::size_t mid = lo + (hi - lo) / 2;
  return fmt::format("({} {} {})", join(terms, lo, mid, op, empty), op, join(terms, mid, hi, op, empty));
}
std::string join(const std::vector<std::string>& terms, const char* op, const char* empty) {
  return join(terms, 0, terms.size(), op, empty);
}

class ConditionWriter {
 public:
  ConditionWriter(const Schema& schema, const std::vector<std::string>& names)
      : cs_(schema.constraints()), names_(names) {}

  std::string all() const {
    std::vector<std::string> parts;
    for (const DerivedFeature& d : cs_.derived()) parts.push_back(derived(d));
    for (const ValidityRule& r : cs_.rules()) parts.push_back(formula(r.formula));
    return parts.empty() ? "" : join(parts, "&&", "true");
  }

 private:
  // A feature name as the query language reads it: backquoted unless it is an identifier.
  std::string name(int f) const {
    const std::string& n = names_[static_cast<std::size_t>(f)];
    bool plain = !n.empty() && (std::isalpha(static_cast<unsigned char>(n[0])) != 0 || n[0] == '_');
    for (const char c : n) plain = plain && (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_');
    return plain ? n : "`" + n + "`";
  }
  static std::string number(double v) { return fmt::format("{}", v); }
  std::string equals(int f, double v) const { return fmt::format("{} == {}", name(f), number(v)); }

  std::string derived(const DerivedFeature& d) const {
    std::vector<std::string> cases;
    if (d.kind == DerivedFeature::Kind::Bucket) {
      for (std::size_t i = 0; i < d.values.size(); ++i) {
        std::vector<std::string> c;
        if (i > 0) c.push_back(fmt::format("{} >= {}", name(d.source), number(d.edges[i - 1])));
        if (i < d.edges.size()) c.push_back(fmt::format("{} < {}", name(d.source), number(d.edges[i])));
        c.push_back(equals(d.target, d.values[i]));
        cases.push_back(join(c, "&&", "true"));
      }
    } else {
      for (const auto& [s, t] : d.table)
        cases.push_back(fmt::format("({} && {})", equals(d.source, s), equals(d.target, t)));
    }
    return join(cases, "||", "false");
  }

  std::string formula(const Formula& f) const {
    switch (f.op) {
      case Formula::Op::Linear: return linear(cs_.linear_atoms()[static_cast<std::size_t>(f.atom)]);
      case Formula::Op::Set: {
        const SetAtom& a = cs_.set_atoms()[static_cast<std::size_t>(f.atom)];
        std::vector<std::string> tuples;
        for (const std::vector<double>& t : a.tuples) {
          std::vector<std::string> c;
          for (std::size_t i = 0; i < t.size(); ++i) c.push_back(equals(a.features[i], t[i]));
          tuples.push_back(join(c, "&&", "true"));
        }
        const std::string in = join(tuples, "||", "false");
        return a.negated ? "!" + in : in;
      }
      case Formula::Op::Not: return "!(" + formula(f.children[0]) + ")";
      case Formula::Op::And:
      case Formula::Op::Or: {
        std::vector<std::string> c;
        for (const Formula& g : f.children) c.push_back(formula(g));
        return join(c, f.op == Formula::Op::And ? "&&" : "||", f.op == Formula::Op::And ? "true" : "false");
      }
      case Formula::Op::Implies: return fmt::format("(!({}) || {})", formula(f.children[0]), formula(f.children[1]));
    }
    return "true";
  }

  std::string linear(const LinearAtom& a) const {
    std::string sum = number(a.constant);
    for (const auto& [f, c] : a.terms) sum += fmt::format(" + {} * {}", number(c), name(f));
    static constexpr const char* kOps[] = {"<", "<=", "==", "!=", ">=", ">"};
    return fmt::format("({} {} 0)", sum, kOps[static_cast<int>(a.comparison)]);
  }

  const Constraints& cs_;
  const std::vector<std::string>& names_;
};

}  // namespace

std::string schema_rules_condition(const Schema& schema, const std::vector<std::string>& input_names) {
  return ConditionWriter(schema, input_names).all();
}

}  // namespace witness
