// Tiny networks whose whole domain can be enumerated, and the brute-force truth about their
// fairness, shared by the fairness engines' and the tree queries' tests. The functions live in
// tiny_networks.cpp, which the sanitized build compiles hot (-O1) in a fairness driver otherwise cold
// (-O0): their brute force runs point by point (tests/CMakeLists.txt, hot_tests_fairness).
//
//   const witness::test::Tiny t = witness::test::random_tiny(7);   // or hand_made("rare")
//   const witness::test::Truth truth = witness::test::brute_force(t);
//   // truth.pairs == 0: t.model is fair on t.schema w.r.t. t.prot; else truth.witnesses lists pairs
//   witness::test::expect_real_witness(t, truth, result.witnesses[0]);
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/env.h"
#include "domain/schema.h"
#include "fairness/complete/options.h"
#include "fairness/problem.h"
#include "fairness/verdict.h"
#include "model/evaluator.h"
#include "model/model.h"

namespace witness::test {

// ---------------------------------------------------------------------------------------------
// Tiny networks whose whole domain can be enumerated. Every weight is a small dyadic rational and
// the output bias carries an extra 2^-14, so every logit is exact in double, float32 and the
// solver's rationals, and is never exactly on the threshold: brute force in double is the truth.

// Boolean protected feature, last.
inline constexpr const char* kBoolLast = R"(
name = "bool_last"
protected = ["p"]
features = [
  { name = "a", kind = "integer", min = 0, max = 3 },
  { name = "b", kind = "integer", min = 0, max = 3 },
  { name = "c", kind = "integer", min = 0, max = 2 },
  { name = "p", kind = "boolean" },
]
)";

// Categorical protected feature with 3 values (one model input holding the code), in the middle;
// a normalised integer after it.
inline constexpr const char* kCategoricalMiddle = R"(
name = "categorical_middle"
protected = ["g"]
features = [
  { name = "a", kind = "integer", min = 0, max = 4 },
  { name = "g", kind = "categorical", categories = ["x", "y", "z"] },
  { name = "b", kind = "integer", min = -2, max = 2, scale = 0.5, offset = -1 },
]
)";

// One-hot categorical protected feature with 3 values, first.
inline constexpr const char* kOneHotFirst = R"(
name = "one_hot_first"
protected = ["g"]
features = [
  { name = "g", kind = "categorical", categories = ["x", "y", "z"], encoding = "one-hot" },
  { name = "a", kind = "integer", min = 0, max = 3 },
  { name = "b", kind = "integer", min = 0, max = 3 },
]
)";

// Two protected features (a boolean and a categorical with 3 values) and a mean/std normalisation.
inline constexpr const char* kTwoProtected = R"(
name = "two_protected"
protected = ["s", "r"]
features = [
  { name = "s", kind = "boolean" },
  { name = "a", kind = "integer", min = 0, max = 3 },
  { name = "r", kind = "categorical", categories = ["u", "v", "w"] },
  { name = "b", kind = "integer", min = 0, max = 2, mean = 1, std = 2 },
]
)";

inline constexpr double kOffset = 1.0 / 16384;  // 2^-14: finer than any logit's resolution here

struct Tiny {
  std::string name;
  Schema schema;
  Model model;
  std::vector<int> prot;
};

inline Schema schema_of(const char* toml) { return parse_schema(toml, "tiny.toml"); }

std::vector<std::string> names_of(const Tiny& t);

// The question engines and data-row functions are asked about t (t must outlive it).
inline FairnessProblem problem_of(const Tiny& t) { return {t.model, t.schema, names_of(t)}; }

// The complete engine quantifying t over its protected features.
CompleteSearchOptions quantify_options(const Tiny& t);

std::vector<bool> protected_model_inputs(const Schema& s, const std::vector<int>& prot);

// A random ReLU network: weights and biases in [-1, 1] in steps of 1/8; the first layer's protected
// columns multiplied by `prot_scale` (1, 1/4 or 0); the output bias shifted by 2^-14.
Model random_net(const std::string& name, const Schema& s, const std::vector<int>& prot, const std::vector<int>& hidden,
                 std::uint64_t seed, double prot_scale, double threshold);

// Whether the first layer gives a protected model input a non-zero weight.
bool protected_weight_nonzero(const Tiny& t);

inline const char* kSchemas[] = {kBoolLast, kCategoricalMiddle, kOneHotFirst, kTwoProtected};

// A wide integer feature (more values than are tested one by one: a tree's cuts are found by
// bisection through the normalisation; cells of many points each).
inline constexpr const char* kWideInteger = R"(
name = "wide"
protected = ["p"]
features = [
  { name = "a", kind = "integer", min = -3000, max = 3000, mean = 17, std = 3 },
  { name = "p", kind = "boolean" },
  { name = "b", kind = "integer", min = 0, max = 2 },
]
)";

// A medium network over ~80,000 points (161,448 with the protected feature): large enough that
// regions are counted, not enumerated, small enough to brute-force. `rules`: a `constraints = [...]`
// line, or none.
Tiny medium_tiny(std::uint64_t seed, const std::string& rules = "");

Tiny random_tiny(int i);

// A Tanh network over kBoolLast (inputs a, b, c, p) with the given weight on p (0: fair): not a
// ReLU network, so the engines that need one refuse it. Its hidden node is named "squash".
Model tanh_inside(double p_weight);

// Hand-made networks over kBoolLast (inputs a, b, c, p).
Tiny hand_made(const std::string& which);

// label = [a + p_weight * p > 1] over kBoolLast: one dense layer, the rule on its logit.
Tiny linear_bool_last(const std::string& name, double p_weight);

// A fair model with a logit exactly on the threshold: label = [a - 1 - p/2 > 0] (at a = 1: z = 0
// with p = 0, z = -1/2 with p = 1; both label 0).
inline Tiny on_threshold() { return linear_bool_last("on_threshold", -0.5); }

// Witnesses whose labels differ in double (and exactly) but not in float32: label = [a + p * 2^-30 > 1];
// at a = 1, float32 rounds 1 + 2^-30 to 1.
inline Tiny below_float32() { return linear_bool_last("below_float32", 0x1p-30); }

// Every raw point of an integral schema, [features][n].
Eigen::MatrixXd domain_points(const Schema& s);

struct Truth {
  long long pairs = 0;                                                      // ordered witness pairs
  std::set<std::pair<std::vector<double>, std::vector<double>>> witnesses;  // raw rows
  std::set<std::vector<double>> discriminated;                              // raw rows that are half of a pair
};

inline std::vector<double> row(const Eigen::VectorXd& v) { return {v.data(), v.data() + v.size()}; }

// Brute force over every pair of domain points that differ only in the protected features: a pair
// is a witness when its labels differ in double and in float32 (as replay_witness requires).
Truth brute_force(const Tiny& t);

// The share of the non-protected points (one per combination of non-protected raw values) where no
// protected change flips the label: what the complete engine's `certified` share measures.
double fair_share(const Tiny& t);

// An independent check of a returned witness: same non-protected raw values, some protected value
// differs, both in the domain, model inputs are the schema's, labels differ in double and float32
// when the model itself is run, and the pair is one brute force found.
void expect_real_witness(const Tiny& t, const Truth& truth, const WitnessPair& w);

// The answer of a search that stops at its first witness, against brute force: that one witness,
// real and with no reason given, when brute force finds a pair; else Verified, exhaustive and no
// witness. Callers wrap it in ASSERT_NO_FATAL_FAILURE to stop where it stops.
void expect_first_answer(const Tiny& t, const Truth& truth, const FairnessResult& r);

// ---------------------------------------------------------------------------------------------
// Random tree ensembles over a tiny schema's model inputs: forests (average, argmax over 3 classes,
// or one score for a binary classifier) and boosted sums under a threshold, optionally behind a
// scaler inside the model.

// A random tree of the given depth over the model inputs, thresholds inside each input's range
// (halfway between two values, or on one, so both Leq and Lt matter), dyadic leaf weights.
TreeEnsemble::Tree random_tree(std::mt19937& rng, int depth, const std::vector<double>& lo,
                               const std::vector<double>& hi, int targets, bool sets, double offset = 1.0 / 1024.0);

// `ties`: leaf weights in eighths and no base value, so that many sums equal the threshold exactly.
Tiny random_forest(const std::string& toml, std::uint64_t seed, bool argmax, bool scaled, bool ties = false);

// Per non-protected point (raw values, protected entries at their minimum): does some protected
// change flip the double label? The tiny networks are exact in double, so this is the truth.
std::map<std::vector<double>, bool> unfair_points(const Tiny& t);

// An Env with a time limit and, when given (not 0), a thread count.
Env make_env(const std::string& time_limit = "30", unsigned threads = 0);

}  // namespace witness::test
