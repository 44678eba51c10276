// Black-box fairness testing: generate many unique test inputs and report those whose label
// changes with the protected attributes. Methods: SymbGen (local explanation + symbolic toggling,
// docs/blackbox.md), THEMIS (uniform random), AEQUITAS (random, then directed local walks), ADF
// (gradient-guided, white-box) and random pairs.
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   witness::Env env;
//   witness::ModelOracle oracle(model, schema, env.threads());
//   witness::TestOptions o;                      // o.seeds = &data.raw: dataset rows for seeds and sampling
//   o.method = witness::TestMethod::SymbGen;
//   o.protected_features = {schema.feature_index("sex")};
//   o.on_pair = [&](const witness::DiscriminatoryPair& p) { std::cout << schema.display_row(p.x) << '\n'; };
//   witness::TestResult r = witness::run_test(oracle, schema, o, env);   // r.discriminatory of r.generated
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/choice.h"
#include "core/env.h"
#include "core/options.h"
#include "domain/schema.h"
#include "fairness/oracle.h"

namespace witness {

enum class TestMethod : std::uint8_t { SymbGen, Themis, Aequitas, Adf, RandomPairs };
inline constexpr Choices<TestMethod, 5> kTestMethods{{{{TestMethod::SymbGen, "symbgen"},
                                                       {TestMethod::Themis, "themis"},
                                                       {TestMethod::Aequitas, "aequitas"},
                                                       {TestMethod::Adf, "adf"},
                                                       {TestMethod::RandomPairs, "random-pairs"}}},
                                                     "method"};
[[nodiscard]] inline const char* to_string(TestMethod m) { return kTestMethods.name(m); }
[[nodiscard]] inline TestMethod parse_test_method(const std::string& name) {
  return kTestMethods.parse(name, "--method");
}

// A test input (raw values) and the protected variant that the model labels differently.
struct DiscriminatoryPair {
  Eigen::VectorXd x, x_prime;
  int label = 0, label_prime = 0;
  int phase = 0;  // index into TestResult::phases
};

struct TestProgress {
  std::int64_t generated = 0, discriminatory = 0, budget = 0;
  double seconds = 0;
};

struct TestOptions {
  TestMethod method = TestMethod::SymbGen;
  std::vector<int> protected_features;
  std::int64_t budget = 1000;                              // unique tests (#Gen); 0 = until the time limit
  const Eigen::MatrixXd* seeds = nullptr;                  // dataset rows [features][n] (symbgen, adf seeds)
  int clusters = 4;                                        // k-means clusters of the seeds, taken round-robin
  double t1 = 0.3;                                         // symbgen: directed search toggles confidence < t1
  double t2 = 0.2;                                         // symbgen: undirected search toggles confidence > t2
  int explanation_samples = 5000;                          // symbgen: perturbations per explanation (LIME's default)
  int tree_depth = 8;                                      // symbgen: depth of the local CART tree
  std::function<void(const DiscriminatoryPair&)> on_pair;  // every replayed discriminatory pair
  std::function<void(const TestProgress&)> on_progress;    // about 5 times a second
};

// The options of TestOptions that a user sets, declared once (the CLI's test flags come from here).
using TestOption = SettingOption<TestOptions>;
const std::vector<TestOption>& test_options();

struct TestPhase {
  std::string name;  // symbgen: seed, directed, undirected; aequitas/adf: global, local; else random
  std::int64_t generated = 0, discriminatory = 0;
};

struct TestResult {
  TestMethod method = TestMethod::SymbGen;
  std::int64_t generated = 0;       // #Gen: unique non-protected parts tested
  std::int64_t discriminatory = 0;  // #InDi: those with a label change
  std::vector<TestPhase> phases;
  std::int64_t queries = 0;     // rows the oracle labelled (tests, protected variants, explanations)
  std::int64_t duplicates = 0;  // generated inputs dropped as already tested
  std::int64_t rejected = 0;    // label changes that did not replay on the model (then not counted)
  std::int64_t invalid = 0;     // proposed inputs that broke a schema constraint (not tests)
  std::string stopped;          // "budget", "time limit", "exhausted" (the method ran out of inputs)
  double seconds = 0;
};

// Every discriminatory pair is replayed on oracle.model() when there is one. Throws InputError for
// an unusable set-up (a real protected feature, ADF without weights, seeds of the wrong width).
TestResult run_test(LabelOracle& oracle, const Schema& schema, const TestOptions& options, Env& env);

}  // namespace witness
