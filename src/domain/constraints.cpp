#include "domain/constraints.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/error.h"

namespace witness {
namespace {

bool compare(double v, Comparison c) {
  switch (c) {
    case Comparison::Less: return v < 0;
    case Comparison::LessEqual: return v <= 0;
    case Comparison::Equal: return v == 0;
    case Comparison::NotEqual: return v != 0;
    case Comparison::GreaterEqual: return v >= 0;
    case Comparison::Greater: return v > 0;
  }
  return false;
}

Truth negate(Truth t) { return t == Truth::Always ? Truth::Never : t == Truth::Never ? Truth::Always : Truth::Maybe; }

// Whether `v cmp 0` for every v in [lo, hi] (Always), none (Never), or some.
Truth compare_range(double lo, double hi, Comparison c) {
  switch (c) {
    case Comparison::Less: return hi < 0 ? Truth::Always : lo >= 0 ? Truth::Never : Truth::Maybe;
    case Comparison::LessEqual: return hi <= 0 ? Truth::Always : lo > 0 ? Truth::Never : Truth::Maybe;
    case Comparison::Greater: return lo > 0 ? Truth::Always : hi <= 0 ? Truth::Never : Truth::Maybe;
    case Comparison::GreaterEqual: return lo >= 0 ? Truth::Always : hi < 0 ? Truth::Never : Truth::Maybe;
    case Comparison::Equal:
      return lo == 0 && hi == 0 ? Truth::Always : (lo > 0 || hi < 0) ? Truth::Never : Truth::Maybe;
    case Comparison::NotEqual: return negate(compare_range(lo, hi, Comparison::Equal));
  }
  return Truth::Maybe;
}

// The number of integer points of the box over `features` (infinite when one is real-valued: the
// caller treats a set atom over a range of reals as Maybe unless no tuple lies in it).
long double points(const std::vector<int>& features, const Eigen::Ref<const Eigen::VectorXd>& lo,
                   const Eigen::Ref<const Eigen::VectorXd>& hi) {
  long double n = 1;
  for (const int f : features) n *= static_cast<long double>(std::floor(hi[f]) - std::ceil(lo[f]) + 1);
  return n;
}

}  // namespace

bool DerivedFeature::apply(double source_value, double& target_value) const {
  if (kind == Kind::Bucket) {
    const auto i = std::upper_bound(edges.begin(), edges.end(), source_value) - edges.begin();
    target_value = values[static_cast<std::size_t>(i)];
    return true;
  }
  const auto it =
      std::lower_bound(table.begin(), table.end(), std::pair{source_value, -std::numeric_limits<double>::infinity()});
  if (it == table.end() || it->first != source_value) return false;
  target_value = it->second;
  return true;
}

std::set<double> DerivedFeature::reached(double source_lo, double source_hi, bool* every_source_maps) const {
  std::set<double> out;
  if (every_source_maps != nullptr) *every_source_maps = true;
  if (kind == Kind::Bucket) {
    double v = 0;
    (void)apply(source_lo, v);
    out.insert(v);
    for (const double e : edges) {
      if (source_lo < e && e <= source_hi) {
        (void)apply(e, v);
        out.insert(v);
      }
    }
    return out;
  }
  long double keys = 0;
  for (const auto& [s, v] : table) {
    if (source_lo <= s && s <= source_hi) {
      out.insert(v);
      keys += 1;
    }
  }
  if (every_source_maps != nullptr) *every_source_maps = keys == std::floor(source_hi) - std::ceil(source_lo) + 1;
  return out;
}

bool Constraints::narrow(Eigen::Ref<Eigen::VectorXd> lo, Eigen::Ref<Eigen::VectorXd> hi,
                         const std::vector<bool>& skip) const {
  for (const DerivedFeature& d : derived_) {  // sources first: a narrowed source narrows its targets
    const auto t = static_cast<std::size_t>(d.target), s = static_cast<std::size_t>(d.source);
    if (skip[t] || skip[s]) continue;
    double a = std::numeric_limits<double>::infinity(), b = -a;
    for (const double v : d.reached(lo[d.source], hi[d.source], nullptr)) {
      if (v < lo[d.target] || v > hi[d.target]) continue;
      a = std::min(a, v);
      b = std::max(b, v);
    }
    if (a > b) return false;
    lo[d.target] = a;
    hi[d.target] = b;
  }
  return true;
}

std::vector<int> Constraints::features() const {
  std::set<int> used;
  for (const DerivedFeature& d : derived_) used.insert({d.source, d.target});
  for (const LinearAtom& a : linear_)
    for (const auto& [f, c] : a.terms) used.insert(f);
  for (const SetAtom& a : sets_) used.insert(a.features.begin(), a.features.end());
  return {used.begin(), used.end()};
}

const DerivedFeature* Constraints::derivation_of(int feature) const {
  for (const DerivedFeature& d : derived_) {
    if (d.target == feature) return &d;
  }
  return nullptr;
}

void Constraints::add_derived(DerivedFeature d) { derived_.push_back(std::move(d)); }

std::string Constraints::order_derived() {
  // Kahn's order: a derivation whose source no remaining derivation produces goes next.
  std::vector<DerivedFeature> left = std::move(derived_), ordered;
  derived_.clear();
  while (!left.empty()) {
    const auto ready = std::find_if(left.begin(), left.end(), [&](const DerivedFeature& d) {
      return std::none_of(left.begin(), left.end(), [&](const DerivedFeature& e) { return e.target == d.source; });
    });
    if (ready == left.end()) {
      derived_ = std::move(left);
      return derived_.front().text;
    }
    ordered.push_back(std::move(*ready));
    left.erase(ready);
  }
  derived_ = std::move(ordered);
  return {};
}

void Constraints::add_rule(Formula f, std::string text, std::string where) {
  rules_.push_back({std::move(f), std::move(text), std::move(where)});
}

int Constraints::add_linear(LinearAtom a) {
  linear_.push_back(std::move(a));
  return static_cast<int>(linear_.size()) - 1;
}

int Constraints::add_set(SetAtom a) {
  std::sort(a.tuples.begin(), a.tuples.end());
  a.tuples.erase(std::unique(a.tuples.begin(), a.tuples.end()), a.tuples.end());
  sets_.push_back(std::move(a));
  return static_cast<int>(sets_.size()) - 1;
}

void Constraints::derive(Eigen::Ref<Eigen::VectorXd> raw) const {
  for (const DerivedFeature& d : derived_) {
    double v = 0;
    if (d.apply(raw[d.source], v)) raw[d.target] = v;
  }
}

bool Constraints::holds(const Formula& f, const Eigen::Ref<const Eigen::VectorXd>& raw) const {
  switch (f.op) {
    case Formula::Op::Linear: {
      const LinearAtom& a = linear_[static_cast<std::size_t>(f.atom)];
      double v = a.constant;
      for (const auto& [feature, coefficient] : a.terms) v += coefficient * raw[feature];
      return compare(v, a.comparison);
    }
    case Formula::Op::Set: {
      const SetAtom& a = sets_[static_cast<std::size_t>(f.atom)];
      std::vector<double> key;
      key.reserve(a.features.size());
      for (const int x : a.features) key.push_back(raw[x]);
      return std::binary_search(a.tuples.begin(), a.tuples.end(), key) != a.negated;
    }
    case Formula::Op::Not: return !holds(f.children[0], raw);
    case Formula::Op::And:
      return std::all_of(f.children.begin(), f.children.end(), [&](const Formula& c) { return holds(c, raw); });
    case Formula::Op::Or:
      return std::any_of(f.children.begin(), f.children.end(), [&](const Formula& c) { return holds(c, raw); });
    case Formula::Op::Implies: return !holds(f.children[0], raw) || holds(f.children[1], raw);
  }
  return false;
}

std::string Constraints::first_violation(const Eigen::Ref<const Eigen::VectorXd>& raw) const {
  for (const DerivedFeature& d : derived_) {
    double v = 0;
    if (!d.apply(raw[d.source], v) || v != raw[d.target]) return d.text;
  }
  for (const ValidityRule& r : rules_) {
    if (!holds(r.formula, raw)) return r.text;
  }
  return {};
}

bool Constraints::satisfied(const Eigen::Ref<const Eigen::VectorXd>& raw) const {
  return empty() || first_violation(raw).empty();
}

Truth Constraints::over_box(const Formula& f, const Eigen::Ref<const Eigen::VectorXd>& lo,
                            const Eigen::Ref<const Eigen::VectorXd>& hi) const {
  switch (f.op) {
    case Formula::Op::Linear: {
      const LinearAtom& a = linear_[static_cast<std::size_t>(f.atom)];
      double low = a.constant, high = a.constant;
      for (const auto& [feature, c] : a.terms) {
        low += c * (c >= 0 ? lo[feature] : hi[feature]);
        high += c * (c >= 0 ? hi[feature] : lo[feature]);
      }
      return compare_range(low, high, a.comparison);
    }
    case Formula::Op::Set: {
      const SetAtom& a = sets_[static_cast<std::size_t>(f.atom)];
      long double inside = 0;
      for (const std::vector<double>& t : a.tuples) {
        bool in = true;
        for (std::size_t i = 0; i < t.size() && in; ++i) in = lo[a.features[i]] <= t[i] && t[i] <= hi[a.features[i]];
        inside += in ? 1 : 0;
      }
      const Truth t = inside == 0 ? Truth::Never : inside == points(a.features, lo, hi) ? Truth::Always : Truth::Maybe;
      return a.negated ? negate(t) : t;
    }
    case Formula::Op::Not: return negate(over_box(f.children[0], lo, hi));
    case Formula::Op::And: {
      Truth t = Truth::Always;
      for (const Formula& c : f.children) {
        const Truth u = over_box(c, lo, hi);
        if (u == Truth::Never) return Truth::Never;
        if (u == Truth::Maybe) t = Truth::Maybe;
      }
      return t;
    }
    case Formula::Op::Or: {
      Truth t = Truth::Never;
      for (const Formula& c : f.children) {
        const Truth u = over_box(c, lo, hi);
        if (u == Truth::Always) return Truth::Always;
        if (u == Truth::Maybe) t = Truth::Maybe;
      }
      return t;
    }
    case Formula::Op::Implies: {
      const Truth a = over_box(f.children[0], lo, hi);
      if (a == Truth::Never) return Truth::Always;
      const Truth b = over_box(f.children[1], lo, hi);
      if (b == Truth::Always) return Truth::Always;
      if (a == Truth::Always && b == Truth::Never) return Truth::Never;
      return Truth::Maybe;
    }
  }
  return Truth::Maybe;
}

Truth Constraints::over_box(const Eigen::Ref<const Eigen::VectorXd>& lo,
                            const Eigen::Ref<const Eigen::VectorXd>& hi) const {
  Truth t = Truth::Always;
  for (const DerivedFeature& d : derived_) {
    // The target values the sources in the box lead to: none in the target's range means no valid
    // point; exactly the target's one value from every source value means all are valid.
    bool every_source_maps = true;
    const std::set<double> reached = d.reached(lo[d.source], hi[d.source], &every_source_maps);
    const double tlo = lo[d.target], thi = hi[d.target];
    const bool any = std::any_of(reached.begin(), reached.end(), [&](double v) { return tlo <= v && v <= thi; });
    if (!any) return Truth::Never;
    if (!(every_source_maps && reached.size() == 1 && tlo == thi)) t = Truth::Maybe;
  }
  for (const ValidityRule& r : rules_) {
    const Truth u = over_box(r.formula, lo, hi);
    if (u == Truth::Never) return Truth::Never;
    if (u == Truth::Maybe) t = Truth::Maybe;
  }
  return t;
}

}  // namespace witness
