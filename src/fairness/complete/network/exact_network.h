// A Dense/ReLU network in exact rational arithmetic, with its inputs computed exactly from raw
// values: the arbiter for points whose double logit lies within its rounding bound of the
// threshold. The complete engine and the data-row measure decide labels with it.
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   witness::ReluNetwork net = *witness::relu_network_of(model, nullptr);
//   Eigen::MatrixXd raw = Eigen::MatrixXd::Zero(schema.size(), 1);
//   Eigen::RowVectorXd err;  // |z - exact logit| <= err
//   Eigen::RowVectorXd z = witness::BoundedForward(net).logits(schema.to_model_columns(raw),
//                                                              Eigen::VectorXd::Zero(schema.model_width()), err);
//   int label = witness::ExactNetwork(net, schema).label(raw.col(0), z(0), err(0));  // rationals only near t
#pragma once

#include <Eigen/Dense>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "bounds/relu_network.h"
#include "domain/schema.h"
#include "solver/rational.h"

namespace witness {

inline constexpr double kUnitRoundoff = 0x1p-53;
inline constexpr double kTinyError = 0x1p-1000;

// Bounds the error of a normalised model input as computed in double against its exact value,
// for raw values in [rlo, rhi].
[[nodiscard]] double norm_error(const Feature& feat, double rlo, double rhi);

class ExactNetwork {
 public:
  ExactNetwork(const ReluNetwork& net, const Schema& schema) : net_(net), schema_(schema) {}
  // logit() throws Interrupted between layers once *stop is set (a wide layer takes seconds).
  void set_stop(const std::atomic<bool>* stop) { stop_ = stop; }

  [[nodiscard]] Rational logit(const Eigen::VectorXd& raw) const;
  // The exact label at raw, given the double logit z and a bound on its rounding error.
  [[nodiscard]] int label(const Eigen::VectorXd& raw, double z, double error) const;
  [[nodiscard]] std::int64_t exact_points() const { return exact_points_.load(); }

 private:
  const ReluNetwork& net_;
  const Schema& schema_;
  const std::atomic<bool>* stop_ = nullptr;
  mutable std::atomic<std::int64_t> exact_points_{0};  // points decided in rationals
  mutable std::once_flag once_;
  mutable std::vector<std::vector<std::vector<Rational>>> w_;
  mutable std::vector<std::vector<Rational>> b_;
};

}  // namespace witness
