// Schema constraints honoured by every engine and every black-box method: checked against brute
// force over tiny constrained domains (both individuals of a pair valid, a proxy of the protected
// feature following it in the twin).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "fairness/blackbox.h"
#include "fairness/complete/complete_search.h"
#include "fairness/engine.h"
#include "fairness/oracle.h"
#include "model/evaluator.h"
#include "support/sanitized.h"
#include "support/tiny_networks.h"

namespace witness {
namespace {

// Per tiny schema: rules over its features, one set with a proxy of the protected feature.
const std::map<std::string, std::vector<std::string>> kRules = {
    {"bool_last",
     {R"(constraints = ['c = bucket(a, [2], [0, 1])', 'a + b <= 4', 'p in {true} -> b >= 1'])",
      R"(constraints = ['c = bucket(p, [1], [0, 2])', 'a != b'])"}},
    {"categorical_middle",
     {R"(constraints = ['g == z -> a >= 2', '(g, b) not in {(x, 2), (y, -2)}'])",
      R"(constraints = ['a = map(g, {x: 0, y: 3, z: 4})'])"}},
};

// Whether some valid x has a valid twin (protected changed, its proxies derived) with another label.
bool brute_force_unfair(const test::Tiny& t) {
  const Constraints& cs = t.schema.constraints();
  const Eigen::MatrixXd raw = test::domain_points(t.schema);
  const std::vector<bool> prot = proxy_mask(t.schema, t.prot);
  for (Eigen::Index i = 0; i < raw.cols(); ++i) {
    if (!cs.satisfied(raw.col(i))) continue;
    for (Eigen::Index j = 0; j < raw.cols(); ++j) {
      bool twin = true, differs = false;
      for (int f = 0; f < t.schema.size(); ++f) {
        if (!prot[static_cast<std::size_t>(f)] && raw(f, i) != raw(f, j)) twin = false;
        if (prot[static_cast<std::size_t>(f)] && raw(f, i) != raw(f, j)) differs = true;
      }
      if (!twin || !differs || !cs.satisfied(raw.col(j))) continue;
      Eigen::MatrixXd both(t.schema.model_width(), 2);
      both.col(0) = t.schema.to_model(raw.col(i));
      both.col(1) = t.schema.to_model(raw.col(j));
      const Evaluation e = evaluate(t.model, both);
      if (e.labels[0] != e.labels[1]) return true;
    }
  }
  return false;
}

std::vector<test::Tiny> constrained_tinies() {
  std::vector<test::Tiny> out;
  for (int i = 0; i < 16; ++i) {
    test::Tiny t = test::random_tiny(i);
    const auto it = kRules.find(t.schema.name());
    if (it == kRules.end()) continue;
    const char* text = i % 4 == 0 ? test::kBoolLast : test::kCategoricalMiddle;
    for (const std::string& rules : it->second) {
      test::Tiny c = t;
      c.schema = parse_schema(std::string(text) + "\n" + rules + "\n", "tiny_constrained.toml");
      c.name = t.name + " with " + rules;
      out.push_back(std::move(c));
    }
  }
  return out;
}

void expect_valid_pair(const Schema& s, const Eigen::VectorXd& x, const Eigen::VectorXd& x_prime) {
  EXPECT_TRUE(s.constraints().satisfied(x)) << s.display_row(x) << ": " << s.constraints().first_violation(x);
  EXPECT_TRUE(s.constraints().satisfied(x_prime))
      << s.display_row(x_prime) << ": " << s.constraints().first_violation(x_prime);
}

// Under the sanitizers every fourth network.
TEST(ConstrainedEngines, EveryEngineAgreesWithBruteForceOverValidPeople) {
  int unfair = 0, fair = 0;
  for (const test::Tiny& t : test::sampled(constrained_tinies(), 4)) {
    const bool truth = brute_force_unfair(t);
    (truth ? unfair : fair) += 1;
    std::vector<std::string> names;
    for (int f : t.prot) names.push_back(t.schema.feature(f).name);
    const FairnessProblem problem(t.model, t.schema, names);
    for (const EngineInfo& engine : fairness_engines()) {
      SCOPED_TRACE(t.name + " engine " + engine.name);
      Env env = test::make_env("30", 1);
      EngineSettings settings;
      settings.max_seeds = 8;  // concolic: not exact here, only sound
      const FairnessResult r = run_fairness_engine(engine.name, problem, settings, env);
      for (const WitnessPair& w : r.witnesses) expect_valid_pair(t.schema, w.raw, w.raw_prime);
      if (r.verdict == Verdict::Verified) {
        EXPECT_FALSE(truth);
      }
      if (r.verdict == Verdict::Witness) {
        EXPECT_TRUE(truth);
      }
      // The solver engines assert the constraints, the complete engine splits on them: exact here.
      if (engine.name != "concolic") {
        EXPECT_EQ(r.verdict, truth ? Verdict::Witness : Verdict::Verified) << r.reason;
      }
    }
  }
  EXPECT_GT(unfair, 0);
  EXPECT_GT(fair + unfair, test::sized(8, 2));
}

// Over the valid non-protected parts (some protected value makes them a person): how many there
// are, and how many of them two valid protected values label differently.
struct ValidCount {
  long long valid = 0, unfair = 0;
};
ValidCount brute_force_count(const test::Tiny& t) {
  const Constraints& cs = t.schema.constraints();
  const Eigen::MatrixXd raw = test::domain_points(t.schema);
  const std::vector<bool> prot = proxy_mask(t.schema, t.prot);
  const Evaluation e = evaluate(t.model, t.schema.to_model_columns(raw));
  std::map<std::vector<double>, std::set<int>> labels;
  for (Eigen::Index j = 0; j < raw.cols(); ++j) {
    if (!cs.satisfied(raw.col(j))) continue;
    std::vector<double> key;
    for (int f = 0; f < t.schema.size(); ++f)
      if (!prot[static_cast<std::size_t>(f)]) key.push_back(raw(f, j));
    labels[key].insert(e.labels[static_cast<std::size_t>(j)]);
  }
  ValidCount c;
  c.valid = static_cast<long long>(labels.size());
  for (const auto& [key, l] : labels) c.unfair += l.size() > 1 ? 1 : 0;
  return c;
}

void expect_exact_shares(const test::Tiny& t, CompleteSearchOptions o, unsigned threads) {
  SCOPED_TRACE(t.name + " threads " + std::to_string(threads) + " enumerate " + std::to_string(o.enumerate_factor));
  const ValidCount truth = brute_force_count(t);
  ASSERT_GT(truth.valid, 0);
  o.quantify = true;
  o.max_regions = 100000;
  Env env = test::make_env("60", threads);
  const FairnessResult r = complete_search(test::problem_of(t), o, env);
  ASSERT_TRUE(r.share.exact) << r.reason;
  EXPECT_EQ(static_cast<double>(r.share.points), static_cast<double>(truth.valid));
  EXPECT_EQ(static_cast<double>(r.share.falsified_points), static_cast<double>(truth.unfair));
  EXPECT_NEAR(r.share.falsified, static_cast<double>(truth.unfair) / static_cast<double>(truth.valid), 1e-12);
  EXPECT_EQ(r.verdict, truth.unfair > 0 ? Verdict::Witness : Verdict::Verified);
  for (const WitnessPair& w : r.witnesses) expect_valid_pair(t.schema, w.raw, w.raw_prime);
  double reported = 0.0;
  for (const RegionReport& rep : r.regions) reported += rep.falsified;
  EXPECT_NEAR(reported, r.share.falsified, 1e-9);
}

// The tiny constrained domains, and the medium domain of quantify_test (161,448 points) under rules
// that cut it unevenly: a derived feature, a linear rule, an implication with the protected
// feature, or a proxy of it.
TEST(ConstrainedEngines, QuantifiedSharesOverValidPeopleEqualBruteForce) {
  const std::vector<test::Tiny> tinies = constrained_tinies();
  for (std::size_t i = 0; i < tinies.size(); ++i) {
    CompleteSearchOptions o;
    expect_exact_shares(tinies[i], o, 1 + static_cast<unsigned>(i % 2));
    o.enumerate_factor = 0.0;  // bounds, counting and single points only
    expect_exact_shares(tinies[i], o, 2 - static_cast<unsigned>(i % 2));
  }
  const std::vector<std::string> rules = {
      R"(constraints = ['c = bucket(a, [10, 20], [0, 5, 20])', 'a + 2 * b <= 25', 'k in {w} -> p in {true}'])",
      R"(constraints = ['k = map(p, {false: u, true: w})', 'b >= -10 or a <= 5', 'p in {true} -> a + b <= 20'])",
  };
  for (std::uint64_t seed : {3, 7}) {
    for (const std::string& r : rules) {
      CompleteSearchOptions o;
      o.enumerate_factor = seed == 3 ? 0.0 : 16.0;
      expect_exact_shares(test::medium_tiny(seed, r), o, 2);
    }
  }
}

// Tree ensembles under the same rules (a derived feature, linear rules, implications with the
// protected feature, a proxy of it): exact shares over valid people, witnesses valid.
TEST(ConstrainedEngines, TreeEnsemblesCountValidPeopleExactly) {
  int unfair = 0, cases = 0;
  for (const auto& [name, rule_sets] : kRules) {
    const char* text = name == "bool_last" ? test::kBoolLast : test::kCategoricalMiddle;
    for (const std::string& rules : rule_sets)
      for (std::uint64_t seed = 1; seed <= 4; ++seed) {
        test::Tiny t = test::random_forest(std::string(text) + "\n" + rules + "\n", seed, seed % 2 == 0, false);
        t.name += " with " + rules;
        unfair += brute_force_count(t).unfair > 0 ? 1 : 0;
        ++cases;
        expect_exact_shares(t, CompleteSearchOptions{}, 1 + static_cast<unsigned>(seed % 2));
      }
  }
  EXPECT_GT(unfair, 2);
  EXPECT_LT(unfair, cases);
}

TEST(ConstrainedEngines, EveryTestMethodProposesOnlyValidPeople) {
  const std::vector<test::Tiny> tinies = constrained_tinies();
  for (std::size_t i = 0; i < tinies.size(); i += 2) {  // every other one: both rule sets, half the models
    const test::Tiny& t = tinies[i + (i / 2) % 2];
    for (const TestMethod m : {TestMethod::SymbGen, TestMethod::Themis, TestMethod::Aequitas, TestMethod::Adf}) {
      SCOPED_TRACE(t.name + " method " + to_string(m));
      ModelOracle oracle(t.model, t.schema, 1);
      TestOptions o;
      o.method = m;
      o.budget = 100;
      o.protected_features =
          FairnessProblem(t.model, t.schema, {t.schema.feature(t.prot[0]).name}).protected_features();
      o.explanation_samples = 200;
      int pairs = 0;
      o.on_pair = [&](const DiscriminatoryPair& p) {
        ++pairs;
        expect_valid_pair(t.schema, p.x, p.x_prime);
      };
      Env env = test::make_env("30", 1);
      const TestResult r = run_test(oracle, t.schema, o, env);
      EXPECT_EQ(pairs, r.discriminatory);
      if (r.discriminatory > 0) {
        EXPECT_TRUE(brute_force_unfair(t));
      }
    }
  }
}

// A COMPAS-shaped domain where age_cat follows age (the raw data's own coding) and juvenile felonies
// are among the priors: every engine's witnesses and every test method's pairs are people who can
// exist, for networks that are unfair on the plain box.
TEST(ConstrainedEngines, CompasStyleAgeCategoryFollowsAgeInEveryPair) {
  const Schema schema = parse_schema(R"(
name = "compas-style"
protected = ["race"]
[constraints]
rules = ['age_cat = bucket(age, [25, 46], ["Less than 25", "25 - 45", "Greater than 45"])',
         'juv_fel_count <= priors_count']
[[features]]
name = "age"
kind = "integer"
min = 18
max = 96
[[features]]
name = "age_cat"
kind = "categorical"
categories = ["25 - 45", "Greater than 45", "Less than 25"]
[[features]]
name = "priors_count"
kind = "integer"
min = 0
max = 38
[[features]]
name = "juv_fel_count"
kind = "integer"
min = 0
max = 20
[[features]]
name = "race"
kind = "categorical"
categories = ["African-American", "Caucasian", "Hispanic", "Other"]
[[features]]
name = "c_charge_degree"
kind = "categorical"
categories = ["F", "M"]
)",
                                     "compas_style.toml");
  int witnesses = 0, pairs = 0;
  // Seed 3 gives the witnesses and pairs; under the sanitizers it and seed 2.
  for (const std::uint64_t seed : test::sampled(std::vector<std::uint64_t>{3, 1, 2}, 2)) {
    const Model model =
        test::random_net("compas" + std::to_string(seed), schema, schema.protected_indices(), {6, 4}, seed, 1.0, 0.0);
    const FairnessProblem problem(model, schema, {"race"});
    for (const EngineInfo& engine : fairness_engines()) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " engine " + engine.name);
      Env env = test::make_env("10", 1);
      EngineSettings settings;
      settings.max_witnesses = 5;
      settings.max_seeds = 8;
      const FairnessResult r = run_fairness_engine(engine.name, problem, settings, env);
      for (const WitnessPair& w : r.witnesses) expect_valid_pair(schema, w.raw, w.raw_prime);
      witnesses += static_cast<int>(r.witnesses.size());
    }
    for (const TestMethod m : {TestMethod::Themis, TestMethod::Aequitas, TestMethod::Adf}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " method " + to_string(m));
      ModelOracle oracle(model, schema, 1);
      TestOptions o;
      o.method = m;
      o.budget = 300;
      o.protected_features = problem.protected_features();
      o.on_pair = [&](const DiscriminatoryPair& p) {
        ++pairs;
        expect_valid_pair(schema, p.x, p.x_prime);
      };
      Env env = test::make_env("10", 1);
      (void)run_test(oracle, schema, o, env);
    }
  }
  EXPECT_GT(witnesses, 0);
  EXPECT_GT(pairs, 0);
}

}  // namespace
}  // namespace witness
