// Saved searches: a search stopped after any number of regions and continued from its saved state
// (through the file format, as --checkpoint and --resume do) ends with the uninterrupted run's
// exact counts, for networks and trees, also when divided into pieces continued apart (mpirun's
// stealing); sub-problem states join; hostile state files are input errors naming the file; the
// binary form of MPI messages carries the same state, and malformed messages are refused alike.
#include "fairness/complete/search/search_state.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "fairness/complete/complete_search.h"
#include "fairness/complete/network/network_regions.h"
#include "fairness/complete/search/region_scheduler.h"
#include "fairness/complete/search/search_state_bytes.h"
#include "fairness/complete/search/state_checks.h"
#include "fairness/complete/trees/tree_search.h"
#include "support/sanitized.h"
#include "support/tiny_networks.h"

namespace witness {
namespace {

// The real evaluator, with the run cancelled once `budget` regions were refined: a search stopped
// at a chosen point, as a time limit or a lost machine would stop it.
class CancelAfter final : public RegionEvaluator {
 public:
  CancelAfter(const RegionEvaluator& inner, std::atomic<bool>& cancel, int budget)
      : inner_(inner), cancel_(cancel), budget_(budget) {}
  [[nodiscard]] const FairnessProblem& problem() const override { return inner_.problem(); }
  [[nodiscard]] long double domain_points() const override { return inner_.domain_points(); }
  [[nodiscard]] bool real_domain() const override { return inner_.real_domain(); }
  [[nodiscard]] SearchRegion whole() const override { return inner_.whole(); }
  [[nodiscard]] std::size_t max_open() const override { return inner_.max_open(); }
  [[nodiscard]] std::unique_ptr<RegionScratch> scratch() const override { return inner_.scratch(); }
  [[nodiscard]] RegionOutcome begin(SearchRegion whole, RegionScratch* s) const override {
    return inner_.begin(std::move(whole), s);
  }
  [[nodiscard]] RegionOutcome refine(const SearchRegion& r, RegionScratch* s) const override {
    if (++done_ >= budget_) cancel_ = true;
    return inner_.refine(r, s);
  }
  [[nodiscard]] std::vector<PointVerdict> decide_points(const Eigen::MatrixXd& raw, RegionScratch* s) const override {
    return inner_.decide_points(raw, s);
  }
  [[nodiscard]] std::string unreplayed(long double falsified) const override { return inner_.unreplayed(falsified); }
  void record_stats(Env& env, const SearchTally& tally) const override { inner_.record_stats(env, tally); }

 private:
  const RegionEvaluator& inner_;
  std::atomic<bool>& cancel_;
  int budget_;
  mutable std::atomic<int> done_{0};
};

std::unique_ptr<RegionEvaluator> evaluator_for(const FairnessProblem& problem, const CompleteSearchOptions& o,
                                               const SearchSignals& signals, bool trees) {
  if (trees) return tree_regions(problem, o, signals);
  std::string why;
  return std::make_unique<NetworkRegions>(problem, o, *relu_network_of(problem.model(), &why), signals);
}

// t's quantification continued from `state` (nullopt: from the start) for `budget` refinements, and
// its state read back from its text, as a resumed run reads it.
SearchState continue_for(const test::Tiny& t, bool trees, const CompleteSearchOptions& o,
                         std::optional<SearchState> state, int budget, unsigned threads) {
  const FairnessProblem problem = test::problem_of(t);
  const SearchQuestion question{problem, true};
  std::atomic<bool> cancel{false};
  CompleteSearchOptions oc = o;
  oc.cancel = &cancel;
  SearchSignals signals(oc.max_witnesses);
  const std::unique_ptr<RegionEvaluator> inner = evaluator_for(problem, oc, signals, trees);
  const CancelAfter regions(*inner, cancel, budget);
  Env env = test::make_env("60", threads);
  RegionScheduler scheduler(regions, signals, oc, env);
  return parse_search_state(search_state_text(scheduler.search(std::move(state)), question), "round.json", question);
}

// The answer of a finished state (one run's, resumed or joined) must be the straight run's: the same
// exact counts, verdict and regions (every region refined once).
void expect_answer_of(const test::Tiny& t, bool trees, SearchState finished, const FairnessResult& straight) {
  const CompleteSearchOptions o = test::quantify_options(t);
  SearchSignals signals(o.max_witnesses);
  const FairnessProblem problem = test::problem_of(t);
  const std::unique_ptr<RegionEvaluator> regions = evaluator_for(problem, o, signals, trees);
  Env env = test::make_env("60", 1);
  const FairnessResult joined = RegionScheduler(*regions, signals, o, env).answer(std::move(finished));
  EXPECT_TRUE(joined.share.exact) << joined.reason;
  EXPECT_EQ(joined.share.falsified_points, straight.share.falsified_points);
  EXPECT_EQ(joined.share.points, straight.share.points);
  EXPECT_EQ(joined.share.certified, straight.share.certified);
  EXPECT_EQ(joined.verdict, straight.verdict);
  EXPECT_EQ(joined.stats.regions, straight.stats.regions) << "every region refined once";
}

// Runs t's quantification in rounds of `budget` refinements, each round a new scheduler continuing
// from the previous round's state read back from its text; the joined answer must equal one run's.
void expect_resumed_counts(const test::Tiny& t, bool trees, int budget, unsigned threads) {
  SCOPED_TRACE(t.name + " budget " + std::to_string(budget) + " threads " + std::to_string(threads));
  const CompleteSearchOptions o = test::quantify_options(t);
  Env straight_env = test::make_env("60", threads);
  const FairnessProblem problem = test::problem_of(t);
  const FairnessResult straight = complete_search(problem, o, straight_env);
  ASSERT_TRUE(straight.share.exact) << straight.reason;
  std::optional<SearchState> state;
  int rounds = 0;
  for (; rounds < 2000; ++rounds) {
    state = continue_for(t, trees, o, std::move(state), budget, threads);
    if (state->tally.left.empty()) break;
  }
  ASSERT_TRUE(state->tally.left.empty()) << "not finished after " << rounds << " rounds";
  expect_answer_of(t, trees, std::move(*state), straight);
  if (straight.stats.regions > 8 * static_cast<std::int64_t>(budget)) {  // a refinement evaluates up to two regions
    EXPECT_GT(rounds, 2) << "the search was not stopped mid-way";
  }
}

TEST(SearchState, StoppedAndResumedNetworkSearchesEndWithTheSameCounts) {
  for (std::uint64_t seed = 1; seed <= test::sized<std::uint64_t>(3, 2); ++seed) {  // seed 2 with 2 threads
    const test::Tiny t = test::medium_tiny(seed);
    expect_resumed_counts(t, false, 3, seed == 2 ? 2 : 1);
    expect_resumed_counts(t, false, 40, 2);
  }
  for (int i : {0, 5, 10}) expect_resumed_counts(test::random_tiny(i), false, 1, 1);
}

// Enough values that the trees' boxes take many rounds.
constexpr const char* kTreeDomain = R"(
name = "tree_domain"
protected = ["p"]
features = [
  { name = "a", kind = "integer", min = 0, max = 60 },
  { name = "b", kind = "integer", min = -20, max = 20, mean = 1, std = 4 },
  { name = "k", kind = "categorical", categories = ["u", "v", "w"] },
  { name = "p", kind = "boolean" },
]
)";

TEST(SearchState, StoppedAndResumedTreeSearchesEndWithTheSameCounts) {
  for (std::uint64_t seed : {1, 2, 3}) {
    expect_resumed_counts(test::random_forest(kTreeDomain, seed, seed == 2, true), true, 3, seed == 3 ? 2 : 1);
  }
  for (std::uint64_t seed : {1, 2}) {
    expect_resumed_counts(test::random_forest(test::kCategoricalMiddle, seed, false, true), true, 2, 1);
    expect_resumed_counts(test::random_forest(test::kTwoProtected, seed, true, false), true, 5, 2);
  }
}

// Runs t's quantification as rank 0 of mpirun does when it steals: each state is continued for
// `budget` refinements, and one left unfinished is divided into 2 or 3 pieces (what was closed
// apart), each continued on its own through the file format; the pieces joined must answer as one run.
void expect_divided_counts(const test::Tiny& t, bool trees, int budget) {
  SCOPED_TRACE(t.name + " budget " + std::to_string(budget));
  const CompleteSearchOptions o = test::quantify_options(t);
  Env straight_env = test::make_env("60", 1);
  const FairnessProblem problem = test::problem_of(t);
  const FairnessResult straight = complete_search(problem, o, straight_env);
  ASSERT_TRUE(straight.share.exact) << straight.reason;
  std::vector<std::optional<SearchState>> pending{std::nullopt};
  std::vector<SearchState> done;
  int divided = 0;
  SearchSignals whole_signals(o.max_witnesses);
  const long double domain_points = evaluator_for(problem, o, whole_signals, trees)->domain_points();
  for (int rounds = 0; !pending.empty(); ++rounds) {
    ASSERT_LT(rounds, 5000) << "not finished";
    std::optional<SearchState> state = std::move(pending.back());
    pending.pop_back();
    SearchState end = continue_for(t, trees, o, std::move(state), budget, 1);
    if (end.tally.left.empty()) {
      done.push_back(std::move(end));
      continue;
    }
    ++divided;
    std::vector<SearchState> pieces = divide_search_state(std::move(end), 2 + rounds % 2, domain_points, true);
    EXPECT_TRUE(pieces[0].tally.left.empty()) << "the closed piece holds no open region";
    done.push_back(std::move(pieces[0]));
    for (std::size_t k = 1; k < pieces.size(); ++k)
      if (!pieces[k].tally.left.empty()) pending.emplace_back(std::move(pieces[k]));
  }
  for (std::size_t k = 0; k < done.size(); ++k) {
    done[k].part = static_cast<int>(k);
    done[k].parts = static_cast<int>(done.size());
  }
  const SearchQuestion question{problem, true};
  expect_answer_of(t, trees, join_search_states(std::move(done), {}, question), straight);
  if (straight.stats.regions > 8 * static_cast<std::int64_t>(budget)) {
    EXPECT_GT(divided, 2) << "no state was divided";
  }
}

TEST(SearchState, DividedStatesContinuedApartEndWithTheSameCounts) {
  for (std::uint64_t seed : {1, 2}) expect_divided_counts(test::medium_tiny(seed), false, 5);
  for (std::uint64_t seed : {1, 2})
    expect_divided_counts(test::random_forest(kTreeDomain, seed, seed == 2, true), true, 4);
  expect_divided_counts(test::random_forest(test::kTwoProtected, 1, true, false), true, 3);
}

// A finished search's state, saved and read back, and states of sub-problems.
struct Saved {
  test::Tiny t = test::medium_tiny(7);
  FairnessProblem problem = test::problem_of(t);
  SearchQuestion question{problem, true};
  std::string text;
  Saved() {
    CompleteSearchOptions o;
    o.quantify = true;
    std::atomic<bool> cancel{false};
    o.cancel = &cancel;
    SearchSignals signals(o.max_witnesses);
    const std::unique_ptr<RegionEvaluator> inner = evaluator_for(problem, o, signals, false);
    const CancelAfter regions(*inner, cancel, 4);
    Env env = test::make_env("60", 1);
    text = search_state_text(RegionScheduler(regions, signals, o, env).search(), question);
  }
};

TEST(SearchState, TextRoundTripsExactly) {
  const Saved s;
  const SearchState a = parse_search_state(s.text, "a.json", s.question);
  EXPECT_FALSE(a.tally.left.empty());
  EXPECT_EQ(search_state_text(a, s.question), s.text);
}

// text with its first `prefix`, and what follows up to and including the first `until` after it
// ('\0': nothing more), replaced by `to`. (No std::regex: GCC 12 warns inside it under ASan.)
std::string replaced(std::string text, const std::string& prefix, const std::string& to, char until = '\0') {
  const std::size_t at = text.find(prefix);
  EXPECT_NE(at, std::string::npos) << prefix;
  if (at == std::string::npos) return text;
  std::size_t end = at + prefix.size();
  if (until != '\0') end = text.find(until, end) + 1;
  text.replace(at, end - at, to);
  return text;
}

// `input` read as a state from `source` (the JSON form, or the binary one of MPI messages) must be
// refused with an input error naming the source and saying `needle`.
void expect_refused(const std::string& input, const SearchQuestion& q, const std::string& needle, bool bytes = false) {
  const std::string source = bytes ? "rank 3's result" : "bad.json";
  try {
    (void)(bytes ? parse_search_state_bytes(input, source, q) : parse_search_state(input, source, q));
    ADD_FAILURE() << "accepted: " << needle;
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(source), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
  }
}

TEST(SearchState, HostileStatesAreInputErrors) {
  const Saved s;
  const SearchQuestion& q = s.question;
  expect_refused("", q, "not a witness search state");
  expect_refused(s.text.substr(0, s.text.size() / 2), q, "not a witness search state");
  expect_refused(std::string(100000, '[') + std::string(100000, ']'), q, "nested deeper than");
  expect_refused(replaced(s.text, "\"version\":2", "\"version\":7"), q, "version");
  expect_refused(replaced(s.text, "\"part\":0", "\"part\":3"), q, "part");
  expect_refused(replaced(s.text, R"("open":[{"lo":[)", R"("open":[{"lo":[-99,)", ','), q, "outside its domain");
  expect_refused(replaced(s.text, R"("open":[{"lo":[)", R"("open":[{"lo":[0.5,)", ','), q, "open[0].lo");
  expect_refused(replaced(s.text, R"("open":[{"lo":[)", R"("open":[{"lo":[)", ','), q, "one per feature");
  expect_refused(replaced(s.text, R"("hi":[)", R"("hi":[-1,)", ','), q, "hi");
  expect_refused(replaced(s.text, R"("pairs":[)", R"("pairs":[3,)"), q, "pair");
  expect_refused(replaced(s.text, R"(,"fair":")", R"(,"fair":"0x1p+90")", '"'), q, "more points than the domain");
  expect_refused(replaced(s.text, R"("unfair_samples":)", R"("unfair_samples":3})", '}'), q, "more unfair samples");
  expect_refused(replaced(s.text, R"("rate":")", R"("rate":"-0x1p+1")", '"'), q, "evicted_sample.rate");
  const std::size_t open_at = s.text.find(R"("open":[)");  // an open region's own counts
  expect_refused(
      s.text.substr(0, open_at) + replaced(s.text.substr(open_at), R"("fair":")", R"("fair":"0x1p+90")", '"'), q,
      "fair + unfair exceed");
  expect_refused(replaced(s.text, R"("certified":")", R"("certified":"-0x1p+3")", '"'), q, "tally.certified");
  expect_refused(replaced(s.text, R"("certified":")", R"("certified":"nan")", '"'), q, "tally.certified");
  expect_refused(replaced(s.text, R"("certified":")", R"("certified":"0x1p+200")", '"'), q, "more points closed");
  expect_refused(replaced(s.text, R"("witnesses":[)", R"("witnesses":[{"raw":[0,0,0,0,0],"raw_prime":[0,0,0,0,1]},)"),
                 q, "does not replay");
  expect_refused(replaced(s.text, R"("open":[)", R"("open":7,"x":[)"), q, "open");
  // Another question: the other protected value set, or without --quantify.
  const SearchQuestion verdict_only{s.problem, false};
  expect_refused(s.text, verdict_only, "saved for another question");
  const test::Tiny other = test::medium_tiny(8);
  const FairnessProblem other_problem = test::problem_of(other);
  const SearchQuestion other_model{other_problem, true};
  expect_refused(s.text, other_model, "saved for another model");
}

// The probe's tampered states: each balanced account or region broken alone is refused, naming
// what does not add up, before any of it reaches a count.
TEST(SearchState, TamperedStatesAreRefused) {
  const Saved s;
  // Refined further, so that the state has closed points as well as open regions.
  const SearchState honest =
      continue_for(s.t, false, test::quantify_options(s.t), parse_search_state(s.text, "a.json", s.question), 40, 1);
  ASSERT_GE(honest.tally.left.size(), 2U);
  ASSERT_GE(honest.tally.certified + honest.tally.falsified, 1.0L);
  struct Tamper {
    const char* what;
    std::function<void(SearchState&)> change;
    const char* needle;
  };
  // Taken from whichever closed amount holds it (a short search certifies little).
  auto take = [](SearchTally& t, long double v) { (t.certified >= v ? t.certified : t.falsified) -= v; };
  const std::vector<Tamper> tampers = {
      {"one point more falsified", [](SearchState& b) { b.tally.falsified += 1.0L; }, "do not add up"},
      {"half a point more certified", [](SearchState& b) { b.tally.certified += 0.5L; }, "not a whole number"},
      {"everything certified, nothing falsified",
       [&](SearchState& b) {
         b.tally.certified = domain_measure(s.question).points;
         b.tally.falsified = 0.0L;
       },
       "do not add up"},
      {"no open regions", [](SearchState& b) { b.tally.left.clear(); }, "do not add up"},
      {"a region twice", [](SearchState& b) { b.tally.left.push_back(b.tally.left.front()); }, "do not add up"},
      {"the largest region replaced by the smallest, the difference certified",
       [](SearchState& b) {
         auto& open = b.tally.left;
         const auto [small, large] =
             std::minmax_element(open.begin(), open.end(),
                                 [](const SearchRegion& x, const SearchRegion& y) { return x.measure < y.measure; });
         b.tally.certified += large->measure - small->measure;
         b.tally.open_fair += small->fair - large->fair;
         b.tally.open_unfair += small->unfair - large->unfair;
         *large = *small;
       },
       "overlaps"},
      {"a region widened to the domain",
       [&](SearchState& b) {
         SearchRegion& r = b.tally.left.front();
         for (int f = 0; f < s.t.schema.size(); ++f) r.lo(f) = s.t.schema.feature(f).min;
         for (int f = 0; f < s.t.schema.size(); ++f) r.hi(f) = s.t.schema.feature(f).max;
       },
       "do not add up"},
      {"points moved to invalid",
       [&](SearchState& b) {
         b.tally.invalid += 1.0L;
         take(b.tally, 1.0L);
       },
       "the schema has no rules"},
      {"open counts inflated", [](SearchState& b) { b.tally.open_fair += 1000.0L; }, "open_fair"},
      {"a scope of 7 points", [](SearchState& b) { b.tally.scope = 7.0L; }, "more points closed"},
      {"a part's scope for the whole", [](SearchState& b) { b.tally.scope -= 1.0L; }, "scope"},
  };
  for (const Tamper& t : tampers) {
    SCOPED_TRACE(t.what);
    SearchState bad = honest;
    t.change(bad);
    expect_refused(search_state_text(bad, s.question), s.question, t.needle);
  }
}

TEST(SearchState, SubProblemStatesJoinOnlyWhenComplete) {
  const Saved s;
  SearchState a = parse_search_state(s.text, "a.json", s.question);
  SearchState b = a;
  a.parts = b.parts = 2;
  b.part = 1;
  b.tally = SearchTally{};
  a.tally.scope = domain_measure(s.question).points;  // a part of a split holds its scope: all of it here
  EXPECT_THROW((void)join_search_states({a}, {"a"}, s.question), InputError);
  EXPECT_THROW((void)join_search_states({a, a}, {"a", "a"}, s.question), InputError);
  const SearchState joined = join_search_states({a, b}, {"a", "b"}, s.question);
  EXPECT_EQ(joined.parts, 1);
  EXPECT_EQ(joined.tally.certified, a.tally.certified);
  EXPECT_EQ(joined.tally.left.size(), a.tally.left.size());
}

TEST(SearchState, BytesRoundTripExactly) {
  const Saved s;
  const SearchState a = parse_search_state(s.text, "a.json", s.question);
  const std::string bytes = search_state_bytes(a, s.question);
  const SearchState b = parse_search_state_bytes(bytes, "rank 1's result", s.question);
  ASSERT_EQ(b.tally.left.size(), a.tally.left.size());
  for (std::size_t k = 0; k < a.tally.left.size(); ++k) EXPECT_EQ(b.tally.left[k].measure, a.tally.left[k].measure);
  EXPECT_EQ(search_state_text(b, s.question), s.text);
}

void expect_bytes_refused(const std::string& bytes, const SearchQuestion& q, const std::string& needle) {
  expect_refused(bytes, q, needle, true);
}

TEST(SearchState, HostileBytesAreInputErrors) {
  const Saved s;
  const SearchQuestion& q = s.question;
  const std::string bytes = search_state_bytes(parse_search_state(s.text, "a.json", q), q);
  expect_bytes_refused("", q, "not a witness search state message");
  expect_bytes_refused(s.text, q, "not a witness search state message");
  for (std::size_t cut = 1; cut < bytes.size(); cut += 1 + bytes.size() / 97) {
    SCOPED_TRACE(cut);
    EXPECT_THROW((void)parse_search_state_bytes(bytes.substr(0, cut), "cut", q), InputError);
  }
  expect_bytes_refused(bytes + "x", q, "bytes after the last region");
  // The first open region's first bound, right after the region count.
  const std::size_t magic = bytes.find('\n') + 1;
  std::uint64_t text_size = 0;
  std::memcpy(&text_size, bytes.data() + magic, sizeof text_size);
  const std::size_t count_at = magic + sizeof text_size + text_size, lo_at = count_at + sizeof(std::uint64_t);
  auto with = [&bytes](std::size_t at, auto value) {
    std::string b = bytes;
    std::memcpy(b.data() + at, &value, sizeof value);
    return b;
  };
  expect_bytes_refused(with(lo_at, -99.0), q, "outside its domain");
  expect_bytes_refused(with(lo_at, std::nan("")), q, "not a finite number");
  expect_bytes_refused(with(count_at, std::uint64_t{1} << 40), q, "more than a state holds");
  expect_bytes_refused(with(count_at, std::uint64_t{1} << 20), q, "ends early");
  const test::Tiny other = test::medium_tiny(8);
  const FairnessProblem other_problem = test::problem_of(other);
  expect_bytes_refused(bytes, SearchQuestion{other_problem, true}, "saved for another");
}

}  // namespace
}  // namespace witness
