// What fuzz_xgboost_json and fuzz_xgboost_ubj run on an input (one parser, two corpora): any bytes
// must give parse_xgboost_json a Model or a witness::Error, never a crash; a model that loads is
// evaluated on a few rows (zeros, ones, NaN for the default directions, large values for the
// category chains), in double and in float32 as XGBoost computes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "fuzz_common.h"
#include "model/evaluator.h"
#include "model/loaders.h"

namespace witness::fuzz {

inline void run_xgboost(const std::uint8_t* data, std::size_t size, const std::string& source) {
  run_one([&] {
    const Model m = parse_xgboost_json(text_of(data, size), source);
    if (m.input_width() > 4096) return;
    Eigen::MatrixXd x(m.input_width(), 4);
    x.col(0).setZero();
    x.col(1).setOnes();
    x.col(2).setConstant(std::numeric_limits<double>::quiet_NaN());
    x.col(3).setConstant(-1e30);
    (void)evaluate(m, x);
    (void)evaluate(m, x, Precision::Float32);
  });
}

}  // namespace witness::fuzz
