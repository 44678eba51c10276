#include "symbolic/path_tree.h"

#include <algorithm>

#include "core/error.h"

namespace witness {

PathTree::PathTree() { nodes_.emplace_back(); }  // the root: the empty prefix

int PathTree::child(int parent, const BranchStep& s, State state) {
  const auto id = static_cast<int>(nodes_.size());
  TreeNode n;
  n.state = state;
  n.parent = parent;
  n.step = s;
  nodes_.push_back(std::move(n));
  nodes_[static_cast<std::size_t>(parent)].children.emplace(s, id);
  return id;
}

std::vector<FrontierItem> PathTree::insert(const std::vector<BranchCondition>& path, const FrontierItem* from) {
  std::vector<FrontierItem> out;
  if (from != nullptr) {
    bool same = path.size() >= from->steps.size();
    for (std::size_t i = 0; same && i < from->steps.size(); ++i) {
      const BranchCondition& b = path[i];
      same = BranchStep{b.node, b.index, b.taken} == from->steps[i];
    }
    if (!same) ++divergences_;
  }
  int cur = 0;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const BranchCondition& b = path[i];
    const BranchStep s{b.node, b.index, b.taken};
    const BranchStep other{b.node, b.index, !b.taken};
    auto& children = nodes_[static_cast<std::size_t>(cur)].children;
    int next = -1;
    if (auto it = children.find(s); it != children.end()) {
      next = it->second;
      nodes_[static_cast<std::size_t>(next)].state = State::Explored;
    } else {
      next = child(cur, s, State::Explored);
    }
    if (!nodes_[static_cast<std::size_t>(cur)].children.contains(other)) {
      FrontierItem item;
      item.constraints.reserve(i + 1);
      item.steps.reserve(i + 1);
      for (std::size_t k = 0; k < i; ++k) {
        item.constraints.push_back(path[k].constraint);
        item.steps.push_back({path[k].node, path[k].index, path[k].taken});
      }
      item.constraints.push_back(negation(b.constraint));
      item.steps.push_back(other);
      item.depth = static_cast<int>(i) + 1;
      item.negates_decision = b.is_decision;
      item.score = (b.is_decision ? 1e9 : 0.0) + static_cast<double>(b.node);
      item.tree_node = child(cur, other, State::Queued);
      item.seq = seq_++;
      ++queued_;
      out.push_back(std::move(item));
    }
    cur = next;
  }
  TreeNode& last = nodes_[static_cast<std::size_t>(cur)];
  if (last.leaf) {
    ++duplicates_;
  } else {
    last.leaf = true;
    ++explored_paths_;
  }
  return out;
}

void PathTree::mark(const FrontierItem& item, CheckResult result) {
  if (item.tree_node <= 0 || item.tree_node >= static_cast<int>(nodes_.size())) {
    throw InternalError("PathTree::mark: the item does not belong to this tree");
  }
  State& st = nodes_[static_cast<std::size_t>(item.tree_node)].state;
  switch (result) {
    case CheckResult::Sat:
      st = State::Sat;
      ++sat_;
      break;
    case CheckResult::Unsat:
      st = State::Unsat;
      ++unsat_;
      break;
    case CheckResult::Unknown:
      st = State::Unknown;
      ++unknown_;
      break;
  }
}

std::vector<std::vector<BranchStep>> PathTree::paths() const {
  std::vector<std::vector<BranchStep>> out;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (!nodes_[i].leaf) continue;
    std::vector<BranchStep> p;
    for (auto k = static_cast<int>(i); k > 0; k = nodes_[static_cast<std::size_t>(k)].parent) {
      p.push_back(nodes_[static_cast<std::size_t>(k)].step);
    }
    std::reverse(p.begin(), p.end());
    out.push_back(std::move(p));
  }
  return out;
}

FrontierOrder parse_frontier_order(const std::string& name) { return kFrontierOrders.parse(name, "--frontier"); }

bool FrontierQueue::before(const FrontierItem& a, const FrontierItem& b) const {
  switch (order_) {
    case FrontierOrder::Bfs: return a.depth != b.depth ? a.depth < b.depth : a.seq < b.seq;
    case FrontierOrder::Dfs: return a.seq > b.seq;
    case FrontierOrder::DecisionFirst:
      if (a.score != b.score) return a.score > b.score;
      return a.depth != b.depth ? a.depth > b.depth : a.seq > b.seq;
  }
  return false;
}

void FrontierQueue::push(FrontierItem item) {
  items_.push_back(std::move(item));
  std::push_heap(items_.begin(), items_.end(), [this](const auto& a, const auto& b) { return before(b, a); });
}

FrontierItem FrontierQueue::pop() {
  if (items_.empty()) throw InternalError("FrontierQueue::pop on an empty queue");
  std::pop_heap(items_.begin(), items_.end(), [this](const auto& a, const auto& b) { return before(b, a); });
  FrontierItem item = std::move(items_.back());
  items_.pop_back();
  return item;
}

}  // namespace witness
