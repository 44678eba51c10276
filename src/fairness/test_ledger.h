// Internal to the black-box methods (fairness/blackbox*.cpp): the one place that runs tests, so
// that every method counts, de-duplicates, checks discrimination and replays in the same way.
//
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   witness::CommandOracle oracle("python3 examples/blackbox/predict.py", schema, {});
//   witness::TestOptions options;  options.protected_features = {schema.feature_index("age")};
//   witness::Env env;  witness::TestResult result;  result.phases = {{"random", 0, 0}};   // phase 0
//   witness::TestLedger ledger(oracle, schema, options, env, result);
//   std::vector<std::int8_t> verdict;
//   while (!ledger.done()) {                                // THEMIS's loop (blackbox.cpp)
//     Eigen::MatrixXd batch = witness::ordered_seeds(schema, options, 100, ledger.rng()());  // raw in-domain columns
//     ledger.test(batch, /*phase=*/0, verdict);           // 1 discriminatory, 0 fair, -1 not tested
//   }
#pragma once

#include <Eigen/Dense>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <unordered_set>
#include <vector>

#include "core/env.h"
#include "domain/schema.h"
#include "fairness/blackbox.h"
#include "fairness/verdict.h"

namespace witness {

class TestLedger {
 public:
  static constexpr std::int8_t kUntested = -1;

  TestLedger(LabelOracle& oracle, const Schema& schema, const TestOptions& options, Env& env, TestResult& result);

  // Tests the columns of `raw` (in-domain raw values), column j as a test of phases[j]. verdict[j] is 1 when
  // column j's label changes with some other protected combination, 0 when not, kUntested when
  // the budget or time ran out first. A column whose non-protected part was tested before gets the
  // known verdict without counting again; fresh (if given) says which columns counted.
  // With schema constraints, derived features are set from their sources first; a column that
  // still breaks a rule is no test (verdict 0, counted as `invalid`), and a protected combination
  // whose twin breaks one is not compared.
  void test(const Eigen::MatrixXd& proposed, const std::vector<int>& phases, std::vector<std::int8_t>& verdict,
            std::vector<bool>* fresh = nullptr);
  // All columns in one phase.
  void test(const Eigen::MatrixXd& raw, int phase, std::vector<std::int8_t>& verdict,
            std::vector<bool>* fresh = nullptr) {
    test(raw, std::vector<int>(static_cast<std::size_t>(raw.cols()), phase), verdict, fresh);
  }

  // True when the budget is used up, the time limit passed, or the method should stop because
  // nothing new came for a long time (stopped() says which).
  [[nodiscard]] bool done();
  [[nodiscard]] std::int64_t remaining() const;  // tests left in the budget (huge when unlimited)
  void stop(const char* reason);                 // the method ran out of inputs
  // Throws OracleTimeLimit once the time limit has passed (or the run was cancelled): for loops
  // whose single steps are long (gradients of a wide network), which cannot wait for done().
  void check_time() const;

  // Random-pairs mode: each test is compared with one random other protected combination only.
  void compare_one_combination() { one_pair_ = true; }

  [[nodiscard]] const Schema& schema() const { return schema_; }
  [[nodiscard]] const std::vector<bool>& is_protected() const { return is_protected_; }
  [[nodiscard]] const std::vector<Eigen::VectorXd>& combinations() const { return combos_; }
  // Index into combinations() of the protected values of a raw row.
  [[nodiscard]] std::size_t combination_of(const Eigen::Ref<const Eigen::VectorXd>& raw) const;
  [[nodiscard]] std::mt19937_64& rng() { return rng_; }
  [[nodiscard]] LabelOracle& oracle() { return oracle_; }
  [[nodiscard]] const TestResult& result() const { return result_; }
  [[nodiscard]] unsigned threads() const { return env_.threads(); }
  // Rounds integral features and clamps every feature to its bounds.
  void clamp(Eigen::Ref<Eigen::VectorXd> raw) const;
  // Step a local search moves a feature by: 1 for integral features, a twentieth of the range else.
  [[nodiscard]] double step(int feature) const;

 private:
  struct KeyHash {
    const TestLedger* ledger;
    std::size_t operator()(std::int64_t id) const;
  };
  struct KeyEqual {
    const TestLedger* ledger;
    bool operator()(std::int64_t a, std::int64_t b) const;
  };
  [[nodiscard]] const double* key(std::int64_t id) const;
  // How many non-protected parts some valid individual has; -1 when the domain is too large to count.
  [[nodiscard]] long double valid_free_points() const;
  void report(const Eigen::MatrixXd& eval, Eigen::Index row_x, Eigen::Index row_other, int label_x, int label_other,
              int phase, std::int8_t& verdict);
  void progress();

  LabelOracle& oracle_;
  std::unique_ptr<WitnessReplayer> replayer_;  // when the oracle has a model
  const Schema& schema_;
  const TestOptions& options_;
  Env& env_;
  TestResult& result_;
  std::vector<bool> is_protected_;
  std::vector<int> free_features_;  // the non-protected features: a test's identity
  std::vector<Eigen::VectorXd> combos_;
  std::vector<double> strides_;  // combination index = sum (value - min) * stride
  std::mt19937_64 rng_;
  bool one_pair_ = false;
  // Seconds the oracle took per test so far (0 before the first batch): a batch is cut to what the
  // time left affords, so that one batch of a wide network cannot run seconds past the limit.
  double seconds_per_test_ = 0.0;

  // Non-protected parts tested so far, in one arena; the set holds ids (offsets / width). A
  // pending id (key_count_) lets the set look up a candidate before it is stored.
  std::vector<double> keys_;
  std::vector<std::int8_t> known_;  // verdict per id
  std::unordered_set<std::int64_t, KeyHash, KeyEqual> seen_;
  long double free_points_ = 0;  // size of the non-protected domain (infinite with reals)
  std::int64_t stale_ = 0;       // candidates in a row that were not new
  std::chrono::steady_clock::time_point last_progress_;
};

// Seed rows: the dataset's rows in round-robin order over k-means clusters, or (without data)
// `fallback` uniform random points.
Eigen::MatrixXd ordered_seeds(const Schema& schema, const TestOptions& options, Eigen::Index fallback,
                              std::uint64_t seed);

void run_symbgen(TestLedger& ledger, const TestOptions& options);
void run_aequitas(TestLedger& ledger, const TestOptions& options);
void run_adf(TestLedger& ledger, const TestOptions& options);

}  // namespace witness
