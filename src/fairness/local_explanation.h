// SymbGen's local explanation: perturb an input the way LIME's tabular explainer does, label the
// perturbations with the model, fit a CART tree to them and read the input's path as predicates
// with confidences; then solve a (toggled) path back into an input.
//
//   #include "fairness/oracle.h"
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   witness::Dataset data = witness::load_csv("benchmarks/fairify/data/german.csv", schema);
//   witness::CommandOracle oracle("python3 examples/blackbox/predict.py", schema, {});   // any LabelOracle
//   witness::LocalExplainer lime(schema, data.raw, /*samples=*/1000);  std::mt19937_64 rng(1);
//   Eigen::MatrixXd around = lime.perturb(data.raw.col(0), rng);    // column 0 is the first data row itself
//   std::vector<int> labels;  oracle.labels(around, labels);
//   std::vector<witness::PathPredicate> path = lime.explain(around, labels, /*depth=*/8);
//   path[0].greater = !path[0].greater;                        // toggle the first predicate
//   std::optional<Eigen::VectorXd> y = witness::solve_path(schema, {path[0]}, data.raw.col(0), nullptr);
#pragma once

#include <Eigen/Dense>
#include <optional>
#include <random>
#include <vector>

#include "domain/schema.h"

namespace witness {

// feature > threshold when `greater`, else feature <= threshold.
struct PathPredicate {
  int feature = 0;
  double threshold = 0;
  bool greater = false;
  // How much x's label depends on the predicate: the share of x's label among the samples on x's
  // side of the split minus its share on the other side (kernel-weighted, clamped to [0, 1]).
  double confidence = 0;
};

class LocalExplainer {
 public:
  // data: raw rows [features][n] whose per-feature distribution the perturbations follow.
  LocalExplainer(const Schema& schema, const Eigen::MatrixXd& data, int samples);

  // LIME's tabular scheme: every feature independently takes a quartile bin (a value, for
  // features with few values) with the data's frequency, then a data value inside that bin.
  // Column 0 is x.
  [[nodiscard]] Eigen::MatrixXd perturb(const Eigen::VectorXd& x, std::mt19937_64& rng) const;
  // A value of `feature` drawn from the data distribution.
  [[nodiscard]] double draw(int feature, std::mt19937_64& rng) const;

  // The path of column 0 through a CART tree (weighted Gini, at most `depth` splits) fitted to the
  // labelled perturbations, weighted by LIME's kernel on the bin representation. Only x's branch is
  // grown: CART is greedy, so it is the path the whole tree would give.
  [[nodiscard]] std::vector<PathPredicate> explain(const Eigen::MatrixXd& samples, const std::vector<int>& labels,
                                                   int depth) const;

 private:
  struct Column {
    std::vector<double> sorted;  // the data's values, sorted
    std::vector<double> edges;   // upper bin edges: a value's bin is the number of edges below it
  };
  [[nodiscard]] std::size_t bin_of(int feature, double v) const;

  const Schema& schema_;
  int samples_;
  std::vector<Column> columns_;
};

// An in-domain input satisfying every predicate, or nullopt if there is none. Features a predicate
// bounds keep near's value when it qualifies, else take the qualifying value nearest to it
// (or, with rng, a uniformly random qualifying value); the other features keep near's values.
// The predicates bound single features, so their conjunction is a box and this is exact.
[[nodiscard]] std::optional<Eigen::VectorXd> solve_path(const Schema& schema, const std::vector<PathPredicate>& path,
                                                        const Eigen::VectorXd& near, std::mt19937_64* rng);

}  // namespace witness
