// k-means clustering of data rows, used to order seed inputs so that consecutive seeds come from
// different clusters (PyCT's and SymbGen's "round-robin over k-means clusters").
//
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   witness::Dataset d = witness::load_csv("benchmarks/fairify/data/adult.csv", schema);
//   witness::Clustering c = witness::kmeans(d.raw, /*k=*/4, /*seed=*/1);
//   std::vector<int> order = witness::round_robin(c);   // column indices of d.raw
//   for (int j : order) { /* d.raw.col(j) is the next seed */ }
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <vector>

namespace witness {

struct Clustering {
  std::vector<int> cluster;  // per column: its cluster in [0, k)
  Eigen::MatrixXd centres;   // [dims][k], in standardised coordinates
  int k = 0;
  int iterations = 0;
};

// Lloyd's algorithm with k-means++ initialisation on the columns of `points` ([dims][n]), each
// dimension standardised to mean 0 and standard deviation 1 first (constant dimensions are
// ignored). Deterministic for a seed; k is capped at n. At most `max_iterations` rounds.
[[nodiscard]] Clustering kmeans(const Eigen::MatrixXd& points, int k, std::uint64_t seed, int max_iterations = 100);

// Column indices taking one from each cluster in turn (cluster 0, 1, ..., k-1, 0, ...), each
// cluster in its original column order.
[[nodiscard]] std::vector<int> round_robin(const Clustering& c);

}  // namespace witness
