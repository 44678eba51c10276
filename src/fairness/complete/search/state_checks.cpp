#include "fairness/complete/search/state_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "fairness/complete/answer/quantify_answer.h"

namespace witness {
namespace {

constexpr long double kTwo64 = 18446744073709551616.0L;
// Long double sums of many fractional measures (real features, or lattices past 2^64 points)
// drift by about n * 2^-64 of the whole; a billion regions stay far inside this.
constexpr long double kRelativeRounding = 1e-9L;

std::string amount(long double v) {
  return std::floor(v) == v && v < 1e30L ? fmt::format("{:.0f}", v) : fmt::format("{:.17g}", v);
}

[[noreturn]] void fail(const std::string& source, const std::string& where, const std::string& what) {
  throw InputError(source, "", fmt::format("{}: {} (the file was changed, or mixes searches)", where, what));
}

// The k-d partition of check_regions_disjoint.
class OverlapSearch {
 public:
  OverlapSearch(const std::vector<SearchRegion>& regions, const Schema& schema, const std::vector<bool>& is_protected)
      : regions_(regions), schema_(schema) {
    for (int f = 0; f < schema.size(); ++f)
      if (!is_protected[static_cast<std::size_t>(f)]) features_.push_back(f);
  }

  // The first overlapping pair found, or {npos, npos}.
  std::pair<std::size_t, std::size_t> run() {
    std::vector<std::size_t> all(regions_.size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    cell(std::move(all));
    return found_;
  }

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  static constexpr std::size_t kSmallCell = 24;

  [[nodiscard]] bool overlap(const SearchRegion& a, const SearchRegion& b) const {
    for (int f : features_) {
      const bool meet = schema_.feature(f).integral() ? a.lo(f) <= b.hi(f) && b.lo(f) <= a.hi(f)
                                                      : a.lo(f) < b.hi(f) && b.lo(f) < a.hi(f);
      if (!meet) return false;
    }
    return true;
  }

  // Side of the cut at c along f: -1 wholly below, 1 wholly at or above, 0 across it.
  [[nodiscard]] int side(const SearchRegion& r, int f, double c) const {
    if (schema_.feature(f).integral() ? r.hi(f) < c : r.hi(f) <= c) return -1;
    return r.lo(f) >= c ? 1 : 0;
  }

  void pairwise(const std::vector<std::size_t>& ids) {
    spend(ids.size() * ids.size() / 2);
    for (std::size_t i = 0; i < ids.size() && found_.first == kNone; ++i)
      for (std::size_t j = i + 1; j < ids.size(); ++j)
        if (overlap(regions_[ids[i]], regions_[ids[j]])) {
          found_ = {std::min(ids[i], ids[j]), std::max(ids[i], ids[j])};
          return;
        }
  }

  // A cut that sends every region below, above or (across it) both ways: an overlapping pair
  // always stays together on some side. The cut with the fewest regions across it, at the
  // median of the lower or of the upper bounds along some feature.
  void cell(std::vector<std::size_t> ids) {
    if (found_.first != kNone) return;
    if (ids.size() <= kSmallCell) return pairwise(ids);
    spend(2 * features_.size() * ids.size());
    int best_f = -1;
    double best_c = 0.0;
    std::size_t best_cost = ids.size();
    std::vector<double> bounds(ids.size());
    for (int f : features_) {
      const double step = schema_.feature(f).integral() ? 1.0 : 0.0;
      for (int upper = 0; upper < 2; ++upper) {
        for (std::size_t k = 0; k < ids.size(); ++k)
          bounds[k] = upper != 0 ? regions_[ids[k]].hi(f) + step : regions_[ids[k]].lo(f);
        std::nth_element(bounds.begin(), bounds.begin() + static_cast<std::ptrdiff_t>(bounds.size() / 2), bounds.end());
        const double c = bounds[bounds.size() / 2];
        std::size_t below = 0, above = 0;
        for (std::size_t id : ids) {
          const int s = side(regions_[id], f, c);
          below += s <= 0 ? 1 : 0;
          above += s >= 0 ? 1 : 0;
        }
        const std::size_t cost = std::max(below, above);
        if (cost < best_cost) best_cost = cost, best_f = f, best_c = c;
      }
    }
    // No cut makes both sides clearly smaller (regions crossing every cut: never a split's).
    if (best_f < 0 || best_cost > ids.size() - ids.size() / 8) return pairwise(ids);
    std::vector<std::size_t> below, above;
    for (std::size_t id : ids) {
      const int s = side(regions_[id], best_f, best_c);
      if (s <= 0) below.push_back(id);
      if (s >= 0) above.push_back(id);
    }
    ids = {};
    cell(std::move(below));
    cell(std::move(above));
  }

  // Bounds the checking of hostile files: bisected regions cost about 2 d n log n.
  void spend(std::size_t work) {
    work_ += work;
    if (work_ > kMaxWork) throw Overlapping{};
  }

  static constexpr std::size_t kMaxWork = std::size_t{1} << 32;
  const std::vector<SearchRegion>& regions_;
  const Schema& schema_;
  std::vector<int> features_;
  std::pair<std::size_t, std::size_t> found_{kNone, kNone};
  std::size_t work_ = 0;

 public:
  struct Overlapping {};  // too entangled to check within the budget
};

}  // namespace

DomainMeasure domain_measure(const SearchQuestion& question) {
  const Schema& schema = question.schema;
  const std::vector<bool>& is_protected = question.problem.protected_mask();
  DomainMeasure d;
  d.points = box_measure(schema, is_protected, {}, {});
  d.exact = d.points < kTwo64;
  for (int f = 0; f < schema.size(); ++f) {
    const Feature& feat = schema.feature(f);
    if (!is_protected[static_cast<std::size_t>(f)] && !feat.integral() && feat.max > feat.min) d.exact = false;
  }
  return d;
}

bool amounts_agree(long double a, long double b, const DomainMeasure& domain) {
  if (domain.exact) return a == b;
  return std::fabs(a - b) <= kRelativeRounding * std::max({std::fabs(a), std::fabs(b), domain.points * 1e-6L});
}

void check_state_accounts(const SearchState& state, const SearchQuestion& question, const std::string& source,
                          const std::string& where) {
  const DomainMeasure domain = domain_measure(question);
  const SearchTally& t = state.tally;
  // Scope 0 is the whole domain for a search in one part, and nothing for a part of a split.
  const long double scope = t.scope > 0.0L || state.parts > 1 ? t.scope : domain.points;
  if (state.parts == 1 && t.scope > 0.0L && !amounts_agree(t.scope, domain.points, domain))
    fail(source, where,
         fmt::format("the scope of a search in one part is {} points, the domain {}", amount(t.scope),
                     amount(domain.points)));
  long double open = 0.0L, open_fair = 0.0L, open_unfair = 0.0L;
  for (const SearchRegion& r : t.left) open += r.measure, open_fair += r.fair, open_unfair += r.unfair;
  if (domain.exact) {
    for (const auto& [name, v] : {std::pair<const char*, long double>{"tally.certified", t.certified},
                                  {"tally.falsified", t.falsified},
                                  {"tally.invalid", t.invalid},
                                  {"tally.scope", t.scope},
                                  {"tally.evicted_measure", t.evicted_measure}})
      if (std::floor(v) != v)
        fail(source, where, fmt::format("{} = {} is not a whole number of points", name, amount(v)));
  }
  if (question.schema.constraints().empty() && t.invalid != 0.0L)
    fail(source, where,
         fmt::format("{} points are said to be no person, but the schema has no rules", amount(t.invalid)));
  const long double accounted = t.certified + t.falsified + t.invalid + open + t.evicted_measure;
  if (!amounts_agree(accounted, scope, domain))
    fail(source, where,
         fmt::format("its points do not add up to its scope of {}: certified {} + falsified {} + invalid {} + {} in "
                     "{} open regions + {} evicted = {}",
                     amount(scope), amount(t.certified), amount(t.falsified), amount(t.invalid), amount(open),
                     t.left.size(), amount(t.evicted_measure), amount(accounted)));
  // What counting found in open regions (kept in the tally as the search goes) is theirs.
  // Counting gives fractional lower bounds even on lattices, summed in another order here.
  auto near = [&scope](long double a, long double b) { return std::fabs(a - b) <= kRelativeRounding * scope; };
  if (!near(t.open_fair, open_fair + t.evicted_fair) || !near(t.open_unfair, open_unfair + t.evicted_unfair))
    fail(source, where,
         fmt::format("tally.open_fair {} and open_unfair {} are not what its open and evicted regions hold ({} and {})",
                     amount(t.open_fair), amount(t.open_unfair), amount(open_fair + t.evicted_fair),
                     amount(open_unfair + t.evicted_unfair)));
  if (t.evicted_fair + t.evicted_unfair > t.evicted_measure * (1.0L + kRelativeRounding))
    fail(source, where, "the evicted regions hold more counted points than points");
  if ((t.evicted > 0) != (t.evicted_measure > 0.0L))
    fail(source, where, fmt::format("{} evicted regions of {} points", t.evicted, amount(t.evicted_measure)));
}

void check_regions_disjoint(const std::vector<SearchRegion>& regions, const SearchQuestion& question,
                            const std::function<std::string(std::size_t)>& name, const std::string& source) {
  const std::vector<bool>& is_protected = question.problem.protected_mask();
  std::pair<std::size_t, std::size_t> pair;
  try {
    pair = OverlapSearch(regions, question.schema, is_protected).run();
  } catch (const OverlapSearch::Overlapping&) {
    fail(source, "open", fmt::format("its {} open regions cross each other too much to be a search's", regions.size()));
  }
  if (pair.first < regions.size())
    fail(source, name(pair.first), fmt::format("overlaps {}: two open regions share points", name(pair.second)));
}

}  // namespace witness
