#include <algorithm>
#include <cmath>

#include "fairness/complete/network/network_regions.h"
#include "fairness/problem.h"

namespace witness {

namespace {

constexpr std::size_t kPointsKept = 4096;  // falsified points of an enumerated region kept one by one

}  // namespace

int NetworkRegions::split_feature(const SearchRegion& r, const std::vector<NetworkBounds>& nb,
                                  const std::vector<bool>& needed) const {
  const std::vector<int> c = split_candidates(r, nb, needed, 1);
  return c.empty() ? -1 : c.front();
}

double NetworkRegions::feature_score(SplitRule rule, const SearchRegion& r, int f, const std::vector<NetworkBounds>& nb,
                                     const std::vector<bool>& needed) const {
  const Feature& feat = schema_.feature(f);
  const double width = feat.one_hot ? 1.0 : std::abs(feat.norm.to_model(r.hi(f)) - feat.norm.to_model(r.lo(f)));
  double score = 0.0;
  for (std::size_t c = 0; c < nb.size(); ++c) {
    if (!needed[c]) continue;
    for (int m = 0; m < feat.model_width; ++m) {
      const Eigen::Index in = feat.model_offset + m;
      if (rule == SplitRule::Score && nb[c].upper_coef.size() > 0)
        score += (std::abs(nb[c].upper_coef(in)) + std::abs(nb[c].lower_coef(in))) * width;
      if (rule != SplitRule::Gap) continue;
      // Each unstable neuron's share of the output's gap, times the fraction of its own range
      // that this feature spans.
      for (std::size_t j = 0; j < nb[c].output_gap.size(); ++j) {
        const Eigen::VectorXd& gap = nb[c].output_gap[j];
        for (Eigen::Index i = 0; i < gap.size(); ++i)
          if (gap(i) > 0.0)
            score += gap(i) * nb[c].input_sensitivity[j](i, in) * width / (nb[c].hi[j](i) - nb[c].lo[j](i));
      }
    }
  }
  return score;
}

std::vector<int> NetworkRegions::split_candidates(const SearchRegion& r, const std::vector<NetworkBounds>& nb,
                                                  const std::vector<bool>& needed, std::size_t k) const {
  std::vector<std::pair<double, int>> scored;
  for (int f = 0; f < schema_.size(); ++f)
    if (!is_protected_[static_cast<std::size_t>(f)] && r.lo(f) < r.hi(f))
      scored.emplace_back(split_ == SplitRule::Widest ? r.hi(f) - r.lo(f) : feature_score(split_, r, f, nb, needed), f);
  auto flat = [&] { return std::all_of(scored.begin(), scored.end(), [](const auto& p) { return p.first <= 0.0; }); };
  if (flat() && split_ == SplitRule::Gap)
    for (auto& [score, f] : scored) score = feature_score(SplitRule::Score, r, f, nb, needed);
  if (flat())
    for (auto& [score, f] : scored) score = r.hi(f) - r.lo(f);
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<int> out;
  for (std::size_t i = 0; i < scored.size() && i < k; ++i) out.push_back(scored[i].second);
  return out;
}

Eigen::VectorXd NetworkRegions::input_errors(const SearchRegion& r) const {
  Eigen::VectorXd lo, hi, in_err;
  model_box(r, combos_[0], lo, hi, &in_err);
  for (int f : prot_) {  // the protected inputs' errors for every combo
    const Feature& feat = schema_.feature(f);
    in_err(feat.model_offset) = 2.0 * norm_error(feat, feat.min, feat.max);
  }
  return in_err;
}

void NetworkRegions::label_block(const Eigen::MatrixXd& block, const Eigen::VectorXd& in_err,
                                 const std::vector<bool>& needed, const std::vector<Truth>& truth,
                                 std::vector<std::vector<char>>& label, std::vector<std::vector<char>>& ok,
                                 bool interruptible) const {
  const auto b = block.cols();
  for (std::size_t c = 0; c < combos_.size(); ++c) {
    if (!needed[c]) continue;
    const Eigen::MatrixXd rc = with_protected(block, prot_, combos_[c]);
    Eigen::RowVectorXd err;
    const Eigen::RowVectorXd z = forward_.logits(schema_.to_model_columns(rc), in_err, err);
    if (interruptible && signals_.stop.load(std::memory_order_relaxed)) throw Interrupted{};
    for (Eigen::Index i = 0; i < b; ++i)
      label[c][static_cast<std::size_t>(i)] = static_cast<char>(exact_.label(rc.col(i), z(i), err(i)));
  }
  for (std::size_t c = 0; c < combos_.size(); ++c) {
    if (truth[c] != Truth::Maybe) {
      std::fill(ok[c].begin(), ok[c].end(), truth[c] == Truth::Always ? 1 : 0);
      continue;
    }
    for (Eigen::Index i = 0; i < b; ++i) ok[c][static_cast<std::size_t>(i)] = valid_.valid(block.col(i), c) ? 1 : 0;
  }
}

std::vector<PointVerdict> NetworkRegions::decide_points(const Eigen::MatrixXd& raw, RegionScratch* /*scratch*/) const {
  const Eigen::VectorXd in_err = input_errors(whole());  // the whole domain's: sound for any point
  const std::vector<bool> needed(combos_.size(), true);
  const std::vector<Truth> truth(combos_.size(), valid_.constrained() ? Truth::Maybe : Truth::Always);
  const auto n = static_cast<std::size_t>(raw.cols());
  std::vector<std::vector<char>> label(combos_.size(), std::vector<char>(n, 0)), ok(label);
  label_block(raw, in_err, needed, truth, label, ok, false);  // after the search: never cut short
  std::vector<PointVerdict> out(n, PointVerdict::NoPerson);
  for (std::size_t i = 0; i < n; ++i) {
    bool person = false, high = false, low = false;
    for (std::size_t c = 0; c < combos_.size(); ++c) {
      if (ok[c][i] == 0) continue;
      person = true;
      (label[c][i] == 1 ? high : low) = true;
    }
    if (person) out[i] = high && low ? PointVerdict::Unfair : PointVerdict::Fair;
  }
  return out;
}

void NetworkRegions::enumerate(const SearchRegion& r, const std::vector<bool>& needed, RegionEvaluation& ev) const {
  const int nc = static_cast<int>(combos_.size());
  const Eigen::VectorXd in_err = input_errors(r);
  std::vector<int> dims;
  for (int f = 0; f < schema_.size(); ++f)
    if (!is_protected_[static_cast<std::size_t>(f)] && r.lo(f) < r.hi(f)) dims.push_back(f);
  const auto total = static_cast<std::int64_t>(measure(r));
  // Batches of about 2e8 multiply-adds, so that the stop flag is seen often on wide networks.
  const auto batch = static_cast<std::int64_t>(std::clamp(2e8 / std::max(1.0, point_cost_), 1.0, 256.0));
  Eigen::VectorXd cur = r.lo;
  Eigen::MatrixXd raw(schema_.size(), batch);
  std::vector<std::vector<char>> label(combos_.size(), std::vector<char>(batch, 0));
  // Which combinations make a valid person at each point (constraints decided on the whole box
  // are not checked again point by point).
  const std::vector<Truth> truth = valid_.over_box(r.lo, r.hi);
  std::vector<std::vector<char>> ok(combos_.size(), std::vector<char>(batch, 1));
  std::int64_t unfair = 0, invalid = 0;
  for (std::int64_t done = 0; done < total;) {
    if (signals_.stop.load(std::memory_order_relaxed)) throw Interrupted{};
    const std::int64_t b = std::min(batch, total - done);
    for (std::int64_t i = 0; i < b; ++i) {
      raw.col(i) = cur;
      for (int f : dims) {  // mixed-radix increment
        if (cur(f) < r.hi(f)) {
          cur(f) += 1.0;
          break;
        }
        cur(f) = r.lo(f);
      }
    }
    const Eigen::MatrixXd block = raw.leftCols(b);
    label_block(block, in_err, needed, truth, label, ok, true);
    for (std::int64_t i = 0; i < b; ++i) {
      const auto u = static_cast<std::size_t>(i);
      if (std::none_of(ok.begin(), ok.end(), [u](const std::vector<char>& v) { return v[u] != 0; })) {
        ++invalid;  // no protected value makes this point a person
        continue;
      }
      int flip = -1;
      for (int p : r.open) {
        const auto pi = static_cast<std::size_t>(p / nc), pj = static_cast<std::size_t>(p % nc);
        if (label[pi][u] == 1 && label[pj][u] == 0 && ok[pi][u] != 0 && ok[pj][u] != 0) {
          flip = p;
          break;
        }
      }
      if (flip < 0) continue;
      ++unfair;
      if (o_.quantify && ev.unfair_points.size() <= kPointsKept) ev.unfair_points.emplace_back(block.col(i));
      if (signals_.wants_witnesses() && ev.witnesses.size() < static_cast<std::size_t>(std::max(1, o_.max_witnesses)) &&
          !try_candidate(block.col(i), flip / nc, flip % nc, ev))
        ++ev.counters.exact_only;
    }
    done += b;
  }
  ev.closed = true;
  ev.counters.enumerated = total;
  ev.falsified = static_cast<long double>(unfair);
  ev.invalid += static_cast<long double>(invalid);
  ev.certified = static_cast<long double>(total - unfair - invalid);
  ev.all_falsified = unfair == total;
}

}  // namespace witness
