// Sampled Bias% (PyFair section 5, footnote 2, after AEQUITAS): the share of inputs whose label
// changes when their protected values are changed to another valid combination, with a 95%
// Wilson confidence interval.
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   witness::BiasOptions o;
//   o.samples = 100000;                              // uniform random in-domain inputs
//   witness::BiasEstimate b = witness::estimate_bias(model, schema, {schema.feature_index("sex")}, o);
//   fmt::print("{:.2f}% [{:.2f}, {:.2f}]\n", 100 * b.rate, 100 * b.ci_low, 100 * b.ci_high);
//
// The estimate depends only on the seed, not on the thread count.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "domain/schema.h"
#include "model/model.h"

namespace witness {

struct BiasOptions {
  long long samples = 100000;  // the same default as witness bias (run/jobs.h)
  std::uint64_t seed = 1;
  unsigned threads = 1;
  // Draw inputs from these raw rows (columns, [schema size][n]) instead of uniformly from the
  // schema's domain: PyFair's way, which measures bias on the data manifold.
  const Eigen::MatrixXd* rows = nullptr;
  // Asked before each chunk of samples: true ends the estimate early, on the samples drawn so far
  // (a time limit or a cancel; BiasEstimate::stopped says so).
  std::function<bool()> stop;
};

struct BiasEstimate {
  // Pairs drawn, and those kept: with schema constraints, a pair whose input or twin cannot exist
  // is rejected, and the estimate is over the valid pairs (samples / drawn is the acceptance).
  long long drawn = 0;
  long long samples = 0;
  long long discriminatory = 0;  // inputs whose label changed
  double rate = 0.0;
  double ci_low = 0.0;  // 95% Wilson score interval
  double ci_high = 0.0;
  bool stopped = false;      // ended early by BiasOptions::stop, with fewer samples than asked
  long long nan_labels = 0;  // labels read off a NaN decision value (meaningless; the text warns)
  // The first discriminatory pair found (raw values), if any.
  std::optional<std::pair<Eigen::VectorXd, Eigen::VectorXd>> example;
};

// Throws InputError when the schema's model width differs from the model's input width or when a
// protected feature has a single value.
BiasEstimate estimate_bias(const Model& model, const Schema& schema, const std::vector<int>& protected_features,
                           const BiasOptions& options);

// 95% Wilson score interval for k successes in n trials.
std::pair<double, double> wilson_interval(long long k, long long n);

}  // namespace witness
