// The tree engine against brute force: random forests and boosted ensembles on tiny domains
// (booleans, categories, one-hot, normalised integers, two protected features), verdicts, exact
// counts and witnesses; threshold and argmax rules; a preprocessing chain in the model.
#include "fairness/tree_search.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "fairness/complete_search.h"
#include "fairness/raw_trees.h"
#include "tiny_networks.h"

namespace witness {
namespace {

using test::Tiny;

// A random tree of the given depth over the model inputs, thresholds inside each input's range
// (halfway between two values, or on one, so both Leq and Lt matter), dyadic leaf weights.
TreeEnsemble::Tree random_tree(std::mt19937& rng, int depth, const std::vector<double>& lo,
                               const std::vector<double>& hi, int targets, bool sets) {
  TreeEnsemble::Tree t;
  std::uniform_int_distribution<int> input(0, static_cast<int>(lo.size()) - 1);
  std::uniform_int_distribution<int> weight(-8, 8);
  std::uniform_int_distribution<int> coin(0, 3);
  std::vector<std::pair<int, int>> todo{{0, 0}};  // (node, depth)
  t.nodes.resize(1);
  while (!todo.empty()) {
    const auto [id, d] = todo.back();
    todo.pop_back();
    if (d == depth || coin(rng) == 0) {
      for (int k = 0; k < targets; ++k)
        t.leaves.push_back({id, k, static_cast<double>(weight(rng)) / 8.0 + 1.0 / 1024.0});
      continue;
    }
    TreeEnsemble::Node& n = t.nodes[static_cast<std::size_t>(id)];
    n.feature = input(rng);
    const double a = lo[static_cast<std::size_t>(n.feature)], b = hi[static_cast<std::size_t>(n.feature)];
    std::uniform_real_distribution<double> at(a, b);
    const int kind = coin(rng);
    n.mode = kind == 0 ? TreeEnsemble::Mode::Lt : kind == 1 ? TreeEnsemble::Mode::Geq : TreeEnsemble::Mode::Leq;
    n.threshold = std::round(at(rng) * 2.0) / 2.0;
    if (sets && kind == 3 && b - a < 64) {  // sets only over small domains (tested code by code)
      n.mode = TreeEnsemble::Mode::Member;
      n.members = {std::round(a), std::round(b)};
      std::sort(n.members.begin(), n.members.end());
    }
    n.true_child = static_cast<int>(t.nodes.size());
    n.false_child = n.true_child + 1;
    t.nodes.resize(t.nodes.size() + 2);
    todo.emplace_back(t.nodes[static_cast<std::size_t>(id)].true_child, d + 1);
    todo.emplace_back(t.nodes[static_cast<std::size_t>(id)].false_child, d + 1);
  }
  // Children must come after their parent, which the order of creation gives.
  return t;
}

// A wide integer feature (more values than are tested one by one: its cuts are found by bisection
// through the normalisation) and a real-valued protected-free domain around it.
constexpr const char* kWide = R"(
name = "wide"
protected = ["p"]
features = [
  { name = "a", kind = "integer", min = -3000, max = 3000, mean = 17, std = 3 },
  { name = "p", kind = "boolean" },
  { name = "b", kind = "integer", min = 0, max = 2 },
]
)";

Tiny random_forest(const char* toml, std::uint64_t seed, bool argmax, bool scaled) {
  Tiny t;
  t.schema = test::schema_of(toml);
  t.prot = t.schema.protected_indices();
  t.name = std::string(t.schema.name()) + (argmax ? " argmax " : " threshold ") + std::to_string(seed);
  std::mt19937 rng(static_cast<unsigned>(seed));
  const int w = t.schema.model_width();
  // Model-input ranges: the domain's corners through the schema's encoding.
  std::vector<double> lo(static_cast<std::size_t>(w), INFINITY), hi(static_cast<std::size_t>(w), -INFINITY);
  const Eigen::MatrixXd x = t.schema.to_model_columns(test::domain_points(t.schema));
  for (int k = 0; k < w; ++k)
    lo[static_cast<std::size_t>(k)] = x.row(k).minCoeff(), hi[static_cast<std::size_t>(k)] = x.row(k).maxCoeff();
  std::vector<std::string> names = t.schema.model_input_names();
  ModelBuilder b(t.name, names);
  int in = b.input();
  if (scaled) {  // a scaler inside the model: the trees read 2 x - 1
    in = b.dense(in, 2.0 * Eigen::MatrixXd::Identity(w, w), -Eigen::VectorXd::Ones(w));
    for (int k = 0; k < w; ++k)
      lo[static_cast<std::size_t>(k)] = 2 * lo[static_cast<std::size_t>(k)] - 1,
      hi[static_cast<std::size_t>(k)] = 2 * hi[static_cast<std::size_t>(k)] - 1;
  }
  auto te = std::make_shared<TreeEnsemble>();
  // Odd seeds with argmax: one score for a binary classifier, outputs [1 - s, s].
  const bool pair = argmax && seed % 2 == 1;
  te->n_targets = pair ? 1 : argmax ? 3 : 1;
  te->binary_single_score = pair;
  te->binary_total = 1.0;
  te->aggregate = argmax ? TreeEnsemble::Aggregate::Average : TreeEnsemble::Aggregate::Sum;
  te->base_values.assign(static_cast<std::size_t>(te->n_targets), 1.0 / 512.0);
  for (int k = 0; k < 6; ++k) te->trees.push_back(random_tree(rng, 3, lo, hi, te->n_targets, !scaled));
  const int trees = b.tree_ensemble(in, te);
  if (argmax) {
    t.model = b.finish(b.unary(OpKind::Softmax, trees), DecisionRule::argmax_of(trees));
  } else {
    t.model = b.finish(b.sigmoid(trees), DecisionRule::threshold_on(trees, 0.0));
  }
  return t;
}

struct Counted {
  long long points = 0, unfair = 0;
};

Counted count_unfair(const Tiny& t) {
  const Eigen::MatrixXd raw = test::domain_points(t.schema);
  const Evaluation e = evaluate(t.model, t.schema.to_model_columns(raw));
  std::map<std::vector<double>, std::set<int>> labels;
  for (Eigen::Index j = 0; j < raw.cols(); ++j) {
    Eigen::VectorXd key = raw.col(j);
    for (int f : t.prot) key(f) = t.schema.feature(f).min;
    labels[test::row(key)].insert(e.labels[static_cast<std::size_t>(j)]);
  }
  Counted c;
  for (const auto& [key, seen] : labels) c.points += 1, c.unfair += seen.size() > 1 ? 1 : 0;
  return c;
}

void expect_exact(const Tiny& t, unsigned threads) {
  SCOPED_TRACE(t.name + " threads " + std::to_string(threads));
  const Counted truth = count_unfair(t);
  CompleteSearchOptions o;
  o.protected_features = t.prot;
  o.quantify = true;
  Env env = test::make_env("60", threads);
  const FairnessResult r = complete_search(t.model, t.schema, o, env);
  ASSERT_TRUE(r.share.measured);
  EXPECT_TRUE(r.share.exact) << r.reason;
  EXPECT_EQ(r.share.undecided, 0.0);
  EXPECT_EQ(static_cast<double>(r.share.points), static_cast<double>(truth.points));
  EXPECT_EQ(static_cast<long long>(r.share.falsified_points), truth.unfair);
  EXPECT_EQ(r.verdict, truth.unfair > 0 ? Verdict::Witness : Verdict::Verified) << r.reason;
  for (const WitnessPair& w : r.witnesses) EXPECT_NE(w.label, w.label_prime);
  // Without quantify: the same verdict, a replayed witness when there is one.
  CompleteSearchOptions v = o;
  v.quantify = false;
  Env env2 = test::make_env("60", threads);
  const FairnessResult q = complete_search(t.model, t.schema, v, env2);
  EXPECT_EQ(q.verdict, truth.unfair > 0 ? Verdict::Witness : Verdict::Verified) << q.reason;
}

TEST(TreeSearch, ExactCountsEqualBruteForce) {
  const char* schemas[] = {test::kBoolLast, test::kCategoricalMiddle, test::kOneHotFirst, test::kTwoProtected, kWide};
  int unfair = 0, fair = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed)
    for (const char* s : schemas)
      for (bool argmax : {false, true})
        for (bool scaled : {false, true}) {
          const Tiny t = random_forest(s, seed, argmax, scaled);
          (count_unfair(t).unfair > 0 ? unfair : fair) += 1;
          expect_exact(t, seed % 2 == 0 ? 2 : 1);
        }
  // Both kinds occur, so both verdicts are tested.
  EXPECT_GT(unfair, 10);
  EXPECT_GT(fair, 3);
}

}  // namespace
}  // namespace witness
