#include "domain/kmeans.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "core/error.h"

namespace witness {
namespace {

// `per` points around each centre (columns of `centres`), uniform within +-spread[d] in dimension d,
// interleaved: column j belongs to blob j % k.
Eigen::MatrixXd blobs(const Eigen::MatrixXd& centres, int per, const Eigen::VectorXd& spread, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const auto k = static_cast<int>(centres.cols());
  Eigen::MatrixXd out(centres.rows(), static_cast<Eigen::Index>(per) * k);
  for (Eigen::Index j = 0; j < out.cols(); ++j) {
    for (Eigen::Index d = 0; d < out.rows(); ++d) out(d, j) = centres(d, j % k) + spread[d] * u(rng);
  }
  return out;
}

Eigen::MatrixXd three_centres() {
  Eigen::MatrixXd c(3, 3);  // dims 0 and 1 in very different units; dim 2 constant
  c << 0, 100, 0,           //
      0, 0, 50000,          //
      7, 7, 7;
  return c;
}

Eigen::VectorXd spread3(double a, double b) { return Eigen::Vector3d(a, b, 0.0); }

// Every blob maps to one cluster and different blobs to different clusters.
void expect_separates(const Clustering& c, int k, Eigen::Index n) {
  ASSERT_EQ(c.k, k);
  ASSERT_EQ(static_cast<Eigen::Index>(c.cluster.size()), n);
  std::vector<int> of_blob(static_cast<std::size_t>(k), -1);
  for (Eigen::Index j = 0; j < n; ++j) {
    const int got = c.cluster[static_cast<std::size_t>(j)];
    ASSERT_GE(got, 0);
    ASSERT_LT(got, k);
    int& want = of_blob[static_cast<std::size_t>(j % k)];
    if (want < 0) want = got;
    EXPECT_EQ(got, want) << "column " << j << " of blob " << j % k;
  }
  EXPECT_EQ(std::set<int>(of_blob.begin(), of_blob.end()).size(), static_cast<std::size_t>(k));
}

TEST(KMeans, SeparatesWellSeparatedBlobs) {
  const Eigen::MatrixXd x = blobs(three_centres(), 40, spread3(1.0, 1.0), 3);
  for (std::uint64_t seed : {1, 2, 3, 4, 5, 42}) {
    const Clustering c = kmeans(x, 3, seed);
    SCOPED_TRACE(seed);
    expect_separates(c, 3, x.cols());
    EXPECT_EQ(c.centres.rows(), 3);
    EXPECT_EQ(c.centres.cols(), 3);
    EXPECT_GE(c.iterations, 1);
    EXPECT_LE(c.iterations, 100);
    // Centres are in standardised coordinates: the constant dimension is ignored (0).
    EXPECT_TRUE(c.centres.row(2).isZero(0.0));
  }
}

// Standardisation: blobs 0 and 1 differ by 100 in dim 0, while dim 1 (in large units) varies by
// +-1000 inside each blob; in raw units that noise would dominate the split.
TEST(KMeans, StandardisesEachDimension) {
  const Eigen::MatrixXd x = blobs(three_centres(), 30, spread3(1.0, 1000.0), 9);
  for (std::uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(seed);
    expect_separates(kmeans(x, 3, seed), 3, x.cols());
  }
}

TEST(KMeans, DeterministicForASeed) {
  const Eigen::MatrixXd x =
      blobs(three_centres(), 25, spread3(60.0, 30000.0), 5);  // overlapping blobs: the seed matters
  for (std::uint64_t seed : {1, 7, 123456789}) {
    const Clustering a = kmeans(x, 4, seed);
    const Clustering b = kmeans(x, 4, seed);
    EXPECT_EQ(a.cluster, b.cluster);
    EXPECT_TRUE(a.centres == b.centres);
    EXPECT_EQ(a.iterations, b.iterations);
    EXPECT_EQ(round_robin(a), round_robin(b));
  }
}

TEST(KMeans, KIsCappedAtN) {
  Eigen::MatrixXd x(2, 3);
  x << 0, 5, 10,  //
      1, 2, 3;
  const Clustering c = kmeans(x, 10, 1);
  EXPECT_EQ(c.k, 3);
  EXPECT_EQ(c.centres.cols(), 3);
  EXPECT_EQ(std::set<int>(c.cluster.begin(), c.cluster.end()).size(), 3U);  // one point per cluster
  std::vector<int> order = round_robin(c);
  std::sort(order.begin(), order.end());
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));

  const Clustering one = kmeans(x.leftCols(1), 4, 1);
  EXPECT_EQ(one.k, 1);
  EXPECT_EQ(one.cluster, std::vector<int>{0});
  EXPECT_EQ(round_robin(one), std::vector<int>{0});
}

TEST(KMeans, EmptyAndIdenticalPointsAndBadK) {
  const Clustering empty = kmeans(Eigen::MatrixXd(3, 0), 4, 1);
  EXPECT_TRUE(empty.cluster.empty());
  EXPECT_TRUE(round_robin(empty).empty());

  const Eigen::MatrixXd same = Eigen::MatrixXd::Constant(2, 6, 3.5);
  const Clustering c = kmeans(same, 3, 1);
  EXPECT_EQ(c.cluster.size(), 6U);
  std::vector<int> order = round_robin(c);
  std::sort(order.begin(), order.end());
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));

  EXPECT_THROW((void)kmeans(same, 0, 1), InputError);
  EXPECT_THROW((void)kmeans(same, -2, 1), InputError);
}

// round_robin: every column once; consecutive picks alternate clusters while every cluster has
// members left; each cluster's members keep their column order.
TEST(KMeans, RoundRobinVisitsEveryColumnOnceAlternatingClusters) {
  Eigen::MatrixXd c(2, 3);
  c << 0, 100, 0,  //
      0, 0, 100;
  // Unequal blob sizes: 3 columns of blob 0, then 5 of blob 1, then 2 of blob 2, then more of blob 1.
  Eigen::MatrixXd x(2, 13);
  const std::vector<int> blob = {0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 1, 1, 0};
  for (std::size_t j = 0; j < blob.size(); ++j) {
    x.col(static_cast<Eigen::Index>(j)) = c.col(blob[j]) + Eigen::Vector2d(0.1 * static_cast<double>(j % 3), 0.0);
  }
  const Clustering k = kmeans(x, 3, 2);
  for (std::size_t j = 0; j < blob.size(); ++j) {  // the blobs are found
    for (std::size_t i = 0; i < j; ++i) EXPECT_EQ(k.cluster[i] == k.cluster[j], blob[i] == blob[j]);
  }
  const std::vector<int> order = round_robin(k);
  ASSERT_EQ(order.size(), blob.size());
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t j = 0; j < sorted.size(); ++j) EXPECT_EQ(sorted[j], static_cast<int>(j));

  std::vector<std::size_t> size(3, 0);
  for (int cl : k.cluster) ++size[static_cast<std::size_t>(cl)];
  // Round r takes one member from each cluster with more than r members, in cluster order.
  std::size_t pos = 0;
  for (std::size_t round = 0; pos < order.size(); ++round) {
    int last = -1;
    for (int cl = 0; cl < 3; ++cl) {
      if (size[static_cast<std::size_t>(cl)] <= round) continue;
      ASSERT_LT(pos, order.size());
      const int got = k.cluster[static_cast<std::size_t>(order[pos])];
      EXPECT_EQ(got, cl) << "position " << pos;
      EXPECT_GT(got, last);
      last = got;
      ++pos;
    }
  }
  // The first three picks come from three different clusters.
  EXPECT_EQ(std::set<int>({k.cluster[static_cast<std::size_t>(order[0])], k.cluster[static_cast<std::size_t>(order[1])],
                           k.cluster[static_cast<std::size_t>(order[2])]})
                .size(),
            3U);
  // Each cluster's members appear in their column order.
  for (int cl = 0; cl < 3; ++cl) {
    int prev = -1;
    for (int j : order) {
      if (k.cluster[static_cast<std::size_t>(j)] != cl) continue;
      EXPECT_GT(j, prev);
      prev = j;
    }
  }
}

TEST(KMeans, RoundRobinOfAHandMadeClustering) {
  Clustering c;
  c.k = 3;
  c.cluster = {2, 0, 0, 1, 2, 0, 1};
  EXPECT_EQ(round_robin(c), (std::vector<int>{1, 3, 0, 2, 6, 4, 5}));
}

}  // namespace
}  // namespace witness
