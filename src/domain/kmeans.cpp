#include "domain/kmeans.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "core/error.h"

namespace witness {

Clustering kmeans(const Eigen::MatrixXd& points, int k, std::uint64_t seed, int max_iterations) {
  const Eigen::Index n = points.cols();
  const Eigen::Index dims = points.rows();
  if (k <= 0) throw InputError("", "", "k-means: k must be positive");
  Clustering out;
  out.cluster.assign(static_cast<std::size_t>(n), 0);
  if (n == 0) return out;
  k = static_cast<int>(std::min<Eigen::Index>(k, n));
  out.k = k;

  // Standardise so that a feature in dollars does not drown one in years.
  Eigen::MatrixXd z = points;
  for (Eigen::Index d = 0; d < dims; ++d) {
    const double mean = z.row(d).mean();
    const double sd = std::sqrt((z.row(d).array() - mean).square().mean());
    if (sd > 0) {
      z.row(d) = (z.row(d).array() - mean) / sd;
    } else {
      z.row(d).setZero();
    }
  }

  // k-means++: each next centre drawn with probability proportional to squared distance.
  std::mt19937_64 rng(seed);
  out.centres.resize(dims, k);
  out.centres.col(0) = z.col(std::uniform_int_distribution<Eigen::Index>(0, n - 1)(rng));
  Eigen::VectorXd dist = (z.colwise() - out.centres.col(0)).colwise().squaredNorm().transpose();
  for (int c = 1; c < k; ++c) {
    const double total = dist.sum();
    Eigen::Index pick = 0;
    if (total > 0) {
      double r = std::uniform_real_distribution<double>(0.0, total)(rng);
      for (pick = 0; pick + 1 < n && r >= dist[pick]; ++pick) r -= dist[pick];
    } else {
      pick = std::uniform_int_distribution<Eigen::Index>(0, n - 1)(rng);
    }
    out.centres.col(c) = z.col(pick);
    dist = dist.cwiseMin((z.colwise() - out.centres.col(c)).colwise().squaredNorm().transpose());
  }

  for (out.iterations = 0; out.iterations < max_iterations; ++out.iterations) {
    bool changed = out.iterations == 0;
    for (Eigen::Index j = 0; j < n; ++j) {
      Eigen::Index best = 0;
      (out.centres.colwise() - z.col(j)).colwise().squaredNorm().minCoeff(&best);
      auto& cj = out.cluster[static_cast<std::size_t>(j)];
      if (cj != static_cast<int>(best)) {
        cj = static_cast<int>(best);
        changed = true;
      }
    }
    if (!changed) break;
    Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(dims, k);
    Eigen::VectorXi count = Eigen::VectorXi::Zero(k);
    for (Eigen::Index j = 0; j < n; ++j) {
      const int c = out.cluster[static_cast<std::size_t>(j)];
      sum.col(c) += z.col(j);
      ++count[c];
    }
    for (int c = 0; c < k; ++c) {
      if (count[c] > 0) out.centres.col(c) = sum.col(c) / count[c];  // an empty cluster keeps its centre
    }
  }
  return out;
}

std::vector<int> round_robin(const Clustering& c) {
  std::vector<std::vector<int>> members(static_cast<std::size_t>(std::max(c.k, 1)));
  for (std::size_t j = 0; j < c.cluster.size(); ++j) {
    members[static_cast<std::size_t>(c.cluster[j])].push_back(static_cast<int>(j));
  }
  std::vector<int> order;
  order.reserve(c.cluster.size());
  for (std::size_t round = 0; order.size() < c.cluster.size(); ++round) {
    for (const auto& m : members) {
      if (round < m.size()) order.push_back(m[round]);
    }
  }
  return order;
}

}  // namespace witness
