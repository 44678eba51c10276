// What a saved search state must satisfy before any of it is believed: its accounts balance (the
// measure it closed, found invalid, holds open and evicted adds up to its scope: exactly, in whole
// points, where the domain is a lattice of fewer than 2^64 points) and its open regions lie inside
// the domain without overlapping. A tampered or mixed-up file fails here with exit 2 naming the part
// and the region, instead of merging or resuming to a wrong exact count. Verdicts of closed regions
// are still taken on trust (the output says so).
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   const witness::FairnessProblem problem(model, schema, {"age"});
//   witness::SearchQuestion q{problem, true};
//   witness::SearchState s = witness::read_search_state("run.ckpt.json", q);  // checks both below
//   witness::check_state_accounts(s, q, "run.ckpt.json");  // InputError when they do not balance
//   witness::check_regions_disjoint(s.tally.left, q, [](std::size_t k) { return std::to_string(k); }, "run.ckpt.json");
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "fairness/complete/region.h"
#include "fairness/complete/search/search_state.h"

namespace witness {

// The measure of the question's whole domain, and whether its amounts are whole points that long
// double holds exactly (every non-protected feature integral, fewer than 2^64 points).
struct DomainMeasure {
  long double points = 0.0L;
  bool exact = false;
};
[[nodiscard]] DomainMeasure domain_measure(const SearchQuestion& question);

// Two amounts that must agree: equal where the domain is exact, within rounding otherwise.
[[nodiscard]] bool amounts_agree(long double a, long double b, const DomainMeasure& domain);

// certified + falsified + invalid + open regions' measure + evicted measure = scope; what counting
// found in open and evicted regions matches open_fair/open_unfair; whole numbers where exact; no
// invalid points without rules. `where` names the state ("part 2").
void check_state_accounts(const SearchState& state, const SearchQuestion& question, const std::string& source,
                          const std::string& where = "state");

// No two regions share a point (integer features: a common value; real ones: a common interval
// of positive length). A k-d partition of the regions by their bounds, pairwise checks in small
// cells; `name(k)` names region k in the message.
void check_regions_disjoint(const std::vector<SearchRegion>& regions, const SearchQuestion& question,
                            const std::function<std::string(std::size_t)>& name, const std::string& source);

}  // namespace witness
