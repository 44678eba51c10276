// Schema constraints honoured by every engine and every black-box method: checked against brute
// force over tiny constrained domains (both individuals of a pair valid, a proxy of the protected
// feature following it in the twin).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "fairness/blackbox.h"
#include "fairness/engine.h"
#include "fairness/oracle.h"
#include "model/evaluator.h"
#include "tiny_networks.h"

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

TEST(ConstrainedEngines, EveryEngineAgreesWithBruteForceOverValidPeople) {
  int unfair = 0, fair = 0;
  for (const test::Tiny& t : constrained_tinies()) {
    const bool truth = brute_force_unfair(t);
    (truth ? unfair : fair) += 1;
    std::vector<std::string> names;
    for (int f : t.prot) names.push_back(t.schema.feature(f).name);
    const FairnessProblem problem(t.model, t.schema, names);
    for (const EngineInfo& engine : fairness_engines()) {
      SCOPED_TRACE(t.name + " engine " + engine.name);
      Env env = test::make_env("30", 1);
      EngineSettings settings;
      settings.max_seeds = 20;
      const FairnessResult r = run_fairness_engine(engine.name, problem, settings, env);
      for (const WitnessPair& w : r.witnesses) expect_valid_pair(t.schema, w.raw, w.raw_prime);
      if (r.verdict == Verdict::Verified) {
        EXPECT_FALSE(truth);
      }
      if (r.verdict == Verdict::Witness) {
        EXPECT_TRUE(truth);
      }
      // The solver engines assert the constraints: exact on these domains.
      if (engine.name == "smt" || engine.name == "dual") {
        EXPECT_EQ(r.verdict, truth ? Verdict::Witness : Verdict::Verified) << r.reason;
      }
    }
  }
  EXPECT_GT(unfair, 0);
  EXPECT_GT(fair + unfair, 8);
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

}  // namespace
}  // namespace witness
