// Whether a question has any pair to compare: checked against brute force on tiny domains, and on
// the probe's two vacuous schemas through every engine.
#include "fairness/twins.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "core/env.h"
#include "core/file.h"
#include "domain/schema.h"
#include "fairness/engine.h"
#include "fairness/falsify.h"
#include "fairness/verdict.h"
#include "model/loaders.h"

namespace witness {
namespace {

const char* kFeatures = R"(
name = "tiny"
protected = ["g"]
[[features]]
name = "a"
kind = "integer"
min = 0
max = 6
[[features]]
name = "b"
kind = "integer"
min = 0
max = 4
[[features]]
name = "g"
kind = "categorical"
categories = ["x", "y", "z"]
[[features]]
name = "band"
kind = "integer"
min = 0
max = 2
)";

// Brute force: some (a, b) valid with two different values of g (band derived, when it is).
Twins brute_force(const Schema& s, const std::vector<int>& prot) {
  const std::vector<Eigen::VectorXd> combos = protected_combinations(s, prot);
  const Constraints& c = s.constraints();
  bool someone = false;
  for (int a = 0; a <= 6; ++a) {
    for (int b = 0; b <= 4; ++b) {
      for (int band = 0; band <= 2; ++band) {
        int valid = 0;
        for (const Eigen::VectorXd& combo : combos) {
          Eigen::VectorXd x(4);
          x << a, b, combo(0), band;
          c.derive(x);
          valid += c.satisfied(x) ? 1 : 0;
        }
        if (valid >= 2) return Twins::Exist;
        someone = someone || valid == 1;
      }
    }
  }
  return someone ? Twins::NoTwins : Twins::NoPerson;
}

TEST(Twins, AgreeWithBruteForceOnTinyDomains) {
  const std::vector<std::string> atoms = {
      "a < 3",           "a > 4",           "b == 2",      "g == x",    "g != y",
      "a + b <= 3",      "a - b >= 2",      "g in {x, z}", "b >= 1",    "a == b",
      "g == y -> a < 2", "g == z -> b > 3", "a >= 6",      "band == 1", "g == x -> band == 0",
  };
  std::mt19937 rng(7);
  int vacuous = 0;
  for (int round = 0; round < 300; ++round) {
    std::string rules;
    const int n = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < n; ++k) {
      std::string atom = atoms[rng() % atoms.size()];
      if (rng() % 3 == 0) atom = fmt::format("({}) or ({})", atom, atoms[rng() % atoms.size()]);
      rules += fmt::format("{}'{}'", k > 0 ? ", " : "", atom);
    }
    // Half the rounds derive band from g: a proxy that changes with it in the twin.
    const std::string derived = round % 2 == 0 ? "'band = map(g, {x: 0, y: 1, z: 2})', " : "";
    const Schema s = parse_schema(fmt::format("{}\n[constraints]\nrules = [{}{}]\n", kFeatures, derived, rules));
    const std::vector<int> prot = {s.feature_index("g")};
    const Twins expected = brute_force(s, prot);
    EXPECT_EQ(find_twins(s, prot), expected) << derived << rules;
    vacuous += expected != Twins::Exist ? 1 : 0;
  }
  EXPECT_GT(vacuous, 20);  // the rounds cover both answers
}

TEST(Twins, NoRulesMeansTwinsUnlessOneProtectedValue) {
  const Schema s = parse_schema(kFeatures);
  EXPECT_EQ(find_twins(s, {s.feature_index("g")}), Twins::Exist);
  EXPECT_EQ(vacuity_reason(Twins::NoTwins, s, {s.feature_index("g")}), "no two people in the domain differ only in g");
}

// The probe's schemas: every engine answers "verified", vacuously, and says why.
TEST(Twins, EveryEngineNamesAVacuousAnswer) {
  const Model model = load_model(WITNESS_SOURCE_DIR "/benchmarks/fairify/models/adult/AC1.h5");
  const std::string base = read_file(WITNESS_SOURCE_DIR "/benchmarks/fairify/adult.toml");
  for (const auto& [rules, reason] : std::vector<std::pair<std::string, std::string>>{
           {"'age < 20', 'age > 30'", "no person in the domain"},
           {"'sex == Male'", "no two people in the domain differ only in sex"}}) {
    const Schema s = parse_schema(base + fmt::format("\n[constraints]\nrules = [{}]\n", rules));
    const FairnessProblem problem(model, s, {"sex"});
    for (const EngineInfo& e : fairness_engines()) {
      Env env;
      env.start();
      const FairnessResult r = run_fairness_engine(e.name, problem, EngineSettings{}, env);
      EXPECT_EQ(r.verdict, Verdict::Verified) << e.name;
      EXPECT_TRUE(r.vacuous) << e.name;
      EXPECT_NE(r.reason.find(reason), std::string::npos) << e.name << ": " << r.reason;
    }
  }
}

}  // namespace
}  // namespace witness
