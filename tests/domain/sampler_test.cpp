#include "domain/sampler.h"

#include <gtest/gtest.h>

#include <map>

#include "test_util.h"

namespace witness {
namespace {

using test::has;
using test::input_error;
using test::repo_path;

constexpr int kDraws = 10000;

TEST(Sampler, PointsStayInDomainAndCoverIt) {
  Schema s = load_schema(repo_path("benchmarks/fairify/adult.toml"));
  Sampler sampler(s, 7);
  Eigen::MatrixXd x = sampler.points(kDraws);
  ASSERT_EQ(x.rows(), 13);
  std::map<double, int> race;
  Eigen::VectorXd lo = x.rowwise().minCoeff();
  Eigen::VectorXd hi = x.rowwise().maxCoeff();
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    ASSERT_TRUE(s.contains(x.col(j))) << s.display_row(x.col(j));
    ++race[x(7, j)];
  }
  for (int i = 0; i < s.size(); ++i) {
    EXPECT_EQ(lo[i], s.feature(i).min) << s.feature(i).name;  // 10,000 draws reach both ends
    EXPECT_EQ(hi[i], s.feature(i).max) << s.feature(i).name;
  }
  ASSERT_EQ(race.size(), 5U);
  for (const auto& [code, n] : race) EXPECT_NEAR(n, kDraws / 5, 250) << code;  // ~5 sigma
}

TEST(Sampler, SameSeedSamePoints) {
  Schema s = load_schema(repo_path("benchmarks/fairify/german.toml"));
  Sampler a(s, 123);
  Sampler b(s, 123);
  Sampler c(s, 124);
  Eigen::MatrixXd pa = a.points(50);
  EXPECT_EQ(pa, b.points(50));
  EXPECT_NE(pa, c.points(50));
}

TEST(Sampler, BoxCodesWithoutLabelsAreDrawn) {
  Schema s = load_schema(repo_path("benchmarks/fairify/bank.toml")).with_box("fairify");
  Sampler sampler(s, 1);
  Eigen::MatrixXd x = sampler.points(kDraws);
  const int month = s.feature_index("month");
  EXPECT_EQ(x.row(month).maxCoeff(), 11);
  for (Eigen::Index j = 0; j < x.cols(); ++j) ASSERT_TRUE(s.contains(x.col(j)));
}

TEST(Sampler, RealsAreUniformInBounds) {
  Schema s = parse_schema(
      "[[features]]\nname = \"r\"\nkind = \"real\"\nmin = -2\nmax = 3\n"
      "[[features]]\nname = \"z\"\nkind = \"real\"\nmin = 1\nmax = 1\n");
  Sampler sampler(s, 5);
  Eigen::MatrixXd x = sampler.points(kDraws);
  EXPECT_GE(x.row(0).minCoeff(), -2);
  EXPECT_LT(x.row(0).maxCoeff(), 3);
  EXPECT_NEAR(x.row(0).mean(), 0.5, 0.1);
  EXPECT_EQ(x.row(1).minCoeff(), 1);
  EXPECT_EQ(x.row(1).maxCoeff(), 1);
}

// Over 10,000 draws: the protected part always changes, to an in-domain value, uniformly among the
// other combinations; nothing else changes.
void check_change(const Schema& s, const std::vector<int>& prot, int combinations) {
  Sampler sampler(s, 99);
  std::map<std::vector<double>, int> seen;  // new protected combination -> count, from one fixed origin
  Eigen::VectorXd origin = sampler.point();
  for (int k = 0; k < kDraws; ++k) {
    Eigen::VectorXd x = k % 2 == 0 ? origin : sampler.point();
    Eigen::VectorXd y = x;
    sampler.change_protected(y, prot);
    ASSERT_TRUE(s.contains(y)) << s.display_row(y);
    bool changed = false;
    for (int i = 0; i < s.size(); ++i) {
      const bool is_protected = std::find(prot.begin(), prot.end(), i) != prot.end();
      if (!is_protected) {
        ASSERT_EQ(x[i], y[i]) << s.feature(i).name;
      } else if (x[i] != y[i]) {
        changed = true;
      }
    }
    ASSERT_TRUE(changed) << s.display_row(x);
    if (k % 2 == 0) {
      std::vector<double> key;
      for (int i : prot) key.push_back(y[i]);
      ++seen[key];
    }
  }
  ASSERT_EQ(static_cast<int>(seen.size()), combinations - 1);
  const double expected = kDraws / 2.0 / (combinations - 1);
  for (const auto& [key, n] : seen) EXPECT_NEAR(n, expected, 5 * std::sqrt(expected) + 1);
}

TEST(Sampler, ChangeProtectedSex) {
  Schema s = load_schema(repo_path("benchmarks/fairify/adult.toml"));
  check_change(s, s.protected_indices(), 2);
}

TEST(Sampler, ChangeProtectedRaceFiveValues) {
  Schema s = load_schema(repo_path("benchmarks/fairify/adult.toml"));
  check_change(s, s.protected_indices({"race"}), 5);
}

TEST(Sampler, ChangeProtectedRaceAndSex) {
  Schema s = load_schema(repo_path("benchmarks/fairify/adult.toml"));
  check_change(s, s.protected_indices({"race", "sex"}), 10);
}

TEST(Sampler, ChangeProtectedGermanAgeAndSex) {
  Schema s = load_schema(repo_path("benchmarks/fairify/german.toml"));
  check_change(s, s.protected_indices({"age", "sex"}), 4);
}

TEST(Sampler, ChangeProtectedFromOutsideTheDomain) {
  Schema s = load_schema(repo_path("benchmarks/fairify/german.toml"));
  Schema box = s.with_box("fairify");
  Sampler sampler(box, 3);
  const int property = s.feature_index("property");
  for (int k = 0; k < 1000; ++k) {
    Eigen::VectorXd x = sampler.point();
    x[property] = 3;  // A124: outside Fairify's box
    sampler.change_protected(x, {property});
    ASSERT_TRUE(box.contains(x));
  }
}

TEST(Sampler, ChangeProtectedErrors) {
  Schema s = parse_schema(
      "[[features]]\nname = \"r\"\nkind = \"real\"\nmin = 0\nmax = 1\n"
      "[[features]]\nname = \"one\"\nkind = \"integer\"\nmin = 4\nmax = 4\n");
  Sampler sampler(s, 1);
  Eigen::VectorXd x = sampler.point();
  EXPECT_TRUE(has(input_error([&] { sampler.change_protected(x, {0}); }), "must not be real"));
  EXPECT_TRUE(has(input_error([&] { sampler.change_protected(x, {1}); }), "single value combination"));
  EXPECT_TRUE(has(input_error([&] { sampler.change_protected(x, {}); }), "no protected features"));
  EXPECT_TRUE(has(input_error([&] { sampler.change_protected(x, {1, 1}); }), "listed twice"));
  EXPECT_TRUE(has(input_error([&] { sampler.change_protected(x, {2}); }), "not a feature index"));
}

}  // namespace
}  // namespace witness
