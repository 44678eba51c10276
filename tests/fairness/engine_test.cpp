#include "fairness/engine.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "fairness/blackbox.h"
#include "support/sanitized.h"
#include "support/tiny_networks.h"

namespace witness {
namespace {

// Every engine, called by name through the one interface, agrees with brute force: a witness
// exactly when one exists, verified only when none does (the searching engines may say
// inconclusive, never verified, on an unfair model). The one engine x model suite: engines are
// checked against the truth, never only against each other.
void expect_every_engine_agrees_with_brute_force(const test::Tiny& t) {
  const test::Truth truth = test::brute_force(t);
  const FairnessProblem problem = test::problem_of(t);
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

const char* const kHandMade[] = {"zero_weight", "small_weight", "label_is_p", "rare"};

TEST(Engine, EveryEngineByNameAgreesWithBruteForce) {
  for (int i = 0; i < test::sized(6, 1); ++i) expect_every_engine_agrees_with_brute_force(test::random_tiny(i));
  for (const char* which : kHandMade) expect_every_engine_agrees_with_brute_force(test::hand_made(which));
}

TEST(Engine, EveryEngineAgreesWithBruteForceOnEveryNetworkSlow) {
  for (int i = 0; i < 30; ++i) expect_every_engine_agrees_with_brute_force(test::random_tiny(i));
}

// --max-witnesses N: every engine reports exactly min(N, the unfair points) distinct points x, each
// a real witness; when it has fewer it says these are all of them. Under the sanitizers the first
// unfair network only.
TEST(Engine, EveryEngineReportsExactlyTheWitnessesAskedOrAllThereAre) {
  int checked = 0;
  for (int i = 0; i < 4 && checked < test::sized(4, 1); ++i) {
    const test::Tiny t = test::random_tiny(i);
    const test::Truth truth = test::brute_force(t);
    const auto unfair = static_cast<int>(truth.discriminated.size());
    if (unfair == 0) continue;
    ++checked;
    const FairnessProblem problem(t.model, t.schema, test::names_of(t));
    for (const EngineInfo& engine : fairness_engines()) {
      for (const int asked : {3, unfair + 4}) {
        SCOPED_TRACE(t.name + " engine " + engine.name + " asked " + std::to_string(asked));
        Env env = test::make_env("60", 2);
        EngineSettings settings;
        settings.max_witnesses = asked;
        settings.max_seeds = 20;
        const FairnessResult r = run_fairness_engine(engine.name, problem, settings, env);
        if (engine.name == "concolic" && r.verdict == Verdict::Inconclusive) continue;  // it searches near seeds
        ASSERT_EQ(r.verdict, Verdict::Witness) << r.reason;
        EXPECT_EQ(static_cast<int>(r.witnesses.size()), std::min(asked, unfair)) << r.witnesses_note;
        EXPECT_EQ(r.witnesses_asked, asked);
        std::set<std::vector<double>> points;
        for (const WitnessPair& w : r.witnesses) {
          test::expect_real_witness(t, truth, w);
          points.insert(test::row(w.raw));
        }
        EXPECT_EQ(points.size(), r.witnesses.size());  // distinct points
        if (asked > unfair) {
          EXPECT_NE(r.witnesses_note.find("all the unfair points"), std::string::npos);
        } else {
          EXPECT_EQ(r.witnesses_note, "");
        }
      }
    }
  }
  EXPECT_GT(checked, 0);
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

// Every option of a table: its default text is what S{} holds, a value stored reads back, and
// out-of-range or unknown values are InputErrors naming the flag.
template <typename S>
void expect_table_round_trips(const std::vector<SettingOption<S>>& table) {
  const S defaults{};
  std::vector<std::string> names;
  for (const SettingOption<S>& o : table) {
    SCOPED_TRACE(o.spec.name);
    names.push_back(o.spec.name);
    EXPECT_EQ(o.text(defaults), o.spec.fallback);
    EXPECT_FALSE(o.spec.help.empty());
    S s{};
    std::string value;
    switch (o.spec.type) {
      case OptionSpec::Type::Bool: value = "true"; break;
      case OptionSpec::Type::Int: value = std::to_string(static_cast<long long>(o.spec.min) + 3); break;
      case OptionSpec::Type::Real: value = o.spec.min <= 0.25 && 0.25 <= o.spec.max ? "0.25" : "0.75"; break;
      case OptionSpec::Type::String: value = o.spec.allowed.back(); break;
    }
    set_setting(table, s, o.spec.name, value);
    EXPECT_EQ(o.text(s), value);
    EXPECT_NO_THROW(check_settings(table, s));
    const std::string bad = o.spec.type == OptionSpec::Type::String ? "bogus"
                            : o.spec.type == OptionSpec::Type::Bool ? "maybe"
                                                                    : "-1.5";
    try {
      set_setting(table, s, o.spec.name, bad);
      ADD_FAILURE() << "no InputError for " << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--" + o.spec.name), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());  // no name twice
  S s{};
  EXPECT_THROW(set_setting(table, s, "no-such-option", "1"), InputError);
  EXPECT_NO_THROW(check_settings(table, S{}));
}

TEST(Engine, OptionsAreDeclaredOnceAndRoundTrip) {
  expect_table_round_trips(engine_options());
  EngineSettings s;
  set_engine_option(s, "split", "gap");
  EXPECT_EQ(s.split, SplitRule::Gap);
  s.kmeans_k = 0;  // filled in by code: the same range check
  EXPECT_THROW(check_engine_settings(s), InputError);
}

TEST(Engine, TestOptionsAreDeclaredOnceAndRoundTrip) {
  expect_table_round_trips(test_options());
  TestOptions o;
  o.explanation_samples = 5;  // below LIME's useful minimum: refused by the same declaration
  EXPECT_THROW(check_settings(test_options(), o), InputError);
}

}  // namespace
}  // namespace witness
