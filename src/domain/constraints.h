// Feature constraints of a schema (docs/schema.md, "Constraints"): derived features, which follow
// their sources, and validity rules over one individual. Values are raw (category codes).
//
//   #include <iostream>
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   const witness::Constraints& c = schema.constraints();
//   Eigen::VectorXd raw = Eigen::VectorXd::Zero(schema.size());   // one value per feature
//   c.derive(raw);                                  // education-num from education, ...
//   if (!c.satisfied(raw)) std::cout << c.first_violation(raw);   // "relationship in {Husband} -> sex == Male"
//   Eigen::VectorXd lo = raw, hi = raw;             // a box of raw values
//   witness::Truth t = c.over_box(lo, hi);          // Always / Never / Maybe, for every point of it
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace witness {

// What a constraint is over every point of a box: true at all, false at all, or not known.
enum class Truth : std::uint8_t { Never, Maybe, Always };

enum class Comparison : std::uint8_t { Less, LessEqual, Equal, NotEqual, GreaterEqual, Greater };

// sum(coefficient * feature) + constant  <comparison>  0.
struct LinearAtom {
  std::vector<std::pair<int, double>> terms;
  double constant = 0.0;
  Comparison comparison = Comparison::LessEqual;
};

// (features...) in {tuples...}: the listed value combinations (codes), or `negated`: not in them.
struct SetAtom {
  std::vector<int> features;
  std::vector<std::vector<double>> tuples;  // sorted, distinct
  bool negated = false;
};

struct Formula {
  enum class Op : std::uint8_t { Linear, Set, Not, And, Or, Implies };
  Op op = Op::Linear;
  int atom = 0;                   // Linear: index into linear atoms; Set: into set atoms
  std::vector<Formula> children;  // Not: 1; And, Or: 2 or more; Implies: 2 (if, then)
};

// A feature that is a function of another: `bucket` (value i when edges[i-1] <= source < edges[i])
// or `map` (a table from source values; a source value not in the table has no valid target).
struct DerivedFeature {
  enum class Kind : std::uint8_t { Bucket, Map };
  int target = 0;
  int source = 0;
  Kind kind = Kind::Bucket;
  std::vector<double> edges;                     // Bucket: ascending
  std::vector<double> values;                    // Bucket: edges.size() + 1 target values
  std::vector<std::pair<double, double>> table;  // Map: (source, target), sorted by source
  std::string text;                              // as written, for messages
  std::string where;                             // "file, line L" of the rule

  // The target value for a source value; false when the map has none.
  [[nodiscard]] bool apply(double source_value, double& target_value) const;
  // The target values of the source values in [source_lo, source_hi]; *every_source_maps says
  // whether each of those source values has one (always, for a bucket).
  [[nodiscard]] std::set<double> reached(double source_lo, double source_hi, bool* every_source_maps) const;
};

struct ValidityRule {
  Formula formula;
  std::string text;
  std::string where;
};

class Constraints {
 public:
  [[nodiscard]] bool empty() const { return derived_.empty() && rules_.empty(); }
  [[nodiscard]] const std::vector<DerivedFeature>& derived() const { return derived_; }
  [[nodiscard]] const std::vector<ValidityRule>& rules() const { return rules_; }
  [[nodiscard]] const std::vector<LinearAtom>& linear_atoms() const { return linear_; }
  [[nodiscard]] const std::vector<SetAtom>& set_atoms() const { return sets_; }
  // Every feature a derivation or a rule names, ascending.
  [[nodiscard]] std::vector<int> features() const;
  // The derived feature whose target is `feature`, or nullptr.
  [[nodiscard]] const DerivedFeature* derivation_of(int feature) const;

  // Sets every derived feature from its source, sources first. A map without the source value
  // leaves the target as it is (satisfied() is then false).
  void derive(Eigen::Ref<Eigen::VectorXd> raw) const;
  // Whether every derived feature agrees with its source and every rule holds.
  [[nodiscard]] bool satisfied(const Eigen::Ref<const Eigen::VectorXd>& raw) const;
  // The text of the first derivation or rule the row breaks; "" when it satisfies all.
  [[nodiscard]] std::string first_violation(const Eigen::Ref<const Eigen::VectorXd>& raw) const;
  // Narrows each derived feature's range in the box lo..hi to the values that its source's range
  // reaches (derivations from or to a feature marked in `skip` are left alone); false when some
  // target reaches none of its range (the box holds no valid point).
  [[nodiscard]] bool narrow(Eigen::Ref<Eigen::VectorXd> lo, Eigen::Ref<Eigen::VectorXd> hi,
                            const std::vector<bool>& skip) const;
  // Over every point of the box lo..hi (raw bounds per feature): all constraints.
  [[nodiscard]] Truth over_box(const Eigen::Ref<const Eigen::VectorXd>& lo,
                               const Eigen::Ref<const Eigen::VectorXd>& hi) const;

  // Building (the schema parser). order_derived() puts sources before the features derived from
  // them; it returns the text of a derivation on a cycle ("" when there is none).
  void add_derived(DerivedFeature d);
  [[nodiscard]] std::string order_derived();
  void add_rule(Formula f, std::string text, std::string where);
  [[nodiscard]] int add_linear(LinearAtom a);
  [[nodiscard]] int add_set(SetAtom a);

 private:
  [[nodiscard]] bool holds(const Formula& f, const Eigen::Ref<const Eigen::VectorXd>& raw) const;
  [[nodiscard]] Truth over_box(const Formula& f, const Eigen::Ref<const Eigen::VectorXd>& lo,
                               const Eigen::Ref<const Eigen::VectorXd>& hi) const;

  std::vector<DerivedFeature> derived_;  // sources before targets
  std::vector<ValidityRule> rules_;
  std::vector<LinearAtom> linear_;
  std::vector<SetAtom> sets_;
};

}  // namespace witness
