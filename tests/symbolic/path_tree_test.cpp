#include "symbolic/path_tree.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "core/error.h"
#include "domain/schema.h"
#include "symbolic/concolic.h"
#include "symbolic/encoding.h"

namespace witness {
namespace {

Model tiny_net() {
  ModelBuilder b("tiny", {"x0", "x1"});
  Eigen::MatrixXd w1(3, 2);
  w1 << 1, -1, 1, 1, -1, 2;
  Eigen::VectorXd b1(3);
  b1 << 0.5, -0.5, 0.25;
  const int h1 = b.relu(b.dense(b.input(), w1, b1));
  Eigen::MatrixXd w2(2, 3);
  w2 << 1, -1, 0.5, -0.5, 1, 1;
  Eigen::VectorXd b2(2);
  b2 << -0.25, 0.125;
  const int h2 = b.relu(b.dense(h1, w2, b2));
  Eigen::MatrixXd w3(1, 2);
  w3 << 1, -0.75;
  const int z = b.dense(h2, w3, Eigen::VectorXd::Constant(1, 0.0625));
  return b.finish(b.sigmoid(z), DecisionRule::threshold_on(z, 0.0));
}

std::vector<BranchStep> steps_of(const ConcolicRun& r) {
  std::vector<BranchStep> s;
  for (const auto& b : r.path) s.push_back({b.node, b.index, b.taken});
  return s;
}

// What a full exploration saw: the distinct paths, the frontier items popped, the concrete runs.
struct Exploration {
  std::set<std::vector<BranchStep>> explored;
  std::int64_t popped = 0, runs = 1;
};

// Explores every path from x0: pops the queue, solves each item's prefix with the solver, runs the
// solution and inserts its path; every path must be new. on_input sees each solved input.
void explore_with_z3(Solver& solver, const DomainEncoding& enc, ConcolicEvaluator& ce, const std::vector<bool>& sym,
                     const Eigen::VectorXd& x0, PathTree& tree, FrontierQueue& queue, Exploration& e,
                     const std::function<void(const Eigen::VectorXd&)>& on_input = {}) {
  const ConcolicRun first = ce.run(x0, sym);
  e.explored.insert(steps_of(first));
  for (auto& item : tree.insert(first.path)) queue.push(std::move(item));
  while (!queue.empty()) {
    ASSERT_LT(e.popped, 1000);  // terminates
    FrontierItem item = queue.pop();
    ++e.popped;
    solver.push();
    for (const Constraint& c : item.constraints) solver.assert_(substitute(c, enc.model_inputs));
    const CheckResult res = solver.check(10.0);
    tree.mark(item, res);
    if (res == CheckResult::Sat) {
      const Eigen::VectorXd x = model_input_from_solver(solver, enc, x0);
      if (on_input) on_input(x);
      const ConcolicRun r = ce.run(x, sym);
      ++e.runs;
      EXPECT_TRUE(e.explored.insert(steps_of(r)).second) << "a path was explored twice";
      for (auto& next : tree.insert(r.path, &item)) queue.push(std::move(next));
    }
    solver.pop();
  }
}

void explore(FrontierOrder order) {
  const Model m = tiny_net();
  const Schema schema = parse_schema(R"(
[[features]]
name = "x0"
kind = "integer"
min = -3
max = 3
[[features]]
name = "x1"
kind = "integer"
min = -3
max = 3
)");
  std::set<std::vector<BranchStep>> expected;
  for (int a = -3; a <= 3; ++a) {
    for (int c = -3; c <= 3; ++c) {
      Eigen::VectorXd x(2);
      x << a, c;
      expected.insert(steps_of(run_concolic(m, x, {true, true})));
    }
  }
  ASSERT_GT(expected.size(), 3U);

  auto solver = make_solver("z3");
  const std::vector<bool> sym{true, true};
  Eigen::VectorXd x0(2);
  x0 << 0, 0;
  const DomainEncoding enc = encode_domain(*solver, schema, sym, x0);
  ConcolicEvaluator ce(m);
  PathTree tree;
  FrontierQueue queue(order);
  Exploration e;
  ASSERT_NO_FATAL_FAILURE(explore_with_z3(*solver, enc, ce, sym, x0, tree, queue, e));
  const auto& explored = e.explored;
  const std::int64_t runs = e.runs, popped = e.popped;
  EXPECT_EQ(explored, expected);
  EXPECT_EQ(tree.duplicate_paths(), 0);
  EXPECT_EQ(tree.divergences(), 0);
  EXPECT_EQ(tree.explored_paths(), runs);
  EXPECT_EQ(tree.explored_paths(), static_cast<std::int64_t>(expected.size()));
  EXPECT_EQ(tree.sat() + tree.unsat(), solver->stats().checks);
  EXPECT_EQ(tree.sat() + tree.unsat() + tree.unknown(), popped);
  EXPECT_EQ(tree.queued(), popped);
  const auto paths = tree.paths();
  EXPECT_EQ(std::set<std::vector<BranchStep>>(paths.begin(), paths.end()), expected);
}

TEST(PathTree, ExploresEveryPatternOnceDfs) { explore(FrontierOrder::Dfs); }
TEST(PathTree, ExploresEveryPatternOnceBfs) { explore(FrontierOrder::Bfs); }
TEST(PathTree, ExploresEveryPatternOnceDecisionFirst) { explore(FrontierOrder::DecisionFirst); }

// A full exploration with Z3 over a domain with a one-hot categorical and a normalised integer,
// where every path ends with two decision predicates (as in the dual engine): each feasible
// pattern is explored exactly once, and the tree's solver outcomes are the solver's own count.
TEST(PathTree, FullExplorationWithTwoDecisionsAndOneHotDomain) {
  const Schema schema = parse_schema(R"(
[[features]]
name = "g"
kind = "categorical"
categories = ["x", "y", "z"]
encoding = "one-hot"
[[features]]
name = "a"
kind = "integer"
min = -2
max = 2
scale = 0.5
offset = 0.25
)");
  ModelBuilder b("two_rules", schema.model_input_names());
  Eigen::MatrixXd w1(3, 4);
  w1 << 1, -1, 0.5, 1, -0.5, 1, -1, 0.75, 1, 0.25, -1, -1;
  Eigen::VectorXd b1(3);
  b1 << -0.125, 0.0625, 0.3125;
  const int h = b.relu(b.dense(b.input(), w1, b1));
  Eigen::MatrixXd w2(2, 3);
  w2 << 1, -1, 0.5, -0.75, 1, 1;
  Eigen::VectorXd b2(2);
  b2 << -0.0078125, 0.015625;
  const int z = b.dense(h, w2, b2);
  const Model m = b.finish(z, DecisionRule::threshold_on(z, 0.0, 0));
  const std::vector<DecisionRule> rules = {DecisionRule::threshold_on(z, 0.0, 0),
                                           DecisionRule::threshold_on(z, 0.5, 1)};
  const std::vector<bool> sym(4, true);

  ConcolicEvaluator ce(m, rules);
  std::set<std::vector<BranchStep>> expected;
  for (int g = 0; g < 3; ++g) {
    for (int a = -2; a <= 2; ++a) {
      Eigen::VectorXd raw(2);
      raw << g, a;
      const ConcolicRun r = ce.run(schema.to_model(raw), sym);
      ASSERT_EQ(r.labels.size(), 2U);
      ASSERT_GE(r.path.size(), 2U);
      EXPECT_TRUE(r.path.back().is_decision);
      EXPECT_TRUE(r.path[r.path.size() - 2].is_decision);
      expected.insert(steps_of(r));
    }
  }
  ASSERT_GT(expected.size(), 3U);

  for (FrontierOrder order : {FrontierOrder::Bfs, FrontierOrder::Dfs, FrontierOrder::DecisionFirst}) {
    auto solver = make_solver("z3");
    Eigen::VectorXd raw0(2);
    raw0 << 1, 0;
    const Eigen::VectorXd x0 = schema.to_model(raw0);
    const DomainEncoding enc = encode_domain(*solver, schema, sym, x0);
    PathTree tree;
    FrontierQueue queue(order);
    Exploration e;
    ASSERT_NO_FATAL_FAILURE(
        explore_with_z3(*solver, enc, ce, sym, x0, tree, queue, e,
                        [&schema](const Eigen::VectorXd& x) { EXPECT_TRUE(schema.contains(schema.from_model(x))); }));
    const auto& explored = e.explored;
    const std::int64_t runs = e.runs, popped = e.popped;
    EXPECT_EQ(tree.duplicate_paths(), 0);
    EXPECT_EQ(tree.divergences(), 0);
    EXPECT_EQ(explored, expected);
    EXPECT_EQ(tree.explored_paths(), runs);
    EXPECT_EQ(tree.sat() + tree.unsat() + tree.unknown(), solver->stats().checks);
    EXPECT_EQ(tree.sat(), solver->stats().sat);
    EXPECT_EQ(tree.unsat(), solver->stats().unsat);
    EXPECT_EQ(tree.unknown(), 0);
    EXPECT_EQ(tree.sat() + 1, runs);
    EXPECT_EQ(tree.queued(), popped);
    const auto paths = tree.paths();
    EXPECT_EQ(std::set<std::vector<BranchStep>>(paths.begin(), paths.end()), expected);
  }
}

TEST(PathTree, InsertQueuesEachOtherDirectionOnce) {
  const Model m = tiny_net();
  Eigen::VectorXd x(2);
  x << 1, 2;
  const ConcolicRun r = run_concolic(m, x, {true, true});
  PathTree tree;
  const auto items = tree.insert(r.path);
  EXPECT_EQ(items.size(), r.path.size());
  EXPECT_TRUE(items.back().negates_decision);
  EXPECT_EQ(items.back().depth, static_cast<int>(r.path.size()));
  EXPECT_TRUE(tree.insert(r.path).empty());
  EXPECT_EQ(tree.duplicate_paths(), 1);
  FrontierQueue q(FrontierOrder::DecisionFirst);
  for (auto item : items) q.push(std::move(item));
  EXPECT_TRUE(q.pop().negates_decision);
  FrontierQueue bfs(FrontierOrder::Bfs);
  for (auto item : items) bfs.push(std::move(item));
  EXPECT_EQ(bfs.pop().depth, 1);
  EXPECT_EQ(parse_frontier_order("decision-first"), FrontierOrder::DecisionFirst);
  EXPECT_THROW((void)parse_frontier_order("random"), InputError);
}

}  // namespace
}  // namespace witness
