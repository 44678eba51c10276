#include "fairness/engine.h"

#include <gtest/gtest.h>

#include <set>
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

// Every option of the table: its default text is what EngineSettings{} holds, a value stored
// reads back, and out-of-range or unknown values are InputErrors naming the flag.
TEST(Engine, OptionsAreDeclaredOnceAndRoundTrip) {
  const EngineSettings defaults;
  std::vector<std::string> names;
  for (const EngineOption& o : engine_options()) {
    SCOPED_TRACE(o.spec.name);
    names.push_back(o.spec.name);
    EXPECT_EQ(o.text(defaults), o.spec.fallback);
    EXPECT_FALSE(o.spec.help.empty());
    EngineSettings s;
    std::string value;
    switch (o.spec.type) {
      case OptionSpec::Type::Bool: value = "true"; break;
      case OptionSpec::Type::Int: value = std::to_string(static_cast<long long>(o.spec.min) + 3); break;
      case OptionSpec::Type::Real: value = "2.5"; break;
      case OptionSpec::Type::String: value = o.spec.allowed.back(); break;
    }
    set_engine_option(s, o.spec.name, value);
    EXPECT_EQ(o.text(s), value);
    const std::string bad = o.spec.type == OptionSpec::Type::String ? "bogus"
                            : o.spec.type == OptionSpec::Type::Bool ? "maybe"
                                                                    : "-1.5";
    try {
      set_engine_option(s, o.spec.name, bad);
      ADD_FAILURE() << "no InputError for " << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--" + o.spec.name), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());  // no name twice
  EngineSettings s;
  EXPECT_THROW(set_engine_option(s, "no-such-option", "1"), InputError);
  s.kmeans_k = 0;  // filled in by code: the same range check
  EXPECT_THROW(check_engine_settings(s), InputError);
  EXPECT_NO_THROW(check_engine_settings(EngineSettings{}));
}

}  // namespace
}  // namespace witness
