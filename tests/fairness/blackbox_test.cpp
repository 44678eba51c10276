#include "fairness/blackbox.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "domain/dataset.h"
#include "fairness/oracle.h"
#include "model/evaluator.h"
#include "model/loaders.h"
#include "model/model.h"
#include "support/paths.h"
#include "support/sanitized.h"
#include "support/tiny_networks.h"

namespace witness::test {
namespace {

const TestMethod kMethods[] = {TestMethod::SymbGen, TestMethod::Themis, TestMethod::Aequitas, TestMethod::Adf,
                               TestMethod::RandomPairs};

// The model seen only through its labels: no weights, so no replay and no ADF.
class BlindOracle : public LabelOracle {
 public:
  BlindOracle(const Model& m, const Schema& s) : inner_(m, s, 1) {}
  void labels(const Eigen::MatrixXd& raw, std::vector<int>& out) override {
    rows_ += raw.cols();
    inner_.labels(raw, out);
  }
  [[nodiscard]] std::string name() const override { return "blind"; }

 private:
  ModelOracle inner_;
};

std::vector<double> free_part(const Eigen::VectorXd& raw, const std::vector<int>& prot) {
  std::vector<double> key;
  for (Eigen::Index f = 0; f < raw.size(); ++f)
    if (std::find(prot.begin(), prot.end(), static_cast<int>(f)) == prot.end()) key.push_back(raw(f));
  return key;
}

// Brute force: the non-protected parts where some protected change flips the label in double.
std::set<std::vector<double>> discriminated_parts(const Tiny& t) {
  const Eigen::MatrixXd raw = domain_points(t.schema);
  const Evaluation e = evaluate(t.model, t.schema.to_model_columns(raw));
  std::map<std::vector<double>, std::set<int>> labels;
  for (Eigen::Index j = 0; j < raw.cols(); ++j)
    labels[free_part(raw.col(j), t.prot)].insert(e.labels[static_cast<std::size_t>(j)]);
  std::set<std::vector<double>> out;
  for (const auto& [key, seen] : labels)
    if (seen.size() > 1) out.insert(key);
  return out;
}

struct TestRun {
  TestResult result;
  std::vector<DiscriminatoryPair> pairs;
};

TestRun run(LabelOracle& oracle, const Schema& s, TestOptions o, const std::string& time_limit = "30",
            const std::string& seed = "1") {
  TestRun out;
  o.on_pair = [&](const DiscriminatoryPair& p) { out.pairs.push_back(p); };
  Env env = make_env(time_limit);
  env.options.set("seed", seed);
  out.result = run_test(oracle, s, o, env);
  return out;
}

// Every pair: in the domain, differs only in protected features, and the model (run one row at a
// time) gives the two labels reported, which differ. Non-protected parts are unique.
void expect_pairs_replay(const Model& m, const Schema& s, const std::vector<int>& prot, const TestRun& r,
                         const std::string& what) {
  std::set<std::vector<double>> seen;
  for (const DiscriminatoryPair& p : r.pairs) {
    ASSERT_TRUE(s.contains(p.x) && s.contains(p.x_prime)) << what;
    EXPECT_EQ(free_part(p.x, prot), free_part(p.x_prime, prot)) << what;
    EXPECT_NE(p.x, p.x_prime) << what;
    const int a = evaluate(m, s.to_model(p.x)).labels[0];
    const int b = evaluate(m, s.to_model(p.x_prime)).labels[0];
    EXPECT_EQ(a, p.label) << what;
    EXPECT_EQ(b, p.label_prime) << what;
    EXPECT_NE(a, b) << what << ": " << s.display_row(p.x);
    EXPECT_TRUE(seen.insert(free_part(p.x, prot)).second) << what << ": a test counted twice";
  }
  EXPECT_EQ(static_cast<std::int64_t>(r.pairs.size()), r.result.discriminatory) << what;
  std::int64_t gen = 0;
  std::int64_t disc = 0;
  for (const TestPhase& ph : r.result.phases) {
    gen += ph.generated;
    disc += ph.discriminatory;
  }
  EXPECT_EQ(gen, r.result.generated) << what;
  EXPECT_EQ(disc, r.result.discriminatory) << what;
}

TEST(BlackboxTest, EveryMethodFindsExactlyTheBruteForceSetOnTinyNetworks) {
  for (int i = 0; i < 16; ++i) {
    const Tiny t = random_tiny(i);
    const std::set<std::vector<double>> truth = discriminated_parts(t);
    long long free_points = 1;
    for (int f = 0; f < t.schema.size(); ++f)
      if (std::find(t.prot.begin(), t.prot.end(), f) == t.prot.end())
        free_points *= static_cast<long long>(t.schema.feature(f).max - t.schema.feature(f).min + 1);
    for (TestMethod m : kMethods) {
      const std::string what = t.name + " " + to_string(m);
      ModelOracle oracle(t.model, t.schema, 1);
      TestOptions o;
      o.method = m;
      o.protected_features = t.prot;
      o.budget = 0;  // until the domain is used up
      o.explanation_samples = 40;
      const TestRun r = run(oracle, t.schema, o);
      EXPECT_EQ(r.result.stopped, "exhausted") << what;
      EXPECT_EQ(r.result.generated, free_points) << what;
      expect_pairs_replay(t.model, t.schema, t.prot, r, what);
      for (const DiscriminatoryPair& p : r.pairs) EXPECT_TRUE(truth.count(free_part(p.x, t.prot)) == 1) << what;
      // Random pairs compare each test with one other combination only, so it may miss some.
      if (m == TestMethod::RandomPairs) {
        EXPECT_LE(r.result.discriminatory, static_cast<std::int64_t>(truth.size())) << what;
      } else {
        EXPECT_EQ(r.result.discriminatory, static_cast<std::int64_t>(truth.size())) << what;
      }
    }
  }
}

class AdultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = load_model(source_path("benchmarks/fairify/models/adult/AC1.h5"));
    schema_ = load_schema(source_path("benchmarks/fairify/adult.toml"));
    data_ = load_csv(source_path("benchmarks/fairify/data/adult.csv"), schema_);
    prot_ = {schema_.feature_index("sex")};
  }
  [[nodiscard]] TestOptions options(TestMethod m, std::int64_t budget) const {
    TestOptions o;
    o.method = m;
    o.protected_features = prot_;
    o.budget = budget;
    o.seeds = &data_.raw;
    o.explanation_samples = 300;
    return o;
  }
  Model model_;
  Schema schema_;
  Dataset data_;
  std::vector<int> prot_;
};

TEST_F(AdultTest, EveryMethodKeepsTheBudgetAndEveryPairReplays) {
  for (TestMethod m : kMethods) {
    ModelOracle oracle(model_, schema_, 2);
    const TestRun r = run(oracle, schema_, options(m, 150));
    EXPECT_EQ(r.result.generated, 150) << to_string(m);
    EXPECT_EQ(r.result.stopped, "budget") << to_string(m);
    EXPECT_EQ(r.result.rejected, 0) << to_string(m);
    EXPECT_GE(r.result.queries, 2 * r.result.generated) << to_string(m);
    expect_pairs_replay(model_, schema_, prot_, r, to_string(m));
  }
}

TEST_F(AdultTest, SearchMethodsBeatRandomTestingSeveralFold) {
  // The paper's claim: SymbGen's success rate is several times THEMIS's (3.72x on average).
  ModelOracle oracle(model_, schema_, 2);
  const TestRun themis = run(oracle, schema_, options(TestMethod::Themis, 300));
  for (TestMethod m : {TestMethod::SymbGen, TestMethod::Aequitas, TestMethod::Adf}) {
    const TestRun r = run(oracle, schema_, options(m, 300));
    EXPECT_GE(r.result.discriminatory, 3 * std::max<std::int64_t>(1, themis.result.discriminatory))
        << to_string(m) << " found " << r.result.discriminatory << ", themis " << themis.result.discriminatory;
  }
}

TEST_F(AdultTest, SymbGenPhasesFollowThePriorities) {
  ModelOracle oracle(model_, schema_, 1);
  TestOptions o = options(TestMethod::SymbGen, 400);
  o.explanation_samples = 1000;  // the default
  const TestRun r = run(oracle, schema_, o);
  ASSERT_EQ(r.result.phases.size(), 3U);
  EXPECT_EQ(r.result.phases[0].name, "seed");
  EXPECT_EQ(r.result.phases[1].name, "directed");
  EXPECT_EQ(r.result.phases[2].name, "undirected");
  // Directed search starts from discriminatory inputs and stays next to them: it succeeds far
  // more often than the seeds.
  const TestPhase& seed = r.result.phases[0];
  const TestPhase& directed = r.result.phases[1];
  EXPECT_GT(directed.generated, 20);
  EXPECT_GT(directed.discriminatory * seed.generated, 5 * seed.discriminatory * directed.generated);
  // Explanations label explanation_samples rows per new input.
  EXPECT_GE(r.result.queries, 1000 * r.result.generated);
}

TEST_F(AdultTest, SameSeedSameRunOtherSeedOtherRun) {
  for (TestMethod m : kMethods) {
    ModelOracle oracle(model_, schema_, 2);
    const int budget = sized(120, 60);
    const TestRun a = run(oracle, schema_, options(m, budget), "30", "7");
    const TestRun b = run(oracle, schema_, options(m, budget), "30", "7");
    ASSERT_EQ(a.pairs.size(), b.pairs.size()) << to_string(m);
    EXPECT_EQ(a.result.generated, b.result.generated) << to_string(m);
    EXPECT_EQ(a.result.queries, b.result.queries) << to_string(m);
    for (std::size_t i = 0; i < a.pairs.size(); ++i) EXPECT_EQ(a.pairs[i].x, b.pairs[i].x) << to_string(m);
  }
}

TEST_F(AdultTest, BlackBoxOracleGivesTheSameRunWithoutWeights) {
  for (TestMethod m : {TestMethod::SymbGen, TestMethod::Themis, TestMethod::Aequitas, TestMethod::RandomPairs}) {
    ModelOracle native(model_, schema_, 1);
    BlindOracle blind(model_, schema_);
    const TestRun a = run(native, schema_, options(m, 120));
    const TestRun b = run(blind, schema_, options(m, 120));
    EXPECT_EQ(a.result.generated, b.result.generated) << to_string(m);
    EXPECT_EQ(a.result.discriminatory, b.result.discriminatory) << to_string(m);
    EXPECT_EQ(a.result.queries, b.result.queries) << to_string(m);
  }
}

TEST_F(AdultTest, TimeLimitWithoutBudget) {
  ModelOracle oracle(model_, schema_, 2);
  const TestRun r = run(oracle, schema_, options(TestMethod::Aequitas, 0), "0.3");
  EXPECT_EQ(r.result.stopped, "time limit");
  EXPECT_GT(r.result.generated, 1000);
  EXPECT_LT(r.result.seconds, 3.0);
}

TEST_F(AdultTest, UnusableSetUpsAreInputErrors) {
  ModelOracle oracle(model_, schema_, 1);
  BlindOracle blind(model_, schema_);
  Env env = make_env("0");
  TestOptions o = options(TestMethod::Themis, 0);
  EXPECT_THROW((void)run_test(oracle, schema_, o, env), InputError);  // no budget and no time limit
  o = options(TestMethod::Adf, 10);
  EXPECT_THROW((void)run_test(blind, schema_, o, env), InputError);  // ADF needs weights
  o = options(TestMethod::Themis, 10);
  o.protected_features.clear();
  EXPECT_THROW((void)run_test(oracle, schema_, o, env), InputError);
  o = options(TestMethod::SymbGen, 10);
  const Eigen::MatrixXd narrow = data_.raw.topRows(3);
  o.seeds = &narrow;
  EXPECT_THROW((void)run_test(oracle, schema_, o, env), InputError);
  o = options(TestMethod::SymbGen, 10);
  o.t1 = 2;
  EXPECT_THROW((void)run_test(oracle, schema_, o, env), InputError);
  EXPECT_THROW((void)parse_test_method("lime"), InputError);
  EXPECT_EQ(parse_test_method("random-pairs"), TestMethod::RandomPairs);
}

TEST(BlackboxTest, AdfRefusesModelsThatAreNotReluNetworksOthersTestThem) {
  const Schema s = schema_of(kBoolLast);
  const Model m = tanh_inside(1.0);
  ModelOracle oracle(m, s, 1);
  TestOptions o;
  o.method = TestMethod::Adf;
  o.protected_features = s.protected_indices();
  o.budget = 10;
  Env env = make_env();
  EXPECT_THROW((void)run_test(oracle, s, o, env), UnsupportedError);
  o.method = TestMethod::Aequitas;
  o.budget = 0;
  const TestRun r = run(oracle, s, o);
  EXPECT_EQ(r.result.stopped, "exhausted");
  expect_pairs_replay(m, s, o.protected_features, r, "aequitas on tanh");
}

}  // namespace
}  // namespace witness::test
