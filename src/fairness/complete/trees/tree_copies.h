// The tree engine's protected copies, point by point: the protected combinations (those that every
// split of the ensemble tests alike share one copy), each copy's labels at raw points by the
// original model, a point's verdict over the combinations valid at it, small boxes decided point by
// point, and witness pairs replayed on the model.
//
//   witness::Model model = witness::load_model("tests/fixtures/onnx/tree_binary.onnx");
//   witness::Schema schema = witness::load_schema_for(model, "people.toml", "");
//   witness::RawTrees trees = witness::RawTrees::compile(model, schema, nullptr).value();
//   const witness::FairnessProblem problem(model, schema, {"sex"});
//   witness::CompleteSearchOptions o;
//   witness::SearchSignals signals(1);
//   witness::TreeCopies copies(problem, o, trees, signals);
//   witness::Evaluator<double> ev(model);
//   Eigen::MatrixXd raw = Eigen::MatrixXd::Zero(schema.size(), 3);  // three raw points
//   std::vector<std::vector<int>> labels = copies.copy_labels(raw, ev);  // per copy, per column
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "domain/schema.h"
#include "fairness/complete/options.h"
#include "fairness/complete/region.h"
#include "fairness/complete/trees/raw_trees.h"
#include "fairness/valid_combinations.h"
#include "fairness/verdict.h"
#include "model/evaluator.h"
#include "model/model.h"

namespace witness {

// What deciding one box of the tree engine found.
struct TreeBoxOutcome {
  enum class Kind : std::uint8_t { Certified, Falsified, Mixed, Split } kind = Kind::Split;
  long double certified = 0.0L, falsified = 0.0L, invalid = 0.0L;
  bool inexact = false;  // certified without knowing how many of its points are people
  bool all = false;      // every point falsified
  std::vector<SearchRegion> children;
  std::vector<WitnessPair> witnesses;
  std::vector<Eigen::VectorXd> unfair_points;  // enumerated
  // Counted by cells: the unfair points per run of alike values (ClosedRegion's).
  std::vector<std::vector<long double>> unfair_by_value;
  std::vector<std::vector<double>> unfair_run_ends;
  std::int64_t rejected = 0;
};

class TreeCopies {
 public:
  // `trees` must watch nothing yet or the protected features; every argument outlives this.
  TreeCopies(const FairnessProblem& problem, const CompleteSearchOptions& o, const RawTrees& trees,
             const SearchSignals& signals);

  [[nodiscard]] std::size_t combinations() const { return combos_.size(); }
  [[nodiscard]] std::size_t copies() const { return copies_.size(); }
  // The combination that copy k stands for, and the copy of combination c.
  [[nodiscard]] std::size_t combination_of_copy(std::size_t k) const { return static_cast<std::size_t>(copies_[k]); }
  [[nodiscard]] std::size_t copy_of(std::size_t c) const { return static_cast<std::size_t>(copy_of_[c]); }
  [[nodiscard]] const ValidCombinations& valid() const { return valid_; }
  [[nodiscard]] const std::vector<bool>& is_protected() const { return is_protected_; }

  // Sets the protected entries of lo and hi to combination c.
  void set_combo(Eigen::VectorXd& lo, Eigen::VectorXd& hi, std::size_t c) const;
  // Labels of the raw points (columns) with combination c, by the original model in double.
  std::vector<int> labels(const Eigen::MatrixXd& raw, std::size_t c, Evaluator<double>& ev) const;
  // Each copy's labels at the raw points (columns).
  std::vector<std::vector<int>> copy_labels(const Eigen::MatrixXd& raw, Evaluator<double>& ev) const;
  // Point p over the combinations valid at it; for Unfair, a and b are two whose labels differ.
  PointVerdict verdict_at(const Eigen::MatrixXd& raw, Eigen::Index p, const std::vector<std::vector<int>>& label,
                          std::size_t& a, std::size_t& b) const;
  // Every point of a small box of integer features, each with the combinations valid at it.
  void enumerate(const SearchRegion& b, TreeBoxOutcome& out, Evaluator<double>& ev) const;
  // A replayed witness at the raw point with combinations i and j, if it is one (else `rejected`).
  void try_pair(const Eigen::VectorXd& raw, std::size_t i, std::size_t j, TreeBoxOutcome& out) const;
  // A replayed witness at the raw point if two combinations valid there (not Never in `truth`)
  // label it differently.
  void probe(Eigen::VectorXd raw, const std::vector<Truth>& truth, TreeBoxOutcome& out, Evaluator<double>& ev) const;
  [[nodiscard]] bool wants_witnesses() const { return signals_.wants_witnesses(); }

 private:
  const Model& model_;
  const Schema& schema_;
  const std::vector<int>& prot_;  // the protected features with their proxies
  const CompleteSearchOptions& o_;
  const SearchSignals& signals_;
  std::vector<Eigen::VectorXd> combos_;
  std::vector<bool> is_protected_;
  ValidCombinations valid_;
  std::vector<int> copies_;   // per copy, one combination it stands for
  std::vector<int> copy_of_;  // per combination, its copy
};

}  // namespace witness
