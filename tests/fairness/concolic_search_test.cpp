#include "fairness/concolic_search.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/env.h"
#include "core/error.h"
#include "domain/schema.h"
#include "fairness/transform.h"
#include "model/evaluator.h"
#include "model/loaders.h"

namespace witness {
namespace {

std::string source_path(const std::string& rel) { return std::string(WITNESS_SOURCE_DIR) + "/" + rel; }

// ---------------------------------------------------------------------------------------------
// Tiny networks whose whole domain can be enumerated. Every weight is a small dyadic rational and
// the output bias carries an extra 2^-14, so every logit is exact in double, float32 and the
// solver's rationals, and is never exactly on the threshold: brute force in double is the truth.

// Boolean protected feature, last.
constexpr const char* kBoolLast = R"(
name = "bool_last"
protected = ["p"]
[[features]]
name = "a"
kind = "integer"
min = 0
max = 3
[[features]]
name = "b"
kind = "integer"
min = 0
max = 3
[[features]]
name = "c"
kind = "integer"
min = 0
max = 2
[[features]]
name = "p"
kind = "boolean"
)";

// Categorical protected feature with 3 values (one model input holding the code), in the middle;
// a normalised integer after it.
constexpr const char* kCategoricalMiddle = R"(
name = "categorical_middle"
protected = ["g"]
[[features]]
name = "a"
kind = "integer"
min = 0
max = 4
[[features]]
name = "g"
kind = "categorical"
categories = ["x", "y", "z"]
[[features]]
name = "b"
kind = "integer"
min = -2
max = 2
scale = 0.5
offset = -1
)";

// One-hot categorical protected feature with 3 values, first.
constexpr const char* kOneHotFirst = R"(
name = "one_hot_first"
protected = ["g"]
[[features]]
name = "g"
kind = "categorical"
categories = ["x", "y", "z"]
encoding = "one-hot"
[[features]]
name = "a"
kind = "integer"
min = 0
max = 3
[[features]]
name = "b"
kind = "integer"
min = 0
max = 3
)";

// Two protected features (a boolean and a categorical with 3 values) and a mean/std normalisation.
constexpr const char* kTwoProtected = R"(
name = "two_protected"
protected = ["s", "r"]
[[features]]
name = "s"
kind = "boolean"
[[features]]
name = "a"
kind = "integer"
min = 0
max = 3
[[features]]
name = "r"
kind = "categorical"
categories = ["u", "v", "w"]
[[features]]
name = "b"
kind = "integer"
min = 0
max = 2
mean = 1
std = 2
)";

constexpr double kOffset = 1.0 / 16384;  // 2^-14: finer than any logit's resolution here

struct Tiny {
  std::string name;
  Schema schema;
  Model model;
  std::vector<int> prot;
};

Schema schema_of(const char* toml) { return parse_schema(toml, "tiny.toml"); }

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

// A random ReLU network: weights and biases in [-1, 1] in steps of 1/8; the first layer's protected
// columns multiplied by `prot_scale` (1, 1/4 or 0); the output bias shifted by 2^-14.
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

// Whether the first layer gives a protected model input a non-zero weight.
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

const char* kSchemas[] = {kBoolLast, kCategoricalMiddle, kOneHotFirst, kTwoProtected};

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

// Hand-made networks over kBoolLast (inputs a, b, c, p).
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

// Every raw point of an integral schema, [features][n].
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

struct Truth {
  long long pairs = 0;                                                      // ordered witness pairs
  std::set<std::pair<std::vector<double>, std::vector<double>>> witnesses;  // raw rows
  std::set<std::vector<double>> discriminated;                              // raw rows that are half of a pair
};

std::vector<double> row(const Eigen::VectorXd& v) { return {v.data(), v.data() + v.size()}; }

// Brute force over every pair of domain points that differ only in the protected features: a pair
// is a witness when its labels differ in double and in float32 (as replay_witness requires).
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

// An independent check of a returned witness: same non-protected raw values, some protected value
// differs, both in the domain, model inputs are the schema's, labels differ in double and float32
// when the model itself is run, and the pair is one brute force found.
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

Env make_env(const std::string& time_limit = "30") {
  Env env;
  env.options.set("time-limit", time_limit);
  env.start();
  return env;
}

// Relations that hold for every search of these exact networks (no rounding, no time-outs).
void expect_exact_stats(const FairnessResult& r) {
  const SearchStats& st = r.stats;
  EXPECT_EQ(st.unknown, 0);
  EXPECT_EQ(st.rejected, 0);
  EXPECT_EQ(st.divergences, 0);
  EXPECT_FALSE(st.concretised);
  // Each exploration runs its start point once and then once per Sat answer.
  EXPECT_EQ(st.tests, st.seeds + st.sat);
  // Without divergences every run takes a path no earlier run of its tree took.
  EXPECT_LE(st.paths, st.tests);
  EXPECT_EQ(st.paths, st.tests);
  // Items handed out are solved (sat, unsat) or still queued when the search stopped.
  EXPECT_GE(st.queued, st.sat + st.unsat + st.unknown);
  // The LP shortcut answers some checks; it is counted inside sat and unsat.
  EXPECT_LE(st.guessed, st.sat);
  EXPECT_LE(st.refuted, st.unsat);
  EXPECT_GE(st.guessed, 0);
  EXPECT_GE(st.refuted, 0);
  EXPECT_GE(st.seconds, 0.0);
}

const FrontierOrder kOrders[] = {FrontierOrder::Bfs, FrontierOrder::Dfs, FrontierOrder::DecisionFirst};
const char* order_name(FrontierOrder o) {
  switch (o) {
    case FrontierOrder::Bfs: return "bfs";
    case FrontierOrder::Dfs: return "dfs";
    case FrontierOrder::DecisionFirst: return "decision-first";
  }
  return "?";
}

// dual_search, every frontier order: Witness iff brute force finds a pair, else Verified and exhaustive.
void check_dual(const Tiny& t, const Eigen::MatrixXd* seeds, const std::vector<FrontierOrder>& orders) {
  const Truth truth = brute_force(t);
  for (FrontierOrder order : orders) {
    SCOPED_TRACE(t.name + " dual " + order_name(order));
    ConcolicSearchOptions o;
    o.protected_features = t.prot;
    o.order = order;
    o.seeds = seeds;
    Env env = make_env();
    const FairnessResult r = dual_search(t.model, t.schema, o, env);
    EXPECT_EQ(r.engine, "dual");
    expect_exact_stats(r);
    EXPECT_EQ(r.stats.seeds, 1);
    EXPECT_GT(r.stats.frontier, 0);  // every input is symbolic in the dual
    if (truth.pairs > 0) {
      ASSERT_EQ(r.verdict, Verdict::Witness) << r.reason;
      ASSERT_EQ(r.witnesses.size(), 1U);
      EXPECT_TRUE(r.reason.empty());
      expect_real_witness(t, truth, r.witnesses[0]);
    } else {
      ASSERT_EQ(r.verdict, Verdict::Verified) << r.reason;
      EXPECT_TRUE(r.exhaustive);
      EXPECT_TRUE(r.witnesses.empty());
      EXPECT_EQ(r.stats.queued, r.stats.sat + r.stats.unsat);  // the queue was emptied
      if (protected_weight_nonzero(t)) {
        EXPECT_GT(r.stats.unsat, 0);
      }
    }
  }
}

// concolic_search from every domain point: Witness iff brute force finds a pair; never Verified.
void check_concolic(const Tiny& t, const std::vector<FrontierOrder>& orders) {
  const Truth truth = brute_force(t);
  const Eigen::MatrixXd seeds = domain_points(t.schema);
  for (FrontierOrder order : orders) {
    SCOPED_TRACE(t.name + " concolic " + order_name(order));
    ConcolicSearchOptions o;
    o.protected_features = t.prot;
    o.order = order;
    o.seeds = &seeds;
    Env env = make_env();
    const FairnessResult r = concolic_search(t.model, t.schema, o, env);
    EXPECT_EQ(r.engine, "concolic");
    EXPECT_NE(r.verdict, Verdict::Verified);
    EXPECT_FALSE(r.exhaustive);
    expect_exact_stats(r);
    // The first seed's frontier: one item per branch that reads a protected input.
    EXPECT_EQ(r.stats.frontier > 0, protected_weight_nonzero(t));
    if (!protected_weight_nonzero(t)) {
      EXPECT_EQ(r.stats.sat + r.stats.unsat, 0);
      EXPECT_EQ(r.stats.tests, r.stats.seeds);
    }
    if (truth.pairs > 0) {
      ASSERT_EQ(r.verdict, Verdict::Witness) << r.reason;
      ASSERT_EQ(r.witnesses.size(), 1U);
      expect_real_witness(t, truth, r.witnesses[0]);
      // In order: the witness starts from the first discriminated seed, and the search stops there.
      const std::vector<double> first = row(r.witnesses[0].raw);
      EXPECT_EQ(r.stats.seeds - 1, r.stats.seeds_exhausted);
      Eigen::Index pos = 0;
      while (pos < seeds.cols() && row(seeds.col(pos)) != first) ++pos;
      EXPECT_EQ(pos + 1, r.stats.seeds);
      for (Eigen::Index j = 0; j < pos; ++j) EXPECT_FALSE(truth.discriminated.contains(row(seeds.col(j))));
      EXPECT_TRUE(truth.discriminated.contains(first));
    } else {
      ASSERT_EQ(r.verdict, Verdict::Inconclusive);
      EXPECT_TRUE(r.witnesses.empty());
      EXPECT_EQ(r.stats.seeds, seeds.cols());
      EXPECT_EQ(r.stats.seeds_exhausted, r.stats.seeds);
      EXPECT_FALSE(r.reason.empty());
    }
  }
}

constexpr int kRandomNets = 30;
const std::vector<FrontierOrder> kAllOrders(std::begin(kOrders), std::end(kOrders));

// Dual search on random networks [from, to). Fast: one frontier order per network (rotating), from
// a random start point, and every other network also from an explicit start row (the last domain
// point) in the next order. Slow: every order from both start points.
void dual_on_random(int from, int to, bool all) {
  for (int i = from; i < to; ++i) {
    const Tiny t = random_tiny(i);
    const Eigen::MatrixXd last = domain_points(t.schema).rightCols(1);
    if (all) {
      check_dual(t, nullptr, kAllOrders);
      check_dual(t, &last, kAllOrders);
    } else {
      check_dual(t, nullptr, {kOrders[i % 3]});
      if (i % 2 == 0) check_dual(t, &last, {kOrders[(i + 1) % 3]});
    }
  }
}

TEST(ConcolicSearch, DualSearchAgreesWithBruteForceOnRandomNetworks0To14) { dual_on_random(0, 15, false); }
TEST(ConcolicSearch, DualSearchAgreesWithBruteForceOnRandomNetworks15To29) { dual_on_random(15, 30, false); }
TEST(ConcolicSearch, DualSearchEveryOrderOnRandomNetworksSlow) { dual_on_random(0, kRandomNets, true); }

// The single-instance search from every domain point (about 100 seeds) builds a solver per seed:
// the fast test takes every fifth network in one order, the slow one every network in every order.
TEST(ConcolicSearch, ConcolicSearchAgreesWithBruteForceOnRandomNetworks) {
  for (int i = 0; i < kRandomNets; i += 5) check_concolic(random_tiny(i), {kOrders[(i / 5) % 3]});
}
TEST(ConcolicSearch, ConcolicSearchEveryOrderOnRandomNetworksSlow) {
  for (int i = 0; i < kRandomNets; ++i) check_concolic(random_tiny(i), kAllOrders);
}

// The random family covers every kind of case: fair and unfair, each schema.
TEST(ConcolicSearch, RandomFamilyHasFairAndUnfairNetworks) {
  int fair = 0;
  int unfair = 0;
  int fair_with_weight = 0;
  for (int i = 0; i < kRandomNets; ++i) {
    const Tiny t = random_tiny(i);
    const bool w = brute_force(t).pairs > 0;
    (w ? unfair : fair) += 1;
    if (!w && protected_weight_nonzero(t)) ++fair_with_weight;
  }
  EXPECT_GE(fair, 5);
  EXPECT_GE(unfair, 10);
  EXPECT_GE(fair_with_weight, 1);
}

TEST(ConcolicSearch, DualSearchAgreesWithBruteForceOnHandMadeNetworks) {
  for (const char* which : {"zero_weight", "small_weight", "label_is_p", "rare"}) {
    check_dual(hand_made(which), nullptr, kAllOrders);
  }
}
TEST(ConcolicSearch, ConcolicSearchAgreesWithBruteForceOnHandMadeFairNetworks) {
  for (const char* which : {"zero_weight", "small_weight"}) check_concolic(hand_made(which), {FrontierOrder::Dfs});
}
TEST(ConcolicSearch, ConcolicSearchAgreesWithBruteForceOnHandMadeUnfairNetworks) {
  for (const char* which : {"label_is_p", "rare"}) check_concolic(hand_made(which), {FrontierOrder::DecisionFirst});
}

TEST(ConcolicSearch, HandMadeNetworksAreWhatTheySay) {
  EXPECT_EQ(brute_force(hand_made("zero_weight")).pairs, 0);
  EXPECT_EQ(brute_force(hand_made("small_weight")).pairs, 0);
  EXPECT_TRUE(protected_weight_nonzero(hand_made("small_weight")));
  EXPECT_EQ(brute_force(hand_made("label_is_p")).pairs, 2 * 4 * 4 * 3);
  EXPECT_EQ(brute_force(hand_made("rare")).pairs, 2 * 3);  // a = b = 3, any c, both directions
}

// With a quota above one, the dual search keeps going: every witness is real and distinct, and
// with a quota it cannot reach, the tree is exhausted.
TEST(ConcolicSearch, DualSearchManyWitnessesAreDistinctAndReal) {
  for (const char* which : {"label_is_p", "rare"}) {
    const Tiny t = hand_made(which);
    const Truth truth = brute_force(t);
    for (int quota : {3, 1000000}) {
      for (FrontierOrder order : kOrders) {
        SCOPED_TRACE(std::string(which) + " quota " + std::to_string(quota) + " " + order_name(order));
        ConcolicSearchOptions o;
        o.protected_features = t.prot;
        o.order = order;
        o.max_witnesses = quota;
        Env env = make_env();
        const FairnessResult r = dual_search(t.model, t.schema, o, env);
        ASSERT_EQ(r.verdict, Verdict::Witness);
        expect_exact_stats(r);
        std::set<std::pair<std::vector<double>, std::vector<double>>> seen;
        for (const WitnessPair& w : r.witnesses) {
          expect_real_witness(t, truth, w);
          EXPECT_TRUE(seen.emplace(row(w.raw), row(w.raw_prime)).second) << "a witness was returned twice";
        }
        EXPECT_LE(static_cast<long long>(r.witnesses.size()), truth.pairs);
        if (quota == 3) {
          if (std::string(which) == "label_is_p") {
            EXPECT_EQ(r.witnesses.size(), 3U);
          }
          EXPECT_LE(r.witnesses.size(), 3U);
        } else {
          EXPECT_TRUE(r.exhaustive);
          EXPECT_GE(r.witnesses.size(), 1U);
          EXPECT_EQ(r.stats.queued, r.stats.sat + r.stats.unsat);
        }
      }
    }
  }
}

// The same for the single-instance search: at most one witness per seed, so distinct x.
TEST(ConcolicSearch, ConcolicSearchManyWitnessesComeFromDistinctSeeds) {
  const Tiny t = hand_made("label_is_p");
  const Truth truth = brute_force(t);
  const Eigen::MatrixXd seeds = domain_points(t.schema);
  ConcolicSearchOptions o;
  o.protected_features = t.prot;
  o.seeds = &seeds;
  o.max_witnesses = 7;
  Env env = make_env();
  const FairnessResult r = concolic_search(t.model, t.schema, o, env);
  ASSERT_EQ(r.verdict, Verdict::Witness);
  ASSERT_EQ(r.witnesses.size(), 7U);
  EXPECT_EQ(r.stats.seeds, 7);
  std::set<std::vector<double>> xs;
  for (const WitnessPair& w : r.witnesses) {
    expect_real_witness(t, truth, w);
    EXPECT_TRUE(xs.insert(row(w.raw)).second);
  }
  expect_exact_stats(r);
}

TEST(ConcolicSearch, SeedOrderAndLimits) {
  const Tiny t = hand_made("rare");
  const Truth truth = brute_force(t);
  const Eigen::MatrixXd seeds = domain_points(t.schema);
  {  // max_seeds stops before the only discriminated seeds (a = b = 3 come last in the enumeration)
    ConcolicSearchOptions o;
    o.protected_features = t.prot;
    o.seeds = &seeds;
    o.max_seeds = 20;
    Env env = make_env();
    const FairnessResult r = concolic_search(t.model, t.schema, o, env);
    EXPECT_EQ(r.verdict, Verdict::Inconclusive);
    EXPECT_EQ(r.stats.seeds, 20);
    EXPECT_EQ(r.stats.seeds_exhausted, 20);
  }
  {  // k-means order still visits every seed, so it finds the witness (seeds with c = 0 only)
    Eigen::MatrixXd some(seeds.rows(), seeds.cols() / 3);
    Eigen::Index n = 0;
    for (Eigen::Index j = 0; j < seeds.cols(); ++j) {
      if (seeds(2, j) == 0) some.col(n++) = seeds.col(j);
    }
    ASSERT_EQ(n, some.cols());
    ConcolicSearchOptions o;
    o.protected_features = t.prot;
    o.seeds = &some;
    o.seed_order = SeedOrder::KMeans;
    o.kmeans_k = 3;
    Env env = make_env();
    const FairnessResult r = concolic_search(t.model, t.schema, o, env);
    ASSERT_EQ(r.verdict, Verdict::Witness);
    expect_real_witness(t, truth, r.witnesses[0]);
  }
  {  // random seeds (no matrix): label_is_p is discriminated everywhere, so the first seed does it
    const Tiny u = hand_made("label_is_p");
    ConcolicSearchOptions o;
    o.protected_features = u.prot;
    o.max_seeds = 5;
    Env env = make_env();
    const FairnessResult r = concolic_search(u.model, u.schema, o, env);
    ASSERT_EQ(r.verdict, Verdict::Witness);
    EXPECT_EQ(r.stats.seeds, 1);
    expect_real_witness(u, brute_force(u), r.witnesses[0]);
  }
  {  // rows outside the domain are skipped, not searched
    Eigen::MatrixXd bad = seeds.leftCols(3);
    bad(0, 0) = 99;   // a > max
    bad(0, 2) = 0.5;  // not an integer
    ConcolicSearchOptions o;
    o.protected_features = t.prot;
    o.seeds = &bad;
    Env env = make_env();
    const FairnessResult r = concolic_search(t.model, t.schema, o, env);
    EXPECT_EQ(r.verdict, Verdict::Inconclusive);
    EXPECT_EQ(r.stats.seeds, 1);
  }
  EXPECT_EQ(parse_seed_order("in-order"), SeedOrder::InOrder);
  EXPECT_EQ(parse_seed_order("kmeans"), SeedOrder::KMeans);
  EXPECT_THROW((void)parse_seed_order("bogus"), InputError);
}

TEST(ConcolicSearch, DualSearchSkipsStartRowsOutsideTheDomain) {
  const Tiny t = hand_made("small_weight");
  Eigen::MatrixXd seeds = domain_points(t.schema).leftCols(2);
  seeds(1, 0) = 17;  // b > max: the second row is the start
  ConcolicSearchOptions o;
  o.protected_features = t.prot;
  o.seeds = &seeds;
  Env env = make_env();
  const FairnessResult r = dual_search(t.model, t.schema, o, env);
  EXPECT_EQ(r.verdict, Verdict::Verified);
  EXPECT_TRUE(r.exhaustive);
}

TEST(ConcolicSearch, TimeLimitGivesInconclusive) {
  const Tiny t = hand_made("small_weight");  // fair, so the first run cannot end the search
  ConcolicSearchOptions o;
  o.protected_features = t.prot;
  Env env = make_env("0.000001");
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const FairnessResult r = dual_search(t.model, t.schema, o, env);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive);
  EXPECT_FALSE(r.exhaustive);
  EXPECT_NE(r.reason.find("time limit"), std::string::npos) << r.reason;
  EXPECT_EQ(r.stats.tests, 1);

  const Eigen::MatrixXd seeds = domain_points(t.schema);
  o.seeds = &seeds;
  Env env2 = make_env("0.000001");
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const FairnessResult c = concolic_search(t.model, t.schema, o, env2);
  EXPECT_EQ(c.verdict, Verdict::Inconclusive);
  EXPECT_LT(c.stats.seeds, seeds.cols());
  EXPECT_NE(c.reason.find("time limit"), std::string::npos) << c.reason;
}

TEST(ConcolicSearch, BadOptionsAreInputErrors) {
  const Tiny t = hand_made("rare");
  ConcolicSearchOptions o;
  Env env = make_env();
  EXPECT_THROW((void)dual_search(t.model, t.schema, o, env), InputError);  // no protected feature
  EXPECT_THROW((void)concolic_search(t.model, t.schema, o, env), InputError);
  o.protected_features = t.prot;
  o.max_witnesses = 0;
  EXPECT_THROW((void)dual_search(t.model, t.schema, o, env), InputError);
  o.max_witnesses = 1;
  const Schema other = schema_of(kOneHotFirst);  // 5 model inputs, the model reads 4
  EXPECT_THROW((void)dual_search(t.model, other, o, env), InputError);
  EXPECT_THROW((void)concolic_search(t.model, other, o, env), InputError);
}

// ---------------------------------------------------------------------------------------------
// Fairify networks with the protected input's first-layer weights zeroed: no label can depend on
// it, so the dual search must prove that (never a witness). Release, 2 cores (CPU seconds): AC9 sex
// 1.6 s; AC9 age 1.8 s; GC4 age 2.1 s. Within 60 s none of GC1, GC2, GC3 (age), AC1, AC3, AC6, AC8,
// AC10 (sex), AC1 race or AC9 race finishes.

FairnessResult zeroed_dual(const std::string& model_rel, const std::string& schema_rel, const std::string& feature) {
  const Model m = load_model(source_path(model_rel));
  const Schema s = load_schema(source_path(schema_rel));
  const int f = s.feature_index(feature);
  std::vector<int> inputs(static_cast<std::size_t>(s.feature(f).model_width));
  for (std::size_t k = 0; k < inputs.size(); ++k) inputs[k] = s.feature(f).model_offset + static_cast<int>(k);
  const Model fair = zero_input_weights(m, inputs);
  ConcolicSearchOptions o;
  o.protected_features = {f};
  Env env = make_env("120");
  FairnessResult r = dual_search(fair, s, o, env);
  SCOPED_TRACE(model_rel + " zeroed " + feature);
  EXPECT_NE(r.verdict, Verdict::Witness);
  EXPECT_TRUE(r.witnesses.empty());
  EXPECT_EQ(r.verdict, Verdict::Verified) << r.reason;
  EXPECT_TRUE(r.exhaustive);
  EXPECT_EQ(r.stats.unknown, 0);
  EXPECT_EQ(r.stats.tests, 1 + r.stats.sat);
  EXPECT_EQ(r.stats.queued, r.stats.sat + r.stats.unsat);
  EXPECT_LE(r.stats.paths, r.stats.tests);
  EXPECT_GT(r.stats.frontier, 0);
  EXPECT_GT(r.stats.unsat, 0);
  return r;
}

TEST(DualSearchFairify, ZeroedAC9SexIsVerified) {
  (void)zeroed_dual("benchmarks/fairify/models/adult/AC9.h5", "benchmarks/fairify/adult.toml", "sex");
}
TEST(DualSearchFairify, ZeroedAC9AgeIsVerifiedSlow) {
  (void)zeroed_dual("benchmarks/fairify/models/adult/AC9.h5", "benchmarks/fairify/adult.toml", "age");
}
TEST(DualSearchFairify, ZeroedGC4AgeIsVerifiedSlow) {
  (void)zeroed_dual("benchmarks/fairify/models/german/GC4.h5", "benchmarks/fairify/german.toml", "age");
}

}  // namespace
}  // namespace witness
