#include "fairness/complete/trees/tree_copies.h"

#include <algorithm>
#include <map>
#include <utility>

#include "fairness/problem.h"

namespace witness {

TreeCopies::TreeCopies(const FairnessProblem& problem, const CompleteSearchOptions& o, const RawTrees& trees,
                       const SearchSignals& signals)
    : model_(problem.model()),
      schema_(problem.schema()),
      prot_(problem.protected_features()),
      o_(o),
      signals_(signals),
      combos_(problem.combinations()),
      is_protected_(problem.protected_mask()),
      valid_(schema_, prot_, combos_) {
  const Schema& schema = schema_;
  // Protected values that every split tests alike give the same outputs everywhere: one copy each.
  std::map<std::vector<char>, int> classes;
  for (std::size_t c = 0; c < combos_.size(); ++c) {
    Eigen::VectorXd point = Eigen::VectorXd::Zero(schema.size());
    set_combo(point, point, c);
    const auto [it, fresh] =
        classes.try_emplace(trees.fingerprint(point, is_protected_), static_cast<int>(copies_.size()));
    if (fresh) copies_.push_back(static_cast<int>(c));
    copy_of_.push_back(it->second);
  }
}

void TreeCopies::set_combo(Eigen::VectorXd& lo, Eigen::VectorXd& hi, std::size_t c) const {
  for (std::size_t k = 0; k < prot_.size(); ++k) lo(prot_[k]) = hi(prot_[k]) = combos_[c](static_cast<Eigen::Index>(k));
}

std::vector<int> TreeCopies::labels(const Eigen::MatrixXd& raw, std::size_t c, Evaluator<double>& ev) const {
  const Eigen::MatrixXd rc = with_protected(raw, prot_, combos_[c]);
  std::vector<int> out;
  ev.labels(schema_.to_model_columns(rc), out);
  return out;
}

std::vector<std::vector<int>> TreeCopies::copy_labels(const Eigen::MatrixXd& raw, Evaluator<double>& ev) const {
  std::vector<std::vector<int>> label(copies_.size());
  for (std::size_t k = 0; k < copies_.size(); ++k) label[k] = labels(raw, static_cast<std::size_t>(copies_[k]), ev);
  return label;
}

PointVerdict TreeCopies::verdict_at(const Eigen::MatrixXd& raw, Eigen::Index p,
                                    const std::vector<std::vector<int>>& label, std::size_t& a, std::size_t& b) const {
  int seen = -1;
  bool any = false;
  for (std::size_t c = 0; c < combos_.size(); ++c) {
    if (valid_.constrained() && !valid_.valid(raw.col(p), c)) continue;
    const int l = label[static_cast<std::size_t>(copy_of_[c])][static_cast<std::size_t>(p)];
    if (!any) {
      any = true, seen = l, a = c;
    } else if (l != seen) {
      b = c;
      return PointVerdict::Unfair;
    }
  }
  return any ? PointVerdict::Fair : PointVerdict::NoPerson;
}

void TreeCopies::enumerate(const SearchRegion& b, TreeBoxOutcome& out, Evaluator<double>& ev) const {
  std::vector<int> dims;
  Eigen::Index n = 1;
  for (int f = 0; f < schema_.size(); ++f)
    if (!is_protected_[static_cast<std::size_t>(f)] && b.hi(f) > b.lo(f)) {
      dims.push_back(f);
      n *= static_cast<Eigen::Index>(b.hi(f) - b.lo(f) + 1.0);
    }
  Eigen::MatrixXd raw = b.lo.replicate(1, n);
  for (Eigen::Index p = 0, rest = 0; p < n; ++p) {
    rest = p;
    for (int f : dims) {
      const auto span = static_cast<Eigen::Index>(b.hi(f) - b.lo(f) + 1.0);
      raw(f, p) = b.lo(f) + static_cast<double>(rest % span);
      rest /= span;
    }
  }
  const std::vector<std::vector<int>> label = copy_labels(raw, ev);
  out.kind = TreeBoxOutcome::Kind::Mixed;
  for (Eigen::Index p = 0; p < n; ++p) {
    std::size_t a = 0, second = 0;
    const PointVerdict v = verdict_at(raw, p, label, a, second);
    if (v == PointVerdict::NoPerson) {
      out.invalid += 1.0L;
    } else if (v == PointVerdict::Unfair) {
      out.falsified += 1.0L;
      out.unfair_points.emplace_back(raw.col(p));
      if (wants_witnesses() && out.witnesses.size() < static_cast<std::size_t>(std::max(1, o_.max_witnesses)))
        try_pair(raw.col(p), second, a, out);
    } else {
      out.certified += 1.0L;
    }
  }
}

void TreeCopies::try_pair(const Eigen::VectorXd& raw, std::size_t i, std::size_t j, TreeBoxOutcome& out) const {
  const Eigen::MatrixXd ri = with_protected(raw, prot_, combos_[i]);
  const Eigen::MatrixXd rj = with_protected(raw, prot_, combos_[j]);
  Eigen::VectorXd a = ri.col(0), b = rj.col(0);
  if (valid_.constrained()) {
    schema_.constraints().derive(a);
    schema_.constraints().derive(b);
  }
  if (auto w = replay_witness_raw(model_, schema_, prot_, a, b)) {
    out.witnesses.push_back(std::move(*w));
  } else {
    ++out.rejected;
  }
}

void TreeCopies::probe(Eigen::VectorXd raw, const std::vector<Truth>& truth, TreeBoxOutcome& out,
                       Evaluator<double>& ev) const {
  if (valid_.constrained()) schema_.constraints().derive(raw);
  int seen = -1;
  std::size_t first = 0;
  for (std::size_t c = 0; c < combos_.size(); ++c) {
    if (truth[c] == Truth::Never || (valid_.constrained() && !valid_.valid(raw, c))) continue;
    const int l = labels(raw, c, ev)[0];
    if (seen < 0) {
      seen = l, first = c;
    } else if (l != seen) {
      try_pair(raw, c, first, out);
      return;
    }
  }
}

}  // namespace witness
