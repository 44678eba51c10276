#include "fairness/complete/answer/quantify_answer.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

namespace witness {

namespace {

// The share of [lo, hi] (a feature's range in a box) that lies in the bin [blo, bhi].
double overlap(const Feature& feat, double blo, double bhi, double lo, double hi) {
  if (feat.integral()) {
    const double n = std::min(bhi, hi) - std::max(blo, lo) + 1.0;
    return n > 0.0 ? n / (hi - lo + 1.0) : 0.0;
  }
  if (hi <= lo) return lo >= blo && lo <= bhi ? 1.0 : 0.0;
  return std::max(0.0, std::min(bhi, hi) - std::max(blo, lo)) / (hi - lo);
}

// Merges boxes every point of which is falsified and that touch along one feature.
std::vector<RegionReport> merge_adjacent(const Schema& schema, std::vector<RegionReport> all) {
  bool merged = true;
  for (int pass = 0; merged && pass < 8; ++pass) {
    merged = false;
    for (int f = 0; f < schema.size(); ++f) {
      const bool integral = schema.feature(f).integral();
      auto key_less = [f](const RegionReport& a, const RegionReport& b) {
        for (Eigen::Index k = 0; k < a.lo.size(); ++k) {
          if (k == f) continue;
          if (a.lo(k) != b.lo(k)) return a.lo(k) < b.lo(k);
          if (a.hi(k) != b.hi(k)) return a.hi(k) < b.hi(k);
        }
        return a.lo(f) < b.lo(f);
      };
      std::sort(all.begin(), all.end(), key_less);
      std::vector<RegionReport> out;
      for (auto& r : all) {
        if (!out.empty()) {
          RegionReport& last = out.back();
          bool same = true;
          for (Eigen::Index k = 0; k < r.lo.size() && same; ++k)
            if (k != f) same = last.lo(k) == r.lo(k) && last.hi(k) == r.hi(k);
          if (same && (integral ? last.hi(f) + 1.0 == r.lo(f) : last.hi(f) == r.lo(f))) {
            last.hi(f) = r.hi(f);
            last.share += r.share;
            last.falsified += r.falsified;
            last.points += r.points;
            merged = true;
            continue;
          }
        }
        out.push_back(std::move(r));
      }
      all = std::move(out);
    }
  }
  return all;
}

}  // namespace

long double box_measure(const Schema& schema, const std::vector<bool>& is_protected, const Eigen::VectorXd& lo,
                        const Eigen::VectorXd& hi) {
  long double v = 1.0L;
  for (int f = 0; f < schema.size(); ++f) {
    if (!is_protected.empty() && is_protected[static_cast<std::size_t>(f)]) continue;
    const Feature& feat = schema.feature(f);
    const double a = lo.size() == 0 ? feat.min : lo(f), b = hi.size() == 0 ? feat.max : hi(f);
    if (feat.integral()) {
      v *= static_cast<long double>(b - a + 1.0);
    } else if (feat.max > feat.min) {
      v *= static_cast<long double>(b - a) / static_cast<long double>(feat.max - feat.min);
    }
  }
  return v;
}

QuantifyAnswer::QuantifyAnswer(const Schema& schema, std::vector<int> protected_features, int max_regions,
                               long double domain_points)
    : schema_(schema),
      protected_(std::move(protected_features)),
      is_protected_(schema.feature_mask(protected_)),
      max_regions_(max_regions),
      domain_points_(domain_points) {
  // Bins of each non-protected feature: one per value up to 16 values, else 16.
  for (int f = 0; f < schema_.size(); ++f) {
    if (is_protected_[static_cast<std::size_t>(f)]) continue;
    const Feature& feat = schema_.feature(f);
    FeatureMarginal m;
    m.feature = f;
    const double values = feat.max - feat.min + 1.0;
    const int bins = feat.integral() && values <= 16.0 ? static_cast<int>(values) : 16;
    for (int b = 0; b < bins; ++b) {
      if (feat.integral() && values <= 16.0) {
        m.lo.push_back(feat.min + b), m.hi.push_back(feat.min + b);
      } else if (feat.integral()) {
        m.lo.push_back(feat.min + std::floor(values * b / bins));
        m.hi.push_back(feat.min + std::floor(values * (b + 1) / bins) - 1.0);
      } else {
        m.lo.push_back(feat.min + (feat.max - feat.min) * b / bins);
        m.hi.push_back(feat.min + (feat.max - feat.min) * (b + 1) / bins);
      }
    }
    m.falsified.assign(static_cast<std::size_t>(bins), 0.0);
    m.domain.assign(static_cast<std::size_t>(bins), 0.0);
    for (std::size_t b = 0; b < m.lo.size(); ++b) m.domain[b] = overlap(feat, m.lo[b], m.hi[b], feat.min, feat.max);
    marginals_.push_back(std::move(m));
    mass_.emplace_back(static_cast<std::size_t>(bins), 0.0L);
  }
}

bool QuantifyAnswer::discrete(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) const {
  for (int f = 0; f < schema_.size(); ++f)
    if (!is_protected_[static_cast<std::size_t>(f)] && !schema_.feature(f).integral() && lo(f) < hi(f)) return false;
  return true;
}

void QuantifyAnswer::add_falsified(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi, long double measure,
                                   long double falsified, bool all) {
  add_report(lo, hi, measure, falsified, 0.0L, all);
  add_marginal(lo, hi, falsified);
}

void QuantifyAnswer::add_falsified_by_value(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi, long double measure,
                                            long double falsified,
                                            const std::vector<std::vector<long double>>& by_value,
                                            const std::vector<std::vector<double>>& run_ends) {
  add_report(lo, hi, measure, falsified, 0.0L, false);
  for (std::size_t m = 0; m < marginals_.size(); ++m) {
    const FeatureMarginal& fm = marginals_[m];
    const auto f = static_cast<std::size_t>(fm.feature);
    if (f >= by_value.size() || by_value[f].empty()) {  // not known per value: spread evenly
      for (std::size_t b = 0; b < fm.lo.size(); ++b)
        mass_[m][b] +=
            falsified * overlap(schema_.feature(fm.feature), fm.lo[b], fm.hi[b], lo(fm.feature), hi(fm.feature));
      continue;
    }
    if (f < run_ends.size() && !run_ends[f].empty()) {  // runs of values, spread evenly over each
      double start = lo(fm.feature);
      for (std::size_t k = 0; k < by_value[f].size() && k < run_ends[f].size(); ++k) {
        const double end = run_ends[f][k];
        for (std::size_t b = 0; b < fm.lo.size(); ++b)
          mass_[m][b] += by_value[f][k] * overlap(schema_.feature(fm.feature), fm.lo[b], fm.hi[b], start, end);
        start = end + 1.0;
      }
      continue;
    }
    std::size_t b = 0;
    for (std::size_t k = 0; k < by_value[f].size(); ++k) {
      const double v = lo(fm.feature) + static_cast<double>(k);
      while (b + 1 < fm.lo.size() && v > fm.hi[b]) ++b;
      if (v >= fm.lo[b] && v <= fm.hi[b]) mass_[m][b] += by_value[f][k];
    }
  }
}

void QuantifyAnswer::add_marginal(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi, long double mass) {
  if (mass <= 0.0L) return;
  for (std::size_t m = 0; m < marginals_.size(); ++m) {
    const FeatureMarginal& fm = marginals_[m];
    const Feature& feat = schema_.feature(fm.feature);
    for (std::size_t b = 0; b < fm.lo.size(); ++b)
      mass_[m][b] += mass * overlap(feat, fm.lo[b], fm.hi[b], lo(fm.feature), hi(fm.feature));
  }
}

void QuantifyAnswer::add_report(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi, long double measure,
                                long double falsified, long double undecided, bool all) {
  RegionReport rep;
  rep.lo = lo;
  rep.hi = hi;
  for (int f : protected_) {
    rep.lo(f) = schema_.feature(f).min;
    rep.hi(f) = schema_.feature(f).max;
  }
  rep.points = discrete(lo, hi) ? measure : 0.0L;
  rep.share = static_cast<double>(measure / domain_points_);
  rep.falsified = static_cast<double>(falsified / domain_points_);
  rep.undecided = static_cast<double>(undecided / domain_points_);
  rep.all_falsified = all;
  reports_.push_back(std::move(rep));
  keep_largest();
}

void QuantifyAnswer::keep_largest() {
  // Merging sorts them once per feature and pass: at most 8192 kept (the largest), so that the
  // answer is built in a fraction of a second after a time limit.
  const std::size_t cap = std::min<std::size_t>(8192, 64 * static_cast<std::size_t>(std::max(1, max_regions_)));
  if (reports_.size() > 2 * cap) {  // keep the largest (before merging: small boxes may go)
    std::nth_element(reports_.begin(), reports_.begin() + static_cast<std::ptrdiff_t>(cap), reports_.end(),
                     [](const RegionReport& a, const RegionReport& b) {
                       return a.falsified + a.undecided > b.falsified + b.undecided;
                     });
    reports_.resize(cap);
  }
}

bool QuantifyAnswer::join(const Parts& parts) {
  if (parts.mass.empty() && parts.reports.empty()) return true;  // nothing falsified yet
  if (parts.mass.size() != mass_.size()) return false;
  for (std::size_t m = 0; m < mass_.size(); ++m)
    if (parts.mass[m].size() != mass_[m].size()) return false;
  for (std::size_t m = 0; m < mass_.size(); ++m)
    for (std::size_t b = 0; b < mass_[m].size(); ++b) mass_[m][b] += parts.mass[m][b];
  reports_.insert(reports_.end(), parts.reports.begin(), parts.reports.end());
  keep_largest();
  return true;
}

std::vector<FeatureMarginal> QuantifyAnswer::marginals(long double total_falsified) const {
  std::vector<FeatureMarginal> out = marginals_;
  for (std::size_t m = 0; m < out.size(); ++m)
    for (std::size_t b = 0; b < mass_[m].size(); ++b)
      out[m].falsified[b] = total_falsified > 0.0L ? static_cast<double>(mass_[m][b] / total_falsified) : 0.0;
  return out;
}

std::vector<RegionReport> QuantifyAnswer::regions(long double valid_points) {
  // With constraints the shares are of the valid points.
  if (valid_points < domain_points_) {
    const double scale = valid_points > 0.0L ? static_cast<double>(domain_points_ / valid_points) : 0.0;
    for (RegionReport& rep : reports_) rep.share *= scale, rep.falsified *= scale, rep.undecided *= scale;
  }
  std::vector<RegionReport> all, rest;
  for (auto& r : reports_) (r.all_falsified ? all : rest).push_back(std::move(r));
  reports_.clear();
  all = merge_adjacent(schema_, std::move(all));
  all.insert(all.end(), std::make_move_iterator(rest.begin()), std::make_move_iterator(rest.end()));
  std::sort(all.begin(), all.end(), [](const RegionReport& a, const RegionReport& b) {
    if (a.falsified != b.falsified) return a.falsified > b.falsified;
    return a.undecided > b.undecided;
  });
  if (all.size() > static_cast<std::size_t>(std::max(0, max_regions_)))
    all.resize(static_cast<std::size_t>(std::max(0, max_regions_)));
  return all;
}

}  // namespace witness
