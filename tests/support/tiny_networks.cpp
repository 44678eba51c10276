#include "support/tiny_networks.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

namespace witness::test {

std::vector<std::string> names_of(const Tiny& t) {
  std::vector<std::string> names;
  for (int f : t.prot) names.push_back(t.schema.feature(f).name);
  return names;
}

CompleteSearchOptions quantify_options(const Tiny& /*t*/) {
  CompleteSearchOptions o;
  o.quantify = true;
  return o;
}

std::vector<bool> protected_model_inputs(const Schema& s, const std::vector<int>& prot) {
  std::vector<bool> out(static_cast<std::size_t>(s.model_width()), false);
  for (int f : prot) {
    const Feature& ft = s.feature(f);
    for (int k = 0; k < ft.model_width; ++k) {
      const int input = ft.model_offset + k;
      out[static_cast<std::size_t>(input)] = true;
    }
  }
  return out;
}

Model random_net(const std::string& name, const Schema& s, const std::vector<int>& prot, const std::vector<int>& hidden,
                 std::uint64_t seed, double prot_scale, double threshold) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> eighths(-8, 8);
  auto draw = [&] { return eighths(rng) / 8.0; };
  const std::vector<bool> is_prot = protected_model_inputs(s, prot);
  ModelBuilder b(name, s.model_input_names());
  int x = b.input();
  int width = s.model_width();
  for (std::size_t l = 0; l < hidden.size(); ++l) {
    Eigen::MatrixXd w(hidden[l], width);
    Eigen::VectorXd bias(hidden[l]);
    for (int r = 0; r < hidden[l]; ++r) {
      for (int c = 0; c < width; ++c) {
        w(r, c) = draw();
        if (l == 0 && is_prot[static_cast<std::size_t>(c)]) w(r, c) *= prot_scale;
      }
      bias[r] = draw();
    }
    x = b.relu(b.dense(x, w, bias));
    width = hidden[l];
  }
  Eigen::MatrixXd w(1, width);
  for (int c = 0; c < width; ++c) w(0, c) = draw();
  const int z = b.dense(x, w, Eigen::VectorXd::Constant(1, draw() + kOffset));
  return b.finish(b.sigmoid(z), DecisionRule::threshold_on(z, threshold));
}

bool protected_weight_nonzero(const Tiny& t) {
  const std::vector<bool> is_prot = protected_model_inputs(t.schema, t.prot);
  for (const Node& n : t.model.nodes) {
    if (n.op != OpKind::Dense || n.inputs[0] != t.model.input) continue;
    for (int c = 0; c < n.weights.cols(); ++c) {
      if (is_prot[static_cast<std::size_t>(c)] && !n.weights.col(c).isZero(0.0)) return true;
    }
  }
  return false;
}

Tiny medium_tiny(std::uint64_t seed, const std::string& rules) {
  Tiny t;
  t.name = "medium" + std::to_string(seed) + (rules.empty() ? "" : " with " + rules);
  t.schema = parse_schema(R"(
name = "medium"
protected = ["p"]
)" + rules + R"(
features = [
  { name = "a", kind = "integer", min = 0, max = 30 },
  { name = "b", kind = "integer", min = -15, max = 15, scale = 0.25, offset = 0.5 },
  { name = "c", kind = "integer", min = 0, max = 20 },
  { name = "k", kind = "categorical", categories = ["u", "v", "w", "x"], encoding = "one-hot" },
  { name = "p", kind = "boolean" },
]
)",
                          "medium.toml");
  t.prot = t.schema.protected_indices();
  t.model = random_net(t.name, t.schema, t.prot, {8, 6}, seed, 1.0, 0.0);
  return t;
}

Tiny random_tiny(int i) {
  Tiny t;
  t.schema = schema_of(kSchemas[i % 4]);
  t.prot = t.schema.protected_indices();
  const std::vector<std::vector<int>> shapes = {{3}, {4}, {3, 2}, {2, 3}};
  const std::vector<int>& hidden = shapes[static_cast<std::size_t>((i / 4) % 4)];
  const double prot_scale = i % 5 == 3 ? 0.0 : i % 3 == 1 ? 0.25 : 1.0;
  const double threshold = i % 7 == 2 ? 0.25 : 0.0;
  t.name = "random" + std::to_string(i);
  t.model = random_net(t.name, t.schema, t.prot, hidden, 1000 + static_cast<std::uint64_t>(i), prot_scale, threshold);
  return t;
}

Model tanh_inside(double p_weight) {
  const Schema s = schema_of(kBoolLast);
  ModelBuilder b("tanh_inside", s.model_input_names());
  Eigen::MatrixXd w1(2, 4);
  w1 << 1, -1, 0.5, p_weight, -0.5, 1, 1, 0;
  const int h = b.unary(OpKind::Tanh, b.dense(b.input(), w1, Eigen::VectorXd::Zero(2)), "squash");
  Eigen::MatrixXd w2(1, 2);
  w2 << 1, -1;
  const int z = b.dense(h, w2, Eigen::VectorXd::Constant(1, 0.125));
  return b.finish(b.sigmoid(z), DecisionRule::threshold_on(z, 0.0));
}

Tiny hand_made(const std::string& which) {
  Tiny t;
  t.name = which;
  t.schema = schema_of(kBoolLast);
  t.prot = t.schema.protected_indices();
  ModelBuilder b(which, t.schema.model_input_names());
  Eigen::MatrixXd w1;
  Eigen::VectorXd b1;
  Eigen::MatrixXd w2;
  double b2 = kOffset;
  if (which == "zero_weight") {  // label = [a + 2c > b + 1.5]; p has no weight at all
    w1.resize(2, 4);
    w1 << 1, -1, 2, 0, -1, 1, -2, 0;
    b1.resize(2);
    b1 << -1.5, 1.5;
    w2.resize(1, 2);
    w2 << 1, -1;
  } else if (which == "small_weight") {  // label = [a >= b]; p moves both ReLUs by 1/8, never the label
    w1.resize(2, 4);
    w1 << 1, -1, 0, 0.125, -1, 1, 0, 0.125;
    b1.resize(2);
    b1 << 0.5, 0.5;
    w2.resize(1, 2);
    w2 << 1, -1;
  } else if (which == "label_is_p") {  // label = p: every point is half of a witness pair
    w1.resize(2, 4);
    w1 << 0, 0, 0, 1, 1, 0, 0, 0;
    b1.resize(2);
    b1 << 0, 0;
    w2.resize(1, 2);
    w2 << 2, 0;
    b2 = -1 + kOffset;
  } else if (which == "rare") {  // label = [a + b + p > 6.5]: the only witnesses have a = b = 3
    w1.resize(1, 4);
    w1 << 1, 1, 0, 1;
    b1.resize(1);
    b1 << -5;
    w2.resize(1, 1);
    w2 << 1;
    b2 = -1.5 + kOffset;
  } else {
    ADD_FAILURE() << "unknown hand-made network " << which;
  }
  const int h = b.relu(b.dense(b.input(), w1, b1));
  const int z = b.dense(h, w2, Eigen::VectorXd::Constant(1, b2));
  t.model = b.finish(b.sigmoid(z), DecisionRule::threshold_on(z, 0.0));
  return t;
}

Tiny linear_bool_last(const std::string& name, double p_weight) {
  Tiny t;
  t.name = name;
  t.schema = schema_of(kBoolLast);
  t.prot = t.schema.protected_indices();
  ModelBuilder b(t.name, t.schema.model_input_names());
  Eigen::MatrixXd w(1, 4);
  w << 1, 0, 0, p_weight;
  const int z = b.dense(b.input(), w, Eigen::VectorXd::Constant(1, -1.0));
  t.model = b.finish(b.sigmoid(z), DecisionRule::threshold_on(z, 0.0));
  return t;
}

Eigen::MatrixXd domain_points(const Schema& s) {
  long long n = 1;
  for (const Feature& f : s.features()) n *= static_cast<long long>(f.max - f.min + 1);
  Eigen::MatrixXd out(s.size(), n);
  Eigen::VectorXd cur(s.size());
  for (int i = 0; i < s.size(); ++i) cur[i] = s.feature(i).min;
  for (long long j = 0; j < n; ++j) {
    out.col(j) = cur;
    for (int i = s.size() - 1; i >= 0; --i) {
      if (cur[i] < s.feature(i).max) {
        cur[i] += 1;
        break;
      }
      cur[i] = s.feature(i).min;
    }
  }
  return out;
}

Truth brute_force(const Tiny& t) {
  const Eigen::MatrixXd raw = domain_points(t.schema);
  const Eigen::MatrixXd x = t.schema.to_model_columns(raw);
  const Evaluation e64 = evaluate(t.model, x, Precision::Float64);
  const Evaluation e32 = evaluate(t.model, x, Precision::Float32);
  std::vector<bool> is_prot(static_cast<std::size_t>(t.schema.size()), false);
  for (int f : t.prot) is_prot[static_cast<std::size_t>(f)] = true;
  std::map<std::vector<double>, std::vector<Eigen::Index>> groups;
  for (Eigen::Index j = 0; j < raw.cols(); ++j) {
    // The networks are built so that no logit is near a tie: float32 agrees with double everywhere.
    EXPECT_EQ(e64.labels[static_cast<std::size_t>(j)], e32.labels[static_cast<std::size_t>(j)])
        << t.name << ": knife-edge at " << t.schema.display_row(raw.col(j));
    std::vector<double> key;
    for (int f = 0; f < t.schema.size(); ++f) {
      if (!is_prot[static_cast<std::size_t>(f)]) key.push_back(raw(f, j));
    }
    groups[key].push_back(j);
  }
  Truth out;
  for (const auto& [key, members] : groups) {
    for (Eigen::Index i : members) {
      for (Eigen::Index j : members) {
        const auto a = static_cast<std::size_t>(i);
        const auto b = static_cast<std::size_t>(j);
        if (i == j || e64.labels[a] == e64.labels[b] || e32.labels[a] == e32.labels[b]) continue;
        ++out.pairs;
        out.witnesses.emplace(row(raw.col(i)), row(raw.col(j)));
        out.discriminated.insert(row(raw.col(i)));
      }
    }
  }
  return out;
}

double fair_share(const Tiny& t) {
  const Eigen::MatrixXd raw = domain_points(t.schema);
  const Evaluation e64 = evaluate(t.model, t.schema.to_model_columns(raw), Precision::Float64);
  std::vector<bool> is_prot(static_cast<std::size_t>(t.schema.size()), false);
  for (int f : t.prot) is_prot[static_cast<std::size_t>(f)] = true;
  std::map<std::vector<double>, std::set<int>> labels;  // non-protected values -> labels seen
  for (Eigen::Index j = 0; j < raw.cols(); ++j) {
    std::vector<double> key;
    for (int f = 0; f < t.schema.size(); ++f) {
      if (!is_prot[static_cast<std::size_t>(f)]) key.push_back(raw(f, j));
    }
    labels[key].insert(e64.labels[static_cast<std::size_t>(j)]);
  }
  long long fair = 0;
  for (const auto& [key, seen] : labels) fair += seen.size() == 1 ? 1 : 0;
  return static_cast<double>(fair) / static_cast<double>(labels.size());
}

void expect_real_witness(const Tiny& t, const Truth& truth, const WitnessPair& w) {
  SCOPED_TRACE(t.name + ": witness " + t.schema.display_row(w.raw) + " / " + t.schema.display_row(w.raw_prime));
  ASSERT_EQ(w.raw.size(), t.schema.size());
  ASSERT_EQ(w.raw_prime.size(), t.schema.size());
  EXPECT_TRUE(t.schema.contains(w.raw));
  EXPECT_TRUE(t.schema.contains(w.raw_prime));
  std::vector<bool> is_prot(static_cast<std::size_t>(t.schema.size()), false);
  for (int f : t.prot) is_prot[static_cast<std::size_t>(f)] = true;
  bool differs = false;
  for (int f = 0; f < t.schema.size(); ++f) {
    if (is_prot[static_cast<std::size_t>(f)]) {
      differs = differs || w.raw[f] != w.raw_prime[f];
    } else {
      EXPECT_EQ(w.raw[f], w.raw_prime[f]) << "non-protected feature " << t.schema.feature(f).name << " differs";
    }
  }
  EXPECT_TRUE(differs) << "no protected feature differs";
  EXPECT_TRUE(w.x == t.schema.to_model(w.raw));
  EXPECT_TRUE(w.x_prime == t.schema.to_model(w.raw_prime));
  Eigen::MatrixXd both(t.schema.model_width(), 2);
  both.col(0) = t.schema.to_model(w.raw);
  both.col(1) = t.schema.to_model(w.raw_prime);
  const Evaluation e64 = Evaluator<double>(t.model).run(both);
  const Evaluation e32 = Evaluator<float>(t.model).run(both);
  EXPECT_NE(e64.labels[0], e64.labels[1]);
  EXPECT_NE(e32.labels[0], e32.labels[1]);
  EXPECT_EQ(w.label, e64.labels[0]);
  EXPECT_EQ(w.label_prime, e64.labels[1]);
  EXPECT_TRUE(w.output == e64.outputs.col(0));
  EXPECT_TRUE(w.output_prime == e64.outputs.col(1));
  EXPECT_TRUE(truth.witnesses.contains({row(w.raw), row(w.raw_prime)})) << "brute force does not know this pair";
}

void expect_first_answer(const Tiny& t, const Truth& truth, const FairnessResult& r) {
  if (truth.pairs > 0) {
    ASSERT_EQ(r.verdict, Verdict::Witness) << r.reason;
    ASSERT_EQ(r.witnesses.size(), 1U);
    EXPECT_TRUE(r.reason.empty());
    expect_real_witness(t, truth, r.witnesses[0]);
  } else {
    ASSERT_EQ(r.verdict, Verdict::Verified) << r.reason;
    EXPECT_TRUE(r.exhaustive);
    EXPECT_TRUE(r.witnesses.empty());
  }
}

TreeEnsemble::Tree random_tree(std::mt19937& rng, int depth, const std::vector<double>& lo,
                               const std::vector<double>& hi, int targets, bool sets, double offset) {
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
      for (int k = 0; k < targets; ++k) t.leaves.push_back({id, k, static_cast<double>(weight(rng)) / 8.0 + offset});
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

Tiny random_forest(const std::string& toml, std::uint64_t seed, bool argmax, bool scaled, bool ties) {
  Tiny t;
  t.schema = parse_schema(toml, "tiny_trees.toml");
  t.prot = t.schema.protected_indices();
  t.name = std::string(t.schema.name()) + (argmax ? " argmax " : " threshold ") + std::to_string(seed);
  std::mt19937 rng(static_cast<unsigned>(seed));
  const int w = t.schema.model_width();
  // Model-input ranges: the domain's corners through the schema's encoding.
  std::vector<double> lo(static_cast<std::size_t>(w), INFINITY), hi(static_cast<std::size_t>(w), -INFINITY);
  const Eigen::MatrixXd x = t.schema.to_model_columns(domain_points(t.schema));
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
  te->base_values.assign(static_cast<std::size_t>(te->n_targets), ties ? 0.0 : 1.0 / 512.0);
  for (int k = 0; k < 6; ++k)
    te->trees.push_back(random_tree(rng, 3, lo, hi, te->n_targets, !scaled, ties ? 0.0 : 1.0 / 1024.0));
  const int trees = b.tree_ensemble(in, te);
  if (argmax) {
    t.model = b.finish(b.unary(OpKind::Softmax, trees), DecisionRule::argmax_of(trees));
  } else {
    t.model = b.finish(b.sigmoid(trees), DecisionRule::threshold_on(trees, 0.0));
  }
  return t;
}

std::map<std::vector<double>, bool> unfair_points(const Tiny& t) {
  const Eigen::MatrixXd raw = domain_points(t.schema);
  const Evaluation e = evaluate(t.model, t.schema.to_model_columns(raw));
  std::map<std::vector<double>, std::set<int>> labels;
  for (Eigen::Index j = 0; j < raw.cols(); ++j) {
    Eigen::VectorXd key = raw.col(j);
    for (int f : t.prot) key(f) = t.schema.feature(f).min;
    labels[row(key)].insert(e.labels[static_cast<std::size_t>(j)]);
  }
  std::map<std::vector<double>, bool> out;
  for (const auto& [key, seen] : labels) out[key] = seen.size() > 1;
  return out;
}

Env make_env(const std::string& time_limit, unsigned threads) {
  Env env;
  env.options.set("time-limit", time_limit);
  if (threads > 0) env.options.set("threads", std::to_string(threads));
  env.start();
  return env;
}

}  // namespace witness::test
