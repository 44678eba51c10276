// find_nearest_rows: each witness gets the data row with the fewest differing features (the first
// of equals) and those features; an exact match differs in none.
#include "fairness/verdict.h"

#include <gtest/gtest.h>

namespace witness {
namespace {

TEST(NearestRows, TheRowWithFewestDifferingFeatures) {
  Eigen::MatrixXd rows(3, 4);  // [features][rows]
  rows << 1, 5, 1, 1,          //
      2, 2, 9, 2,              //
      3, 3, 3, 7;
  std::vector<WitnessPair> w(3);
  w[0].raw = Eigen::Vector3d(1, 9, 7);  // rows 2 and 3 differ in one feature each: the first wins
  w[1].raw = Eigen::Vector3d(5, 2, 3);  // row 1 exactly
  w[2].raw = Eigen::Vector3d(0, 0, 0);  // every row differs everywhere: row 0
  find_nearest_rows(rows, w);
  EXPECT_EQ(w[0].nearest_row, 2);
  EXPECT_EQ(w[0].nearest_differs, std::vector<int>{2});
  EXPECT_EQ(w[1].nearest_row, 1);
  EXPECT_TRUE(w[1].nearest_differs.empty());
  EXPECT_EQ(w[2].nearest_row, 0);
  EXPECT_EQ(w[2].nearest_differs, (std::vector<int>{0, 1, 2}));
  std::vector<WitnessPair> none(1);
  none[0].raw = Eigen::Vector3d(1, 2, 3);
  find_nearest_rows(Eigen::MatrixXd(3, 0), none);
  EXPECT_EQ(none[0].nearest_row, -1);
}

}  // namespace
}  // namespace witness
