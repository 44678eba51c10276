#include "fairness/engine.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "tiny_networks.h"

namespace witness {
namespace {

std::vector<std::string> names_of(const test::Tiny& t) {
  std::vector<std::string> names;
  for (int f : t.prot) names.push_back(t.schema.feature(f).name);
  return names;
}

// Every engine, called by name through the one interface, agrees with brute force: a witness
// exactly when one exists, verified only when none does (the searching engines may say
// inconclusive, never verified, on an unfair model).
TEST(Engine, EveryEngineByNameAgreesWithBruteForce) {
  for (int i = 0; i < 6; ++i) {
    const test::Tiny t = test::random_tiny(i);
    const test::Truth truth = test::brute_force(t);
    const FairnessProblem problem(t.model, t.schema, names_of(t));
    EXPECT_EQ(problem.protected_features(), t.prot);
    for (const EngineInfo& engine : fairness_engines()) {
      SCOPED_TRACE(t.name + " engine " + engine.name);
      Env env = test::make_env("30", 1);
      EngineSettings settings;
      settings.quantify = engine.measures_domain;
      settings.max_seeds = 20;  // concolic: random seeds, not the default thousand
      const FairnessResult r = run_fairness_engine(engine.name, problem, settings, env);
      if (r.verdict == Verdict::Witness) {
        ASSERT_FALSE(r.witnesses.empty());
        test::expect_real_witness(t, truth, r.witnesses.front());
      }
      if (r.verdict == Verdict::Verified) {
        EXPECT_EQ(truth.pairs, 0);
      }
      if (engine.name != "concolic") {  // the others are complete on these domains
        EXPECT_EQ(r.verdict, truth.pairs > 0 ? Verdict::Witness : Verdict::Verified) << r.reason;
      }
      EXPECT_EQ(r.share.measured, engine.measures_domain);
    }
  }
}

TEST(Engine, UnknownNamesAndBadSettingsAreInputErrors) {
  const test::Tiny t = test::random_tiny(1);
  EXPECT_THROW((void)fairness_engine("fast"), InputError);
  EXPECT_THROW(FairnessProblem(t.model, t.schema, {"no_such_feature"}), InputError);
  const FairnessProblem problem(t.model, t.schema, {});  // the schema's own protected list
  EXPECT_FALSE(problem.protected_names().empty());
  Env env = test::make_env("30", 1);
  EngineSettings settings;
  settings.max_witnesses = 0;
  EXPECT_THROW((void)run_fairness_engine("complete", problem, settings, env), InputError);
  EXPECT_THROW((void)run_fairness_engine("nope", problem, EngineSettings{}, env), InputError);
}

}  // namespace
}  // namespace witness
