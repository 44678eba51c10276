#include "query/tree_query.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "model/loaders.h"
#include "query/query.h"
#include "support/paths.h"
#include "support/sanitized.h"
#include "support/tiny_networks.h"

namespace witness {
namespace {

// The box path against the solver: the same status, answer and emptiness of the premise; every
// scenario was already replayed by answer_query (exactly, then by the library evaluator).
// Returns whether the box path answered.
bool same_as_solver(const Model& model, const Query& q) {
  QueryOptions boxes;
  boxes.enumerate_cases = 0;  // small domains would be enumerated before the box path
  QueryOptions smt = boxes;
  smt.tree_boxes = 0;
  const QueryAnswer a = answer_query(model, q, boxes);
  const QueryAnswer b = answer_query(model, q, smt);
  const std::string what =
      fmt::format("{} ({} {}, {})", q.name, to_string(q.kind), q.behavior.text, to_string(q.semantics));
  EXPECT_EQ(a.status, b.status) << what << ": " << a.reason_unknown << " / " << b.reason_unknown;
  EXPECT_EQ(a.answer, b.answer) << what << "; box path: " << a.note;
  EXPECT_EQ(a.vacuous, b.vacuous) << what;
  EXPECT_EQ(a.scenario.empty(), b.scenario.empty()) << what;
  if (!a.scenario.empty()) {
    EXPECT_TRUE(a.label.has_value()) << what;
  }
  return a.note.find("branch and bound") != std::string::npos;
}

Query make(const std::string& name, QueryKind kind, Semantics sem, std::vector<QueryInput> inputs,
           const std::string& behavior) {
  Query q;
  q.name = name;
  q.where = "test: query '" + name + "'";
  q.kind = kind;
  q.semantics = sem;
  q.inputs = std::move(inputs);
  q.behavior.text = behavior;
  return q;
}

// x0 an int in [0, 6], x1 and x2 reals in [-3, 3], x3 a bool; five trees of depth 3 (Lt, Leq,
// Geq and member splits on thresholds that are multiples of 0.5). Kind 0: one score, threshold 0;
// 1: three averaged targets, argmax; 2: one score as the pair [1 - s, s], argmax; 3: kind 0 behind
// a scaler, which the box path refuses.
Model random_forest_model(std::mt19937& rng, int kind) {
  const std::vector<double> lo{0, -3, -3, 0}, hi{6, 3, 3, 1};
  ModelBuilder b("forest", {"x0", "x1", "x2", "x3"});
  auto te = std::make_shared<TreeEnsemble>();
  te->n_targets = kind == 1 ? 3 : 1;
  te->aggregate = kind == 1 ? TreeEnsemble::Aggregate::Average : TreeEnsemble::Aggregate::Sum;
  te->binary_single_score = kind == 2;
  te->binary_total = 1.0;
  te->base_values.assign(static_cast<std::size_t>(te->n_targets), 1.0 / 512.0);
  for (int k = 0; k < 5; ++k) te->trees.push_back(test::random_tree(rng, 3, lo, hi, te->n_targets, true));
  int in = b.input();
  if (kind == 3) in = b.dense(in, 2.0 * Eigen::MatrixXd::Identity(4, 4), -Eigen::VectorXd::Ones(4));
  const int trees = b.tree_ensemble(in, te);
  return b.finish(trees,
                  kind == 1 || kind == 2 ? DecisionRule::argmax_of(trees) : DecisionRule::threshold_on(trees, 0));
}

Query random_query(std::mt19937& rng, int kind, int i) {
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  const auto role = InputRole::State;
  std::vector<QueryInput> in;
  switch (pick(3)) {
    case 0: in.push_back(QueryInput::range("x0", role, InputType::Int, "0", "6")); break;
    case 1: in.push_back(QueryInput::fixed("x0", role, InputType::Int, "2")); break;
    default: in.push_back(QueryInput::one_of("x0", role, InputType::Int, {"1", "4", "5"})); break;
  }
  switch (pick(3)) {
    case 0: in.push_back(QueryInput::range("x1", role, InputType::Real, "-3", "3")); break;
    case 1: in.push_back(QueryInput::range("x1", role, InputType::Real, "-1", std::nullopt)); break;
    default: in.push_back(QueryInput::fixed("x1", role, InputType::Real, "0.5")); break;
  }
  in.push_back(pick(2) == 0 ? QueryInput::range("x2", role, InputType::Real, "-2.5", "2")
                            : QueryInput::range("x2", role, InputType::Real, std::nullopt, std::nullopt));
  in.push_back(pick(2) == 0 ? QueryInput::range("x3", role, InputType::Bool, std::nullopt, std::nullopt)
                            : QueryInput::fixed("x3", role, InputType::Bool, "true"));
  static const char* const kStates[] = {"",
                                        "x1 > 0.5",
                                        "x1 <= 1 || x2 > 0",
                                        "!(x0 == 3) && x2 in [-1, 1.5]",
                                        "x3 || x1 < -1",
                                        "x0 != 4 && (x2 < 0.5 || 1 <= x2)",
                                        "!(x1 >= 0 && x3 == false) || x2 == -0.5",
                                        "x1 > 3 && x1 < -3",
                                        "(x1 < 2 && x1 <= 1 && x1 >= 1) || (x2 > -1 && x2 >= 0.5 && x2 <= 0.5)"};
  static const char* const kFactuals[] = {"", "x0 == 2 && x1 == 0.5 && x2 == 0 && x3", "x2 in [-0.5, 0.5]"};
  static const char* const kThreshold[] = {"label == 1", "label == 0", "label != 1"};
  static const char* const kArgmax[] = {"label == 0", "label == 1", "label != 1", "label >= 1"};
  const char* behavior = kind == 1 ? kArgmax[pick(4)] : kind == 2 ? kArgmax[pick(3)] : kThreshold[pick(3)];
  static const Semantics kSem[] = {Semantics::Real, Semantics::Float64, Semantics::Float32};
  Query q = make(fmt::format("r{}", i), pick(2) == 0 ? QueryKind::Might : QueryKind::Would, kSem[pick(3)],
                 std::move(in), behavior);
  q.state.text = kStates[pick(9)];
  q.factual.text = kFactuals[pick(3)];
  return q;
}

void check_random_forests(int models, int queries) {
  std::mt19937 rng(2027);
  int answered = 0, total = 0;
  for (int m = 0; m < models; ++m) {
    const int kind = m % 4;
    const Model model = random_forest_model(rng, kind);
    for (int i = 0; i < queries; ++i) {
      const Query q = random_query(rng, kind, m * 100 + i);
      const bool used = same_as_solver(model, q);
      EXPECT_EQ(used, kind != 3) << q.name << ": " << q.state.text;  // a scaler before the trees: refused
      answered += used ? 1 : 0;
      ++total;
    }
  }
  EXPECT_GT(answered, total / 2);
}

TEST(TreeQuery, AgreesWithSolverOnRandomForests) { check_random_forests(test::sized(8, 4), 8); }
TEST(TreeQuery, SlowAgreesWithSolverOnRandomForests) { check_random_forests(40, 12); }

// The coordinates the trees split on first: interesting inputs to leave free.
std::vector<int> root_features(const Model& m) {
  std::vector<int> out;
  for (const Node& n : m.nodes) {
    if (n.op != OpKind::TreeEnsemble) continue;
    for (const auto& t : n.trees->trees) {
      const int f = t.nodes[0].mode == TreeEnsemble::Mode::Leaf ? -1 : t.nodes[0].feature;
      if (f >= 0 && std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
    }
  }
  return out;
}

// Every tree fixture: each label asked with might and would, one or two inputs free, the others
// fixed at a small value. Returns how many queries the box path answered.
int check_fixture(const std::string& rel, const std::vector<Semantics>& semantics) {
  const Model model = load_model(test::source_path(rel));
  const std::vector<int> roots = root_features(model);
  const std::size_t labels =
      model.rule.kind == DecisionRule::Kind::ArgMax
          ? static_cast<std::size_t>(model.nodes[static_cast<std::size_t>(model.rule.node)].width)
          : 2;
  int used = 0;
  for (std::size_t free = 1; free <= 2; ++free) {
    std::vector<QueryInput> in;
    for (std::size_t i = 0; i < model.input_names.size(); ++i) {
      const auto at = std::find(roots.begin(), roots.end(), static_cast<int>(i));
      const bool is_free = at != roots.end() && static_cast<std::size_t>(at - roots.begin()) < free;
      in.push_back(is_free ? QueryInput::range(model.input_names[i], InputRole::State, InputType::Real, "-2", "60")
                           : QueryInput::fixed(model.input_names[i], InputRole::State, InputType::Real, "1"));
    }
    for (const Semantics sem : semantics) {
      for (std::size_t l = 0; l < labels; ++l) {
        for (const QueryKind kind : {QueryKind::Might, QueryKind::Would}) {
          Query q = make(fmt::format("{} free {}", rel, free), kind, sem, in, fmt::format("label == {}", l));
          used += same_as_solver(model, q) ? 1 : 0;
        }
      }
    }
  }
  return used;
}

// Under the sanitizers every fourth fixture (an XGBoost and an ONNX one).
TEST(TreeQuery, AgreesWithSolverOnTreeFixtures) {
  EXPECT_GT(check_fixture("tests/fixtures/trees/xgb_binary.json", {Semantics::Float64}), 0);
  const char* const fixtures[] = {
      "tests/fixtures/trees/xgb_binary.json",      "tests/fixtures/trees/xgb_multi.json",
      "tests/fixtures/trees/lgb_binary.txt",       "tests/fixtures/trees/lgb_average.txt",
      "tests/fixtures/onnx/tree_binary.onnx",      "tests/fixtures/onnx/tree_classifier.onnx",
      "tests/fixtures/onnx/tree_ensemble_v5.onnx", "tests/fixtures/onnx/tree_ensemble_v5_binary.onnx"};
  for (const char* rel : test::sampled(fixtures, 4)) {
    SCOPED_TRACE(rel);
    EXPECT_GT(check_fixture(rel, {Semantics::Real}), 0) << "the box path answered none of the queries";
  }
}

TEST(TreeQuery, SlowAgreesWithSolverOnTreeFixtures) {
  for (const char* rel :
       {"tests/fixtures/trees/xgb_cat.json", "tests/fixtures/trees/lgb_multi.txt", "tests/fixtures/trees/lgb_ova.txt",
        "tests/fixtures/trees/lgb_cat.txt", "tests/fixtures/onnx/tree_ensemble_v5_min.onnx",
        "tests/fixtures/onnx/tree_binary.onnx", "tests/fixtures/trees/xgb_binary.json"}) {
    SCOPED_TRACE(rel);
    check_fixture(rel, {Semantics::Real, Semantics::Float64, Semantics::Float32});
  }
}

// Queries the box path must refuse: answered by the solver, the same as with the box path off.
TEST(TreeQuery, RefusedQueriesFallBackToTheSolver) {
  std::mt19937 rng(7);
  const Model model = random_forest_model(rng, 0);
  std::vector<QueryInput> in{QueryInput::range("x0", InputRole::State, InputType::Int, "0", "6"),
                             QueryInput::range("x1", InputRole::State, InputType::Real, "-3", "3"),
                             QueryInput::range("x2", InputRole::State, InputType::Real, "-3", "3"),
                             QueryInput::fixed("x3", InputRole::State, InputType::Bool, "false")};
  for (const QueryKind kind : {QueryKind::Might, QueryKind::Would}) {
    Query sum = make("sum", kind, Semantics::Real, in, "label == 1");
    sum.state.text = "x1 + x2 > 1";  // not a box
    EXPECT_FALSE(same_as_solver(model, sum));
    Query two = make("two", kind, Semantics::Real, in, "label == 1");
    two.state.text = "x1 < x2";
    EXPECT_FALSE(same_as_solver(model, two));
    EXPECT_FALSE(same_as_solver(model, make("output", kind, Semantics::Real, in, "output[0] > 0.25")));
    EXPECT_FALSE(same_as_solver(model, make("input", kind, Semantics::Real, in, "label == 1 || x1 > 2")));
    Query near = make("near", kind, Semantics::Real, in, "label == 1");
    near.nearest = true;
    near.inputs[1].logged = "0";
    EXPECT_FALSE(same_as_solver(model, near));
  }
  // Value lists and disjunctions multiply out into many boxes, still under the cap.
  std::vector<QueryInput> lists;
  for (const char* n : {"x0", "x1", "x2", "x3"}) {
    std::vector<std::string> values;
    values.reserve(12);
    for (int v = 0; v < 12; ++v) values.push_back(std::to_string(v % 2 == 0 ? v / 4 : -v / 4));
    lists.push_back(QueryInput::one_of(n, InputRole::State, n[1] == '0' ? InputType::Int : InputType::Real, values));
  }
  lists[3] = QueryInput::range("x3", InputRole::State, InputType::Bool, std::nullopt, std::nullopt);
  lists[0].values = {"0", "1", "2", "3", "4", "5", "6"};
  Query many = make("many", QueryKind::Might, Semantics::Real, lists, "label == 1");
  many.state.text = "(x1 < 0 || x1 > 1) && (x2 < 0 || x2 > 1) && (x1 != 2 || x2 != 2)";
  many.factual.text = "x0 != 1 || x1 != 1";
  EXPECT_TRUE(same_as_solver(model, many));
}

TEST(TreeQuery, SaysWhyItRefuses) {
  std::mt19937 rng(11);
  const Model forest = random_forest_model(rng, 0);
  const Model scaled = random_forest_model(rng, 3);
  ExprScope scope;
  for (const char* n : {"x0", "x1", "x2"}) scope.inputs.push_back({n, ExprType::Number});
  scope.inputs.push_back({"x3", ExprType::Bool});
  scope.outputs = {"score"};
  const Expr label = parse_expression("label == 1", scope);
  const Expr output = parse_expression("score > 0", scope);
  const Expr sum = parse_expression("x1 + x2 < 1", scope);
  TreeBoxQuery q;
  TreeBoxInput range;
  range.min = "-3";
  range.max = "3";
  q.inputs.assign(4, range);
  q.behavior = &label;
  EXPECT_EQ(tree_box_query<ExactDomain>(forest, q).status, TreeBoxResult<ExactDomain>::Status::Found);
  const auto pre = tree_box_query<ExactDomain>(scaled, q);
  EXPECT_EQ(pre.status, TreeBoxResult<ExactDomain>::Status::Refused);
  EXPECT_NE(pre.why.find("preprocessing"), std::string::npos) << pre.why;
  q.behavior = &output;
  EXPECT_NE(tree_box_query<ExactDomain>(forest, q).why.find("more than the label"), std::string::npos);
  q.behavior = &label;
  q.premise = {&sum};
  const auto not_box = tree_box_query<FloatDomain<double>>(forest, q);
  EXPECT_EQ(not_box.status, TreeBoxResult<FloatDomain<double>>::Status::Refused);
  EXPECT_NE(not_box.why.find("one input"), std::string::npos) << not_box.why;
  q.premise.clear();
  q.inputs[1].values = {"-1", "0", "1"};
  q.inputs[2].values = {"-1", "0", "1"};
  q.max_premise_boxes = 4;
  const auto lists = tree_box_query<ExactDomain>(forest, q);
  EXPECT_NE(lists.why.find("more than 4 boxes"), std::string::npos) << lists.why;
  q.inputs[1].values.clear();
  q.inputs[2].values.clear();
  q.max_boxes = 1;
  const auto stopped = tree_box_query<FloatDomain<float>>(forest, q);
  EXPECT_TRUE(stopped.status == TreeBoxResult<FloatDomain<float>>::Status::Stopped ||
              stopped.status == TreeBoxResult<FloatDomain<float>>::Status::Found);
  const Model net = load_model(test::source_path("examples/soid/car/defensive_1k.onnx"));
  q.inputs.assign(static_cast<std::size_t>(net.input_width()), range);
  EXPECT_NE(tree_box_query<ExactDomain>(net, q).why.find("no tree ensemble"), std::string::npos);
}

// Open ends in real semantics: with x < 0.5 going one way (Lt), x in (0.5, 0.5 + 2^-60) is a
// scenario of the reals between two doubles, which only an open bound keeps.
TEST(TreeQuery, OpenBoundsBetweenDoublesInRealSemantics) {
  ModelBuilder b("one", {"x"});
  auto te = std::make_shared<TreeEnsemble>();
  TreeEnsemble::Tree t;
  t.nodes.resize(3);
  t.nodes[0] = {TreeEnsemble::Mode::Lt, 0, 0.5, 1, 2, false, {}};
  t.leaves = {{1, 0, -1.0}, {2, 0, 1.0}};
  te->trees.push_back(t);
  const int trees = b.tree_ensemble(b.input(), te);
  const Model model = b.finish(trees, DecisionRule::threshold_on(trees, 0));
  for (const Semantics sem : {Semantics::Real, Semantics::Float64, Semantics::Float32}) {
    for (const char* state : {"x > 0.5", "x >= 0.5", "x < 0.5", "x != 0.5", "x > 0.5 && x < 0.50000000000000001",
                              "x < 0.75 && x <= 0.5 && x >= 0.5", "x > 0.25 && x >= 0.5 && x <= 0.5"}) {
      for (const QueryKind kind : {QueryKind::Might, QueryKind::Would}) {
        Query q = make("open", kind, sem, {QueryInput::range("x", InputRole::State, InputType::Real, "0", "1")},
                       "label == 1");
        q.state.text = state;
        EXPECT_TRUE(same_as_solver(model, q)) << state;
      }
    }
  }
}

}  // namespace
}  // namespace witness
