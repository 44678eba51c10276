// What a fairness engine answers: a verdict, witness pairs that were replayed on the original
// model, and PyFair's statistics columns.
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   std::vector<int> prot = {schema.feature_index("age")};
//   Eigen::VectorXd raw = witness::load_csv("benchmarks/fairify/data/german.csv", schema).raw.col(0), raw2 = raw;
//   raw2[prot[0]] = 1 - raw[prot[0]];                       // the other age group
//   std::optional<witness::WitnessPair> w = witness::replay_witness(model, schema, prot, schema.to_model(raw),
//                                                                   schema.to_model(raw2));
//   if (w) { /* labels differ in double (w->float32_witness: in float32 too); both lie in the domain */ }
//   witness::FairnessResult r;                              // as an engine returns it (complete_search, ...)
//   std::cout << witness::to_string(r.verdict) << ' ' << witness::exit_code(r.verdict);   // "inconclusive 20"
#pragma once

#include <Eigen/Dense>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "domain/schema.h"
#include "model/model.h"

namespace witness {

enum class Verdict : std::uint8_t { Verified, Witness, Inconclusive };
const char* to_string(Verdict v);
int exit_code(Verdict v);

// A replayed unfairness witness: x and x_prime share every non-protected feature, differ in a
// protected one, lie in the domain, and get different labels from the original model.
struct WitnessPair {
  Eigen::VectorXd x, x_prime;            // model inputs (Schema::to_model of the raw rows)
  Eigen::VectorXd raw, raw_prime;        // raw values, one per schema feature
  int label = 0, label_prime = 0;        // in double
  Eigen::VectorXd output, output_prime;  // the model's outputs in double
  // The pair is also a witness when the model is evaluated in float32 (as most frameworks run
  // it). A near-fair model can differ by less than float32 resolves; the pair is still a witness of
  // the model as computed in double (and exactly).
  bool float32_witness = false;
  // A logit lies closer to the threshold than float32 rounding can resolve (less than 64 float32
  // ulps of the logits' magnitude, or than the observed float32-double gap): float32 labels
  // cannot be trusted either way for this pair.
  bool float32_within_rounding = false;
  // With data rows: the row (0-based) closest to x, by the number of features that differ (those
  // features, in schema order); -1 without data.
  std::int64_t nearest_row = -1;
  std::vector<int> nearest_differs;
};

// The same two people (raw values of x and x'): a witness found twice is reported once.
[[nodiscard]] inline bool same_people(const WitnessPair& a, const WitnessPair& b) {
  return a.raw == b.raw && a.raw_prime == b.raw_prime;
}

// Sets nearest_row and nearest_differs of each witness: the data row (raw, [features][rows]) with
// the fewest features different from x (the first such row).
void find_nearest_rows(const Eigen::MatrixXd& raw_rows, std::vector<WitnessPair>& witnesses);

// Per feature: protected, or derived from a protected feature (a proxy, which changes with it in
// the twin: age_cat follows age).
[[nodiscard]] std::vector<bool> proxy_mask(const Schema& schema, const std::vector<int>& protected_features);

// Replays a candidate pair of model-input vectors on the original model. The raw rows are read
// back with Schema::from_model and re-normalised, so the pair that is returned is exactly what a
// user would feed. Derived features are set from their sources first (Constraints::derive).
// nullopt when the pair is out of the domain, breaks a schema constraint, differs outside the
// protected features (and their proxies), has equal protected values, or its labels do not differ in double;
// float32_witness tells whether float32 evaluation agrees.
std::optional<WitnessPair> replay_witness(const Model& model, const Schema& schema,
                                          const std::vector<int>& protected_features, const Eigen::VectorXd& x,
                                          const Eigen::VectorXd& x_prime);

// The same from raw rows, as the user writes values (schema order): no round trip through model
// inputs, which can move a real value by an ulp and break a rule such as `hirat <= pirat` that the
// row meets with equality. Callers that hold raw values use this one.
std::optional<WitnessPair> replay_witness_raw(const Model& model, const Schema& schema,
                                              const std::vector<int>& protected_features, const Eigen::VectorXd& raw,
                                              const Eigen::VectorXd& raw_prime);

// replay_witness for a caller that replays many pairs on one model: the evaluators (which cast a
// wide network's weights to double and float32) are made once, not per pair. Not thread-safe.
class WitnessReplayer {
 public:
  WitnessReplayer(const Model& model, const Schema& schema, std::vector<int> protected_features);
  ~WitnessReplayer();
  WitnessReplayer(const WitnessReplayer&) = delete;
  WitnessReplayer& operator=(const WitnessReplayer&) = delete;
  [[nodiscard]] std::optional<WitnessPair> replay(const Eigen::VectorXd& x, const Eigen::VectorXd& x_prime);
  [[nodiscard]] std::optional<WitnessPair> replay_raw(Eigen::VectorXd raw, Eigen::VectorXd raw_prime);

 private:
  struct Evaluators;
  const Model& model_;
  const Schema& schema_;
  std::vector<int> protected_features_;
  std::unique_ptr<Evaluators> evaluators_;
};

// PyFair's table columns, plus what a reader needs to trust a verdict.
struct SearchStats {
  std::int64_t frontier = 0;         // FQ: frontier items produced by the initial concolic run
  std::int64_t tests = 0;            // concrete runs (seeds and generated inputs)
  std::int64_t sat = 0, unsat = 0;   // solver outcomes; sat + unsat + unknown = solver calls
  std::int64_t unknown = 0;          // solver gave up (per-query or global time limit)
  std::int64_t guessed = 0;          // Sat answers from a rounded LP point (no exact solver call)
  std::int64_t refuted = 0;          // Unsat answers from LP duals checked exactly (no exact solver call)
  std::int64_t queued = 0;           // frontier items produced in all
  std::int64_t paths = 0;            // distinct complete paths explored
  std::int64_t divergences = 0;      // a solution whose run left the prefix it was solved for
  std::int64_t rejected = 0;         // candidate witnesses that failed replay
  std::int64_t seeds = 0;            // seeds started (concolic engine)
  std::int64_t seeds_exhausted = 0;  // seeds whose protected space was explored to the end, no witness
  bool concretised = false;          // some symbolic value was replaced by its concrete value
  std::int64_t regions = 0;          // complete engine: sub-problems bounded
  std::int64_t leaves = 0;           // complete engine: sub-problems not split further
  std::int64_t checked = 0;          // complete engine --check: closed regions re-proved by Z3
  double seconds = 0.0;
};

// SearchStats' counters by name, once: the `stats` keys of the JSON answer, and with `search.` in
// front the names --stats prints (concretised and seconds are not counters: each writer adds them).
struct SearchStatsField {
  const char* name;
  std::int64_t SearchStats::*field;
};
inline constexpr std::array<SearchStatsField, 16> kSearchStatsFields = {{
    {"frontier", &SearchStats::frontier},
    {"tests", &SearchStats::tests},
    {"sat", &SearchStats::sat},
    {"unsat", &SearchStats::unsat},
    {"unknown", &SearchStats::unknown},
    {"guessed", &SearchStats::guessed},
    {"refuted", &SearchStats::refuted},
    {"queued", &SearchStats::queued},
    {"paths", &SearchStats::paths},
    {"divergences", &SearchStats::divergences},
    {"rejected", &SearchStats::rejected},
    {"seeds", &SearchStats::seeds},
    {"seeds_exhausted", &SearchStats::seeds_exhausted},
    {"regions", &SearchStats::regions},
    {"leaves", &SearchStats::leaves},
    {"checked", &SearchStats::checked},
}};

// Shares of the domain of the non-protected features (integer points; a real feature counts by
// length): certified = no protected change flips the label there, falsified = proven to flip (for
// some protected change), undecided = the rest. They add up to 1; a finished run has undecided 0.
// The falsified share estimated from points drawn at random in the regions left undecided (each
// weighing its measure) and decided exactly: `share`, within [lo, hi] at `confidence`
// (Clopper-Pearson), clipped to the sound [falsified, falsified + undecided].
struct ShareEstimate {
  double share = 0.0, lo = 0.0, hi = 0.0;
  double confidence = 0.95;
  std::int64_t samples = 0, unfair = 0;  // points drawn and decided, and the unfair ones among them
};

struct DomainShare {
  bool measured = false;  // only the complete engine measures
  double certified = 0.0, falsified = 0.0, undecided = 1.0;
  // Integer domains: the number of points (non-protected features), and of the falsified ones
  // when the run finished (exact: every region was closed by bounds or by enumeration).
  long double points = 0.0L, falsified_points = 0.0L;
  bool exact = false;
  std::optional<ShareEstimate> estimate;  // quantify runs that stop with points undecided
};

// A box of the domain (raw bounds per schema feature; protected features span their domain) and
// what is known of it: `falsified` of its points change label for some protected change, `undecided`
// are not known either way (shares of the whole domain; share = the box's own share).
struct RegionReport {
  Eigen::VectorXd lo, hi;
  double share = 0.0, falsified = 0.0, undecided = 0.0;
  long double points = 0.0L;   // integer points in the box (real features: not counted)
  bool all_falsified = false;  // every point of the box changes label
};

// A real feature's interval as answers show it: "bmi in [28.58, 42.2]", each end rounded outward to
// four significant digits, so that the text holds the interval it names.
[[nodiscard]] std::string real_interval_text(const std::string& name, double lo, double hi);

// The region as a readable rule over the features it restricts, protected ones left out:
// "month 35..80, credit_amount 0..7, purpose in {A40, A41}" ("the whole domain" if none).
std::string region_rule(const Schema& schema, const RegionReport& region, const std::vector<int>& protected_features);

// Where the falsified individuals are, feature by feature: for each non-protected feature, its
// values in ranges (one per value up to 16 values, else 16 ranges), each with the share of the
// falsified individuals and the share of the domain it holds. Approximate where counting left the
// falsified points of a box unknown (they are spread evenly over it); exact for boxes closed by
// the bounds and for enumerated points.
struct FeatureMarginal {
  int feature = 0;
  std::vector<double> lo, hi;             // raw range of each bin
  std::vector<double> falsified, domain;  // shares of the falsified individuals / of the domain
};

// Rows of a data set checked exactly against every protected value (--data).
struct DataShare {
  bool measured = false;
  std::int64_t rows = 0, unfair = 0;
  std::string source;
  std::vector<std::string> row_labels;  // how answers name each row, when not by number (Dataset::row_labels)
};

struct FairnessResult {
  Verdict verdict = Verdict::Inconclusive;
  std::string engine;
  bool exhaustive = false;  // the search space was explored to the end (Corollary 4.2)
  // Verified only because no pair can be compared: the schema's rules leave no person, or no two
  // that differ only in the protected features (twins.h); `reason` says which.
  bool vacuous = false;
  std::string reason;                  // why the verdict is inconclusive (or vacuous), in words
  std::vector<WitnessPair> witnesses;  // replayed, distinct points x; empty unless verdict == Witness
  // How many were asked for (--max-witnesses), and why fewer were found when they were: "" when
  // all asked for were found, else e.g. "these are all the unfair points" or "the time limit".
  int witnesses_asked = 1;
  std::string witnesses_note;
  SearchStats stats;
  DomainShare share;
  std::string phase;  // auto engine: "falsification" or "complete" (which phase decided)
  // Complete engine with quantify: falsified and undecided boxes, merged where adjacent, largest
  // falsified share first (at most CompleteSearchOptions::max_regions).
  std::vector<RegionReport> regions;
  std::vector<FeatureMarginal> marginals;  // quantify: where the falsified individuals are
  DataShare data;
};

}  // namespace witness
