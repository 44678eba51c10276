// Seeded random raw points in a schema's domain, and the protected-attribute flip used to build
// fairness test pairs (x, x') that differ only in the protected features.
//
//   witness::Schema s = witness::load_schema("benchmarks/fairify/adult.toml");
//   witness::Sampler sampler(s, /*seed=*/42);
//   Eigen::MatrixXd x = sampler.points(1000);          // [features][1000], raw values
//   Eigen::MatrixXd x2 = x;
//   for (Eigen::Index j = 0; j < x2.cols(); ++j) sampler.change_protected(x2.col(j), s.protected_indices());
//   // x2.col(j) differs from x.col(j) in the protected part only, and is also in the domain.
//
// The same seed gives the same points with the same standard library; across standard libraries the
// std:: distributions may differ.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "domain/schema.h"

namespace witness {

class Sampler {
 public:
  // Copies the bounds it needs, so the schema may go away.
  Sampler(const Schema& schema, std::uint64_t seed);

  // Uniform over the domain: integral kinds uniform on the integers in [min, max] (category codes
  // included, so a box's unlabelled codes too), reals uniform on [min, max).
  [[nodiscard]] Eigen::VectorXd point();
  void point(Eigen::Ref<Eigen::VectorXd> raw);
  [[nodiscard]] Eigen::MatrixXd points(Eigen::Index n);  // [features][n]

  // Replaces the protected features of `raw` by a different combination of in-domain values,
  // uniform among all the others. If the current combination is out of the domain, any in-domain one
  // may come. Throws InputError when a protected feature is real or the domain has only one combination.
  void change_protected(Eigen::Ref<Eigen::VectorXd> raw, const std::vector<int>& protected_indices);

  [[nodiscard]] std::mt19937_64& engine() { return rng_; }

 private:
  struct Range {
    bool integral = true;
    double min = 0;
    double max = 0;
  };
  std::vector<Range> ranges_;
  std::vector<std::string> names_;
  std::string source_;
  std::mt19937_64 rng_;
};

}  // namespace witness
