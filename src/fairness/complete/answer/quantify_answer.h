// The answer a quantifying engine builds as it closes boxes: the falsified and undecided regions
// (merged where adjacent, largest first) and where the falsified individuals are, feature by
// feature. Shared by the complete engine for networks and the tree engine.
//
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   witness::QuantifyAnswer answer(schema, {schema.feature_index("age")}, 100,
//                                  witness::box_measure(schema, {}, {}, {}));
//   Eigen::VectorXd lo(schema.size()), hi(schema.size());
//   for (int f = 0; f < schema.size(); ++f) lo(f) = hi(f) = schema.feature(f).min;
//   answer.add_falsified(lo, hi, 1.0L, 1.0L, true);  // one point, every point of it falsified
//   std::vector<witness::RegionReport> regions = answer.regions(answer.domain_points());
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "domain/schema.h"
#include "fairness/verdict.h"

namespace witness {

// Integer points of the box [lo, hi] times the share of each real feature's range it spans, over
// the features that are not protected (empty lo/hi: the whole domain).
[[nodiscard]] long double box_measure(const Schema& schema, const std::vector<bool>& is_protected,
                                      const Eigen::VectorXd& lo, const Eigen::VectorXd& hi);

class QuantifyAnswer {
 public:
  QuantifyAnswer(const Schema& schema, std::vector<int> protected_features, int max_regions, long double domain_points);

  [[nodiscard]] long double domain_points() const { return domain_points_; }
  // A closed box with `falsified` of its `measure` falsified (`all`: every point of it): a region
  // of the report and mass for the marginals.
  void add_falsified(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi, long double measure, long double falsified,
                     bool all);
  // A box for the report only (open boxes at the end: their undecided measure too).
  void add_report(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi, long double measure, long double falsified,
                  long double undecided, bool all);
  // A closed box whose falsified points are known per feature value (by_value[f][k]: at
  // lo(f) + k; or, where run_ends[f] is not empty, over the run of values up to run_ends[f][k],
  // each holding an equal share): the report, and those counts for the marginals.
  void add_falsified_by_value(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi, long double measure,
                              long double falsified, const std::vector<std::vector<long double>>& by_value,
                              const std::vector<std::vector<double>>& run_ends = {});
  // Falsified mass spread evenly over the box, for the marginals only.
  void add_marginal(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi, long double mass);
  // The marginals, each bin's falsified mass over `total_falsified`.
  [[nodiscard]] std::vector<FeatureMarginal> marginals(long double total_falsified) const;
  // The reports merged (adjacent all-falsified boxes), largest falsified share first, at most
  // max_regions, as shares of `valid_points` (the domain's measure of people who can exist).
  [[nodiscard]] std::vector<RegionReport> regions(long double valid_points);

  // What it holds so far (falsified reports, marginal mass), to save with a search's state or to
  // join with another answer to the same question (a sub-problem's, a resumed run's).
  struct Parts {
    std::vector<RegionReport> reports;
    std::vector<std::vector<long double>> mass;  // per non-protected feature, per bin
  };
  [[nodiscard]] Parts parts() const { return {reports_, mass_}; }
  // false (nothing joined) when the mass has another shape than this answer's bins.
  bool join(const Parts& parts);

 private:
  void keep_largest();
  [[nodiscard]] bool discrete(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) const;

  const Schema& schema_;
  std::vector<int> protected_;
  std::vector<bool> is_protected_;
  int max_regions_;
  long double domain_points_;
  std::vector<RegionReport> reports_;
  std::vector<FeatureMarginal> marginals_;
  std::vector<std::vector<long double>> mass_;  // falsified measure per feature and bin
};

}  // namespace witness
