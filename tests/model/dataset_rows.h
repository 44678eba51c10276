// The feature columns of a benchmark data set CSV, for comparing loaders with the data.
//
//   const Eigen::MatrixXd x = witness::test::feature_rows(path, 2000);  // [features][rows]
//   std::vector<int> labels;
//   witness::Evaluator<double>(model).labels(x, labels);                // one label per row
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace witness::test {

// The first `max_rows` rows of a CSV (header, features..., label) as [features][rows].
inline Eigen::MatrixXd feature_rows(const std::string& path, int max_rows = std::numeric_limits<int>::max()) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::string line;
  std::getline(in, line);  // header
  std::vector<std::vector<double>> rows;
  while (static_cast<int>(rows.size()) < max_rows && std::getline(in, line)) {
    std::vector<double> row;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) row.push_back(std::stod(cell));
    row.pop_back();  // the label
    rows.push_back(std::move(row));
  }
  Eigen::MatrixXd x(rows.empty() ? 0 : static_cast<Eigen::Index>(rows[0].size()),
                    static_cast<Eigen::Index>(rows.size()));
  for (Eigen::Index c = 0; c < x.cols(); ++c) {
    for (Eigen::Index r = 0; r < x.rows(); ++r)
      x(r, c) = rows[static_cast<std::size_t>(c)][static_cast<std::size_t>(r)];
  }
  return x;
}

}  // namespace witness::test
