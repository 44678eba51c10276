// The path tree T and frontier queue Q of concolic testing (PyFair section 4.4): T records the
// branch directions explored so far; insert() returns, for each branch of a new path whose other
// direction is neither explored nor queued, the prefix to solve next.
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   Eigen::VectorXd x = Eigen::VectorXd::Zero(model.input_width());
//   witness::ConcolicRun run = witness::run_concolic(model, x, std::vector<bool>(x.size(), true));
//   witness::PathTree tree;  witness::FrontierQueue queue(witness::FrontierOrder::DecisionFirst);
//   for (auto& item : tree.insert(run.path)) queue.push(std::move(item));
//   while (!queue.empty()) {
//     witness::FrontierItem item = queue.pop();
//     witness::CheckResult r = witness::CheckResult::Unsat;  /* solve item.constraints */  tree.mark(item, r);
//     if (r == witness::CheckResult::Sat) { /* run the solution: tree.insert(its path, &item) into the queue */ }
//   }
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/choice.h"
#include "solver/solver.h"
#include "symbolic/concolic.h"

namespace witness {

// One step of a path: the branch point and the direction taken.
struct BranchStep {
  int node = -1;
  int index = 0;
  bool taken = false;
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads a defaulted <=>
  friend auto operator<=>(const BranchStep&, const BranchStep&) = default;
};

struct FrontierItem {
  std::vector<Constraint> constraints;  // the path's prefix, then the negated branch
  std::vector<BranchStep> steps;        // one per constraint; steps.back() is the negated branch
  int depth = 0;                        // number of steps (>= 1)
  double score = 0.0;                   // larger = explored earlier under DecisionFirst
  bool negates_decision = false;
  int attempts = 0;      // solver calls that answered Unknown for it so far (set by the engine)
  int tree_node = -1;    // the tree node this item would create (internal)
  std::int64_t seq = 0;  // creation order (internal)
};

class PathTree {
 public:
  enum class State : std::uint8_t { Explored, Queued, Sat, Unsat, Unknown };

  PathTree();
  // Adds a run's path. `from` is the item whose solution produced it (nullptr for a seed run);
  // a path that does not begin with from's steps counts as a divergence. Returns the new items.
  std::vector<FrontierItem> insert(const std::vector<BranchCondition>& path, const FrontierItem* from = nullptr);
  // Records the solver's answer for an item (Sat: a run from its solution should be inserted next).
  void mark(const FrontierItem& item, CheckResult result);

  [[nodiscard]] std::int64_t explored_paths() const { return explored_paths_; }  // distinct complete paths
  [[nodiscard]] std::int64_t duplicate_paths() const { return duplicates_; }     // inserted again
  [[nodiscard]] std::int64_t divergences() const { return divergences_; }
  [[nodiscard]] std::int64_t queued() const { return queued_; }  // items handed out
  [[nodiscard]] std::int64_t sat() const { return sat_; }
  [[nodiscard]] std::int64_t unsat() const { return unsat_; }
  [[nodiscard]] std::int64_t unknown() const { return unknown_; }
  [[nodiscard]] std::size_t size() const { return nodes_.size(); }
  // Every complete explored path, as its steps (for tests and reports).
  [[nodiscard]] std::vector<std::vector<BranchStep>> paths() const;

 private:
  struct TreeNode {
    State state = State::Explored;
    bool leaf = false;  // a complete path ends here
    int parent = -1;
    BranchStep step;
    std::map<BranchStep, int> children;
  };
  int child(int parent, const BranchStep& s, State state);
  std::vector<TreeNode> nodes_;
  std::int64_t explored_paths_ = 0, duplicates_ = 0, divergences_ = 0, queued_ = 0, sat_ = 0, unsat_ = 0, unknown_ = 0,
               seq_ = 0;
};

enum class FrontierOrder : std::uint8_t {
  Bfs,           // shallowest first, then oldest
  Dfs,           // newest first (a stack, as PyCT)
  DecisionFirst  // negated decision predicates first, then branches closest to the output
};
inline constexpr Choices<FrontierOrder, 3> kFrontierOrders{
    {{{FrontierOrder::Bfs, "bfs"}, {FrontierOrder::Dfs, "dfs"}, {FrontierOrder::DecisionFirst, "decision-first"}}},
    "frontier order"};
FrontierOrder parse_frontier_order(const std::string& name);  // kFrontierOrders, InputError naming --frontier

class FrontierQueue {
 public:
  explicit FrontierQueue(FrontierOrder order = FrontierOrder::Dfs) : order_(order) {}
  void push(FrontierItem item);
  FrontierItem pop();  // InternalError when empty
  [[nodiscard]] bool empty() const { return items_.empty(); }
  [[nodiscard]] std::size_t size() const { return items_.size(); }

 private:
  [[nodiscard]] bool before(const FrontierItem& a, const FrontierItem& b) const;
  FrontierOrder order_;
  std::vector<FrontierItem> items_;  // a binary heap under before()
};

}  // namespace witness
