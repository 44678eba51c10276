#include "query/query.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/error.h"
#include "model/evaluator.h"
#include "model/loaders.h"
#include "query/semantics.h"
#include "support/paths.h"
#include "support/sanitized.h"

namespace witness {
namespace {

using test::kSourceDir;

Query make_query(QueryKind kind, Semantics sem, std::vector<QueryInput> inputs, std::string behavior) {
  Query q;
  q.name = "q";
  q.where = "test: query 'q'";
  q.kind = kind;
  q.semantics = sem;
  q.inputs = std::move(inputs);
  q.behavior.text = std::move(behavior);
  return q;
}

// ---- brute force on tiny domains -------------------------------------------------------------

// Weights and inputs are small dyadic rationals, so double, float and exact arithmetic agree and
// the library evaluator (separate code) is the oracle for every semantics.
double dyadic(std::mt19937& rng) { return static_cast<double>(std::uniform_int_distribution<int>(-8, 8)(rng)) / 4; }

Model random_model(std::mt19937& rng, int kind, int n_inputs) {
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(n_inputs));
  for (int i = 0; i < n_inputs; ++i) names.push_back(fmt::format("x{}", i));
  ModelBuilder b("tiny", names);
  auto dense = [&](int x, int in, int out) {
    Eigen::MatrixXd w(out, in);
    Eigen::VectorXd bias(out);
    for (int r = 0; r < out; ++r) {
      for (int c = 0; c < in; ++c) w(r, c) = dyadic(rng);
      bias(r) = dyadic(rng) + 0.125;  // off the integer grid: fewer exact ties
    }
    return b.dense(x, w, bias);
  };
  switch (kind) {
    case 0: {  // ReLU network, argmax over 3 classes
      const int h = b.relu(dense(b.input(), n_inputs, 3));
      const int y = dense(h, 3, 3);
      return b.finish(y, DecisionRule::argmax_of(y));
    }
    case 1: {  // one logit, threshold rule, leaky ReLU inside
      const int h = b.unary(OpKind::LeakyRelu, dense(b.input(), n_inputs, 2), "leaky", 0.25);
      const int y = dense(h, 2, 1);
      return b.finish(y, DecisionRule::threshold_on(y, 0.5));
    }
    case 2: {  // the output is the class: round half away from zero of a linear form
      const int y = dense(b.input(), n_inputs, 1);
      return b.finish(y, DecisionRule::direct(y));
    }
    case 3: {  // x0 * x1 - x2 and x0 / (abs-ish) through Mul/Div/Where: non-linear real arithmetic
      const int a = b.select(b.input(), {0});
      const int c = b.select(b.input(), {1});
      const int prod = b.binary(OpKind::Mul, a, c);
      const int k = b.constant(Eigen::VectorXd::Constant(1, 4.0));
      const int quot = b.binary(OpKind::Div, prod, k);
      const int cond = b.binary(OpKind::Greater, a, c);
      const int w = b.where(cond, quot, b.binary(OpKind::Sub, c, a));
      const int y = b.concat({w, b.select(b.input(), {n_inputs - 1})});
      return b.finish(y, DecisionRule::argmax_of(y));
    }
    default: {  // two trees, two classes, summed votes
      auto te = std::make_shared<TreeEnsemble>();
      for (int t = 0; t < 2; ++t) {
        TreeEnsemble::Tree tree;
        tree.nodes.resize(5);
        const auto f = [&] { return std::uniform_int_distribution<int>(0, n_inputs - 1)(rng); };
        const auto th = [&] { return std::uniform_int_distribution<int>(-2, 2)(rng) + 0.5; };
        tree.nodes[0] = {TreeEnsemble::Mode::Leq, f(), th(), 1, 2, false, {}};
        tree.nodes[1] = {TreeEnsemble::Mode::Gt, f(), th(), 3, 4, false, {}};
        for (const int leaf : {2, 3, 4}) {
          tree.leaves.push_back({leaf, std::uniform_int_distribution<int>(0, 1)(rng), 1.0 + 0.25 * t});
        }
        te->trees.push_back(tree);
      }
      te->n_targets = 2;
      te->classifier = true;
      const int y = b.tree_ensemble(b.input(), te, "trees");
      return b.finish(y, DecisionRule::argmax_of(y));
    }
  }
}

struct Case {
  Query query;
  std::vector<std::vector<double>> domain;  // every input assignment the declarations allow
};

Case random_case(std::mt19937& rng, const Model& m, int n_labels) {
  std::vector<QueryInput> inputs;
  std::vector<std::vector<double>> choices;
  const int n = m.input_width();
  for (int i = 0; i < n; ++i) {
    const std::string name = m.input_names[static_cast<std::size_t>(i)];
    const auto role = i % 2 == 0 ? InputRole::Environment : InputRole::State;
    const int form = std::uniform_int_distribution<int>(0, 3)(rng);
    if (form == 0) {
      const int v = std::uniform_int_distribution<int>(-2, 2)(rng);
      inputs.push_back(QueryInput::fixed(name, role, InputType::Int, std::to_string(v)));
      choices.push_back({static_cast<double>(v)});
    } else if (form == 1) {
      inputs.push_back(QueryInput::one_of(name, role, InputType::Bool, {"true", "false"}));
      choices.push_back({0, 1});
    } else if (form == 2) {
      QueryInput in = QueryInput::one_of(name, role, InputType::Real, {"-1.5", "0.25", "2"});
      inputs.push_back(in);
      choices.push_back({-1.5, 0.25, 2});
    } else {
      inputs.push_back(QueryInput::range(name, role, InputType::Int, "-3", "3"));
      choices.push_back({-3, -2, -1, 0, 1, 2, 3});
    }
  }
  const auto kind = std::uniform_int_distribution<int>(0, 1)(rng) == 0 ? QueryKind::Might : QueryKind::Would;
  const int target = std::uniform_int_distribution<int>(0, n_labels - 1)(rng);
  std::string behavior = fmt::format("label == {}", target);
  if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
    const bool x0_bool = inputs[0].type == InputType::Bool;
    behavior = fmt::format("label != {} || {}", target, x0_bool ? "x0" : "x0 >= 1");
  }
  Case c;
  c.query = make_query(kind, Semantics::Real, inputs, behavior);
  auto number = [&](int i) { return inputs[static_cast<std::size_t>(i)].type != InputType::Bool; };
  if (std::uniform_int_distribution<int>(0, 1)(rng) == 0 && number(0)) c.query.environment.text = "x0 * 2 - 1 <= 3";
  if (std::uniform_int_distribution<int>(0, 1)(rng) == 0 && number(1)) c.query.state.text = "abs(x1) < 2.5";
  if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) c.query.factual.text = number(0) ? "x0 == 1" : "x0";
  // Cartesian product of the choices.
  std::vector<std::vector<double>> all = {{}};
  for (const auto& ch : choices) {
    std::vector<std::vector<double>> next;
    for (const auto& prefix : all) {
      for (const double v : ch) {
        auto row = prefix;
        row.push_back(v);
        next.push_back(row);
      }
    }
    all = std::move(next);
  }
  c.domain = std::move(all);
  return c;
}

// Answer by enumeration with the library evaluator's labels; expressions evaluated exactly.
// A query's constraints, parsed on their own, for the enumerations below.
struct Constraints {
  std::optional<Expr> env, state, factual;
  Expr behavior;

  Constraints(const Model& m, const Query& q) {
    ExprScope scope;
    for (const auto& name : m.input_names) {
      const auto it =
          std::find_if(q.inputs.begin(), q.inputs.end(), [&](const QueryInput& i) { return i.name == name; });
      scope.inputs.push_back({name, it->type == InputType::Bool ? ExprType::Bool : ExprType::Number});
    }
    scope.outputs = m.output_names;
    auto parse = [&](const QueryText& t) -> std::optional<Expr> {
      if (t.text.empty()) return std::nullopt;
      return parse_expression(t.text, scope);
    };
    env = parse(q.environment);
    state = parse(q.state);
    factual = parse(q.factual);
    behavior = *parse(q.behavior);
  }
  // Whether x (with the decision `label`) is in the family; if so, `shows` tells the behavior.
  bool in_family(const std::vector<Rational>& x, int label, bool& shows) const {
    ExactDomain d;
    const ModelValues<ExactDomain> mv{{}, Rational(label)};
    if ((env && !evaluate_condition(*env, d, x, mv)) || (state && !evaluate_condition(*state, d, x, mv)) ||
        (factual && evaluate_condition(*factual, d, x, mv))) {
      return false;
    }
    shows = evaluate_condition(behavior, d, x, mv);
    return true;
  }
};

bool enumerate(const Model& m, const Query& q, const std::vector<std::vector<double>>& domain) {
  const Constraints c(m, q);
  Eigen::MatrixXd x(m.input_width(), static_cast<Eigen::Index>(domain.size()));
  for (std::size_t j = 0; j < domain.size(); ++j) {
    for (std::size_t i = 0; i < domain[j].size(); ++i)
      x(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = domain[j][i];
  }
  const Evaluation ev = evaluate(m, x);
  for (std::size_t j = 0; j < domain.size(); ++j) {
    std::vector<Rational> xs;
    for (const double v : domain[j]) xs.push_back(Rational::from_double(v));
    bool b = false;
    if (!c.in_family(xs, ev.labels[j], b)) continue;
    if (q.kind == QueryKind::Might && b) return true;
    if (q.kind == QueryKind::Would && !b) return false;
  }
  return q.kind == QueryKind::Would;
}

// Random tiny models and queries, every semantics, against enumeration. enumerate_cases 0: the
// solver answers; else the query layer's own case enumeration does.
void check_tiny_domains(int rounds, int min_scenarios, std::size_t float_cases, std::size_t enumerate_cases = 0) {
  std::mt19937 rng(20261123);
  int with_scenario = 0;
  for (int round = 0; round < rounds; ++round) {
    const int kind = round % 5;
    const int n = 2 + round % 2;
    const Model m = random_model(rng, kind, n);
    const int n_labels = kind == 0 ? 3 : kind == 2 ? 4 : 2;
    Case c = random_case(rng, m, n_labels);
    const bool expected = enumerate(m, c.query, c.domain);
    for (const Semantics sem : {Semantics::Real, Semantics::Float64, Semantics::Float32}) {
      c.query.semantics = sem;
      const QueryAnswer a = answer_query(m, c.query, {.float_cases = float_cases, .enumerate_cases = enumerate_cases});
      if (enumerate_cases > 0) {
        EXPECT_NE(a.note.find("no solver needed"), std::string::npos) << a.note;
      }
      ASSERT_EQ(a.status, QueryAnswer::Status::Answered);
      EXPECT_EQ(a.answer, expected) << "round " << round << " model kind " << kind << " semantics " << to_string(sem)
                                    << " behavior " << c.query.behavior.text;
      const bool has_scenario = (c.query.kind == QueryKind::Might) == a.answer;
      ASSERT_EQ(!a.scenario.empty(), has_scenario);
      if (!has_scenario) continue;
      ++with_scenario;
      // The scenario is one of the enumerated assignments and has the reported label.
      std::vector<double> row;
      for (const auto& v : a.scenario) row.push_back(v.number);
      EXPECT_NE(std::find(c.domain.begin(), c.domain.end(), row), c.domain.end());
      Eigen::MatrixXd x(m.input_width(), 1);
      for (std::size_t i = 0; i < row.size(); ++i) x(static_cast<Eigen::Index>(i), 0) = row[i];
      EXPECT_EQ(evaluate(m, x).labels[0], *a.label);
      EXPECT_EQ(*a.evaluator_label, *a.label);
    }
  }
  EXPECT_GE(with_scenario, min_scenarios);
}

// Float arithmetic on guarded constants (the default) and all in Z3 (float_cases = 0, slow). Under
// the sanitizers a quarter of the rounds.
TEST(Query, AgreesWithEnumerationOnTinyDomains) { check_tiny_domains(test::sized(60, 15), test::sized(60, 15), 256); }
TEST(Query, CaseEnumerationAgreesWithEnumerationOnTinyDomains) { check_tiny_domains(60, 60, 256, 4096); }
TEST(Query, SlowAgreesWithEnumerationOnTinyDomainsWithFewGuardedCases) { check_tiny_domains(30, 30, 4); }
TEST(Query, SlowAgreesWithEnumerationOnTinyDomainsAllFloatOpsInZ3) { check_tiny_domains(60, 60, 0); }

// ---- factual exclusion and vacuity ------------------------------------------------------------

std::vector<QueryInput> car_state_354() {
  const std::vector<std::pair<std::string, bool>> bits = {
      {"in_intersection", false},       {"at_intersection_entry", true},
      {"intersection_empty", false},    {"approaching_intersection", true},
      {"obj_in_range", true},           {"has_right_of_way", false},
      {"cars_waiting_to_enter", false}, {"car_entering_range", false},
      {"safe_to_enter", true},          {"is_tailgating", false}};
  std::vector<QueryInput> in;
  in.reserve(bits.size());
  for (const auto& [name, v] : bits)
    in.push_back(QueryInput::fixed(name, InputRole::Environment, InputType::Bool, v ? "true" : "false"));
  return in;
}

TEST(Query, FactualIsExcludedFromAnswers) {
  const Model m = load_model(kSourceDir + "/examples/soid/car/standard_10k.onnx");
  Query q = make_query(QueryKind::Might, Semantics::Real, car_state_354(), "label == 0");
  QueryAnswer a = answer_query(m, q);
  ASSERT_TRUE(a.answer);  // the standard car moves in the logged state
  EXPECT_EQ(a.label, 0);
  EXPECT_EQ(a.label_name, "move");
  // The only scenario is the logged one: excluding it leaves nothing, and says so.
  q.factual.text = "safe_to_enter && obj_in_range";
  a = answer_query(m, q);
  EXPECT_FALSE(a.answer);
  EXPECT_TRUE(a.scenario.empty());
  EXPECT_EQ(a.vacuous, true);
  // Free the signal-dependent feature: the factual value is excluded, the other one answers.
  q.inputs[8] = QueryInput::range("safe_to_enter", InputRole::Environment, InputType::Bool, std::nullopt, std::nullopt);
  q.factual.text = "safe_to_enter";
  q.behavior.text = "label == 0 || label == 1";
  a = answer_query(m, q);
  ASSERT_TRUE(a.answer);
  EXPECT_EQ(a.scenario[8].text, "false");
  EXPECT_EQ(a.label, 1);  // the standard car stops when it is not safe to enter (state 352)
  // A would-query whose premise is empty holds vacuously, and is reported so.
  q.kind = QueryKind::Would;
  q.behavior.text = "label == 0";
  q.environment.text = "safe_to_enter && !safe_to_enter";
  a = answer_query(m, q);
  EXPECT_TRUE(a.answer);
  EXPECT_EQ(a.vacuous, true);
  q.environment.text.clear();
  q.factual.text.clear();
  a = answer_query(m, q);
  EXPECT_FALSE(a.answer);
  EXPECT_EQ(a.vacuous, std::nullopt);  // a scenario exists: no vacuity check
}

// ---- the shipped examples ---------------------------------------------------------------------

std::vector<QueryAnswer> answer_file(const std::string& path, std::optional<Semantics> sem = std::nullopt,
                                     const std::string& model_override = "") {
  std::vector<QueryAnswer> out;
  for (Query q : load_query_file(path)) {
    if (sem) q.semantics = *sem;
    const Model m = load_model(model_override.empty() ? q.model_path : model_override);
    out.push_back(answer_query(m, q));
  }
  return out;
}

TEST(Query, DiabetesUnitBug) {
  const std::string dir = kSourceDir + "/examples/soid/diabetes/";
  for (const Semantics sem : {Semantics::Float64, Semantics::Real, Semantics::Float32}) {
    SCOPED_TRACE(to_string(sem));
    const QueryAnswer verify = answer_file(dir + "verify.toml", sem)[0];
    EXPECT_TRUE(verify.answer);  // the logged patient is low risk
    EXPECT_EQ(verify.vacuous, false);
    const QueryAnswer weight = answer_file(dir + "weight.toml", sem)[0];
    ASSERT_TRUE(weight.answer);  // some weight makes the patient high risk...
    EXPECT_EQ(weight.label_name, "high_risk");
    const auto w = std::find_if(weight.scenario.begin(), weight.scenario.end(),
                                [](const ScenarioValue& v) { return v.name == "weight_lb"; });
    EXPECT_GE(w->number, 30.05 * 4096 * (1 - 1e-6));  // ... but only beyond 123,000 lb: BMI split 30.05
    EXPECT_EQ(weight.evaluator_label, 1);
    const QueryAnswer plausible = answer_file(dir + "weight_plausible.toml", sem)[0];
    EXPECT_FALSE(plausible.answer);  // no weight in [0, 1000] lb does: the bug, plainly
    EXPECT_EQ(plausible.vacuous, false);
  }
}

// Every car query, all eight Q-tables (under the sanitizers two), against enumeration of the 1024
// states with the policy read from the CSV (not from the ONNX model).
TEST(Query, CarQueriesAgreeWithEnumerationOfAllStates) {
  const std::vector<std::string> bit_names = {
      "in_intersection", "at_intersection_entry", "intersection_empty",    "approaching_intersection",
      "obj_in_range",    "has_right_of_way",      "cars_waiting_to_enter", "car_entering_range",
      "safe_to_enter",   "is_tailgating"};  // bit 9 .. bit 0
  const std::vector<Query> queries = load_query_file(kSourceDir + "/examples/soid/car/queries.toml");
  ASSERT_GE(queries.size(), 5U);
  int checked = 0;
  int table = 0;
  const int every = test::sized(1, 8);
  for (const std::string profile : {"defensive", "standard", "impatient", "pathological"}) {
    for (const std::string size : {"1k", "10k"}) {
      if (table++ % every != 0) continue;
      std::ifstream csv(fmt::format("{}/benchmarks/soid/gui_car/qtables/{}_{}_train.csv", kSourceDir, profile, size));
      std::vector<int> policy;
      for (std::string line; std::getline(csv, line);) {
        const double stay = std::stod(line.substr(0, line.find(',')));
        const double move = std::stod(line.substr(line.find(',') + 1));
        policy.push_back(move >= stay ? 0 : 1);
      }
      ASSERT_EQ(policy.size(), 1024U);
      const Model m = load_model(fmt::format("{}/examples/soid/car/{}_{}.onnx", kSourceDir, profile, size));
      for (const Query& q : queries) {
        const Constraints c(m, q);
        bool any = false;
        bool all = true;
        for (int s = 0; s < 1024; ++s) {
          std::vector<Rational> x;
          bool declared = true;
          for (const auto& n : m.input_names) {
            const auto bit = static_cast<int>(std::find(bit_names.begin(), bit_names.end(), n) - bit_names.begin());
            const int v = (s >> (9 - bit)) & 1;
            x.emplace_back(v);
            const auto in =
                std::find_if(q.inputs.begin(), q.inputs.end(), [&](const QueryInput& i) { return i.name == n; });
            if (in->value) declared = declared && ((*in->value == "true") == (v == 1));
          }
          if (!declared) continue;
          bool b = false;
          if (!c.in_family(x, policy[static_cast<std::size_t>(s)], b)) continue;
          any = any || b;
          all = all && b;
        }
        for (const std::size_t cases : {std::size_t{0}, std::size_t{4096}}) {  // the solver, then case by case
          const QueryAnswer a = answer_query(m, q, {.enumerate_cases = cases});
          EXPECT_EQ(a.answer, q.kind == QueryKind::Might ? any : all)
              << profile << "_" << size << " " << q.name << " cases " << cases;
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, static_cast<int>(8 / every * queries.size()));
}

// ---- models and queries that do not fit ----------------------------------------------------------

Model sigmoid_model() {
  ModelBuilder b("s", {"a", "b"});
  Eigen::MatrixXd w(1, 2);
  w << 1, -1;
  const int z = b.dense(b.input(), w, Eigen::VectorXd::Zero(1));
  return b.finish(b.sigmoid(z), DecisionRule::threshold_on(z, 0.0));
}

std::vector<QueryInput> free_reals() {
  return {QueryInput::range("a", InputRole::Environment, InputType::Real, "-1", "1"),
          QueryInput::range("b", InputRole::State, InputType::Real, "-1", "1")};
}

TEST(Query, SigmoidOutsideTheDecisionIsFineInsideItIsUnsupported) {
  const Model m = sigmoid_model();
  Query q = make_query(QueryKind::Might, Semantics::Real, free_reals(), "label == 1 && a < b + 0.5");
  QueryAnswer a = answer_query(m, q);
  EXPECT_TRUE(a.answer);
  ASSERT_EQ(a.outputs.size(), 1U);  // shown from the evaluator
  q.behavior.text = "output[0] > 0.7";
  EXPECT_THROW(answer_query(m, q), UnsupportedError);
}

std::string input_error(const Model& m, const Query& q) {
  try {
    answer_query(m, q);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Query, BadQueriesNameThePlace) {
  const Model m = sigmoid_model();
  Query q = make_query(QueryKind::Might, Semantics::Real, free_reals(), "label == 1");
  q.behavior.where = "q.toml: line 7";
  q.behavior.column_shift = 12;
  q.behavior.text = "lable == 1";
  EXPECT_EQ(input_error(m, q).rfind("q.toml: line 7, column 13: behavior: unknown name 'lable'", 0), 0U)
      << input_error(m, q);
  q.behavior.column_shift = -1;
  EXPECT_NE(input_error(m, q).find("q.toml: line 7: behavior, column 1: unknown name"), std::string::npos);
  q.behavior.text = "a > 0";
  EXPECT_NE(input_error(m, q).find("does not mention the decision"), std::string::npos);
  q.behavior.text = "label == 1";
  q.environment.text = "b > 0";  // b is a state input
  EXPECT_NE(input_error(m, q).find("'b' is not an environment input"), std::string::npos);
  q.environment.text.clear();
  q.state.text = "label == 1";
  EXPECT_NE(input_error(m, q).find("only 'behavior'"), std::string::npos);
  q.state.text.clear();
  q.inputs.pop_back();
  EXPECT_NE(input_error(m, q).find("missing: b"), std::string::npos);
  q.inputs = free_reals();
  q.inputs.push_back(QueryInput::fixed("c", InputRole::State, InputType::Real, "1"));
  EXPECT_NE(input_error(m, q).find("'c' is not an input of the model"), std::string::npos);
  q.inputs = free_reals();
  q.inputs[0] = QueryInput::fixed("a", InputRole::Environment, InputType::Int, "1.5");
  EXPECT_NE(input_error(m, q).find("not an integer"), std::string::npos);
  q.inputs[0] = QueryInput::range("a", InputRole::Environment, InputType::Real, "2", "1");
  EXPECT_NE(input_error(m, q).find("min 2 is above max 1"), std::string::npos);
  q.inputs[0] = QueryInput::range("a", InputRole::Environment, InputType::Bool, "0", std::nullopt);
  EXPECT_NE(input_error(m, q).find("a bool has no min/max"), std::string::npos);
  q.inputs[0] = QueryInput::fixed("a", InputRole::Environment, InputType::Real, "one");
  EXPECT_NE(input_error(m, q).find("'one' is not a number"), std::string::npos);
  q.inputs[0] = QueryInput::fixed("a", InputRole::Environment, InputType::Real, "1/3");
  EXPECT_EQ(input_error(m, q), "");  // exact in real semantics
  q.semantics = Semantics::Float64;
  EXPECT_NE(input_error(m, q).find("1/3 is a fraction"), std::string::npos);
  q.inputs[0] = QueryInput::fixed("a", InputRole::Environment, InputType::Real, "1e400");
  EXPECT_NE(input_error(m, q).find("1e400 is beyond the range of float64"), std::string::npos);
  q.semantics = Semantics::Real;
  EXPECT_EQ(input_error(m, q), "");  // a rational like any other

  ModelBuilder dup("dup", {"a", "a"});
  const int z = dup.dense(dup.input(), Eigen::MatrixXd::Ones(1, 2), Eigen::VectorXd::Zero(1));
  const Model twice = dup.finish(z, DecisionRule::threshold_on(z, 0.0));
  q.inputs = {free_reals()[0]};
  EXPECT_NE(input_error(twice, q).find("two inputs named 'a'"), std::string::npos);
}

TEST(Query, ArgMaxOverNanAndDirectLabelsFollowTheEvaluator) {
  // y = [0, 1e308 a + 1e308 b]: at a = 10, b = -10 the second entry is inf - inf = NaN, which
  // never wins an argmax (Eigen's visitor keeps the first maximum): label 0.
  ModelBuilder b("nan", {"a", "b"});
  Eigen::MatrixXd w(2, 2);
  w << 0, 0, 1e308, 1e308;
  const int y = b.dense(b.input(), w, Eigen::VectorXd::Zero(2));
  const Model m = b.finish(y, DecisionRule::argmax_of(y));
  Query q = make_query(QueryKind::Might, Semantics::Float64,
                       {QueryInput::fixed("a", InputRole::State, InputType::Real, "10"),
                        QueryInput::fixed("b", InputRole::State, InputType::Real, "-10")},
                       "label == 0");
  const QueryAnswer a = answer_query(m, q);
  ASSERT_TRUE(a.answer);
  EXPECT_EQ(a.evaluator_label, 0);

  // A direct class value outside int range is outside the model's domain, never a label.
  ModelBuilder d("direct", {"x"});
  const int v = d.dense(d.input(), Eigen::MatrixXd::Ones(1, 1), Eigen::VectorXd::Zero(1));
  const Model direct = d.finish(v, DecisionRule::direct(v));
  for (const Semantics sem : {Semantics::Real, Semantics::Float64}) {
    Query big = make_query(QueryKind::Might, sem,
                           {QueryInput::range("x", InputRole::State, InputType::Real, std::nullopt, std::nullopt)},
                           "label > 3000000000");
    EXPECT_FALSE(answer_query(direct, big).answer);
    big.behavior.text = "label == -2 && x > -1.6";  // round half away from zero: x in (-2.5, -1.5]
    const QueryAnswer r = answer_query(direct, big);
    ASSERT_TRUE(r.answer);
    EXPECT_LE(r.scenario[0].number, -1.5);
    EXPECT_GT(r.scenario[0].number, -1.6);
    EXPECT_EQ(r.evaluator_label, -2);
  }
}

// ---- semantics that differ ----------------------------------------------------------------------

TEST(Query, FloatSemanticsFollowTheRounding) {
  // y = a + 2^-30 * b, label 1 iff y > 1. With a = 1 and b in [0, 1]: over the reals any b > 0
  // works; in float32 the small term is absorbed (1 + 2^-30 rounds to 1); in float64 it is not.
  ModelBuilder b("round", {"a", "b"});
  Eigen::MatrixXd w(1, 2);
  w << 1, std::ldexp(1.0, -30);
  const int y = b.dense(b.input(), w, Eigen::VectorXd::Zero(1));
  const Model m = b.finish(y, DecisionRule::threshold_on(y, 1.0));
  Query q = make_query(QueryKind::Might, Semantics::Real,
                       {QueryInput::fixed("a", InputRole::State, InputType::Real, "1"),
                        QueryInput::range("b", InputRole::Environment, InputType::Real, "0", "1")},
                       "label == 1");
  EXPECT_TRUE(answer_query(m, q).answer);
  q.semantics = Semantics::Float64;
  EXPECT_TRUE(answer_query(m, q).answer);
  q.semantics = Semantics::Float32;
  EXPECT_FALSE(answer_query(m, q).answer);
}

TEST(Query, NonLinearRealArithmetic) {
  // label 1 iff a * a > 2: the boundary is irrational, the scenario must still be rational.
  ModelBuilder b("square", {"a"});
  const int sq = b.binary(OpKind::Mul, b.input(), b.input());
  const Model m = b.finish(sq, DecisionRule::threshold_on(sq, 2.0));
  Query q =
      make_query(QueryKind::Might, Semantics::Real,
                 {QueryInput::range("a", InputRole::Environment, InputType::Real, "1.41", "1.415")}, "label == 1");
  QueryAnswer a = answer_query(m, q);
  ASSERT_TRUE(a.answer);
  EXPECT_GT(a.scenario[0].number * a.scenario[0].number, 2.0 - 1e-12);
  q.kind = QueryKind::Would;
  q.inputs[0].min = "1.4143";  // sqrt(2) = 1.41421...
  EXPECT_TRUE(answer_query(m, q).answer);
}

}  // namespace
}  // namespace witness

namespace witness {
namespace {

// NaN and infinities inside the model (0/0, 1/0) follow the evaluator in float semantics: a
// query with every input fixed must agree with the library evaluator's label.
TEST(Query, FloatSemanticsFollowTheEvaluatorThroughNanAndInfinity) {
  ModelBuilder b("special", {"a", "b"});
  const int q = b.binary(OpKind::Div, b.select(b.input(), {0}), b.select(b.input(), {1}));  // a / b
  const int r = b.relu(q);
  const int y = b.dense(r, Eigen::MatrixXd::Constant(1, 1, -1.0), Eigen::VectorXd::Constant(1, 0.25));
  const Model m = b.finish(y, DecisionRule::threshold_on(y, 0.0));  // 1 iff 0.25 - relu(a / b) > 0
  for (const auto& [a, bv] : std::vector<std::pair<double, double>>{{0, 0}, {1, 0}, {-1, 0}, {-2, 4}, {3, 1}}) {
    Eigen::MatrixXd x(2, 1);
    x << a, bv;
    for (const Semantics sem : {Semantics::Float64, Semantics::Float32}) {
      const int label = evaluate(m, x, sem == Semantics::Float32 ? Precision::Float32 : Precision::Float64).labels[0];
      const Query query = make_query(QueryKind::Would, sem,
                                     {QueryInput::fixed("a", InputRole::State, InputType::Real, fmt::format("{}", a)),
                                      QueryInput::fixed("b", InputRole::State, InputType::Real, fmt::format("{}", bv))},
                                     fmt::format("label == {}", label));
      const QueryAnswer ans = answer_query(m, query);
      EXPECT_TRUE(ans.answer) << a << "/" << bv << " " << to_string(sem);
      EXPECT_EQ(ans.vacuous, false);
    }
  }
}

// A computed Gather index is truncated toward zero as ONNX's Cast does: 354 + r with r in
// [0, 0.75] reads row 354 only, in every semantics; -0.51 reads row 0; -1 the last row.
TEST(Query, LookupIndexIsTruncatedAsOnnx) {
  // n rows (fewer under the sanitizers, where each answer over 400 rows takes most of a second);
  // negative indices count from the end, as ONNX's Gather does.
  const Eigen::Index n = test::sized(400, 40);
  const Eigen::Index shift = n - test::sized(46, 6);
  ModelBuilder b("table", {"r"});
  Eigen::MatrixXd table(n, 1);
  for (Eigen::Index k = 0; k < n; ++k) table(k, 0) = static_cast<double>(k);
  const int index =
      b.binary(OpKind::Add, b.input(), b.constant(Eigen::VectorXd::Constant(1, static_cast<double>(shift))));
  const int row = b.lookup(index, table, "rows");
  const Model shifted = b.finish(row, DecisionRule::direct(row));
  ModelBuilder b2("table", {"r"});
  const int row2 = b2.lookup(b2.input(), table, "rows");
  const Model plain = b2.finish(row2, DecisionRule::direct(row2));
  const auto real_in = [](const char* lo, const char* hi) {
    return std::vector<QueryInput>{QueryInput::range("r", InputRole::Environment, InputType::Real, lo, hi)};
  };
  for (const Semantics sem : {Semantics::Real, Semantics::Float64, Semantics::Float32}) {
    SCOPED_TRACE(to_string(sem));
    auto answer = [&](const Model& m, QueryKind kind, std::vector<QueryInput> in, const std::string& behavior) {
      const QueryAnswer a = answer_query(m, make_query(kind, sem, std::move(in), behavior), {});
      EXPECT_EQ(a.status, QueryAnswer::Status::Answered) << a.reason_unknown;
      return a.answer;
    };
    EXPECT_FALSE(answer(shifted, QueryKind::Might, real_in("0", "0.75"), fmt::format("label != {}", shift)));
    EXPECT_TRUE(answer(shifted, QueryKind::Might, real_in("0", "0.75"), fmt::format("label == {}", shift)));
    EXPECT_TRUE(answer(plain, QueryKind::Would, real_in("-0.51", "-0.51"), "label == 0"));
    EXPECT_TRUE(answer(plain, QueryKind::Would, real_in("-1", "-1"), fmt::format("label == {}", n - 1)));
    EXPECT_TRUE(answer(plain, QueryKind::Would, real_in("-2.9", "-2.1"), fmt::format("label == {}", n - 2)));
  }
}

// ---- models that carry their preprocessing: questions in raw columns --------------------------

// One logged row of the skl2onnx MLP pipeline (tests/fixtures/pipelines): every column fixed but
// sex and race, which range over their categories (by label), nearest the logged facts.
Query pipeline_query(const std::string& race, const std::string& sex) {
  std::vector<QueryInput> in = {
      QueryInput::fixed("age", InputRole::Environment, InputType::Int, "33"),
      QueryInput::fixed("workclass", InputRole::Environment, InputType::Int, "Self-emp-inc"),
      QueryInput::fixed("fnlwgt", InputRole::Environment, InputType::Int, "738059"),
      QueryInput::fixed("education", InputRole::Environment, InputType::Int, "Bachelors"),
      QueryInput::fixed("education-num", InputRole::Environment, InputType::Int, "5"),
      QueryInput::fixed("marital-status", InputRole::Environment, InputType::Int, "Widowed"),
      QueryInput::fixed("occupation", InputRole::Environment, InputType::Int, "Machine-op-inspct"),
      QueryInput::fixed("relationship", InputRole::Environment, InputType::Int, "Unmarried"),
      QueryInput::range("race", InputRole::Environment, InputType::Int, std::nullopt, std::nullopt),
      QueryInput::range("sex", InputRole::Environment, InputType::Int, std::nullopt, std::nullopt),
      QueryInput::fixed("capital-gain", InputRole::Environment, InputType::Int, "15668"),
      QueryInput::fixed("capital-loss", InputRole::Environment, InputType::Int, "1986"),
      QueryInput::fixed("hours-per-week", InputRole::Environment, InputType::Int, "70"),
      QueryInput::fixed("native-country", InputRole::Environment, InputType::Int, "Hong"),
  };
  for (QueryInput& i : in) {
    const bool text = i.value && !i.value->empty() && std::isalpha(static_cast<unsigned char>((*i.value)[0])) != 0;
    i.category = text || i.name == "race" || i.name == "sex";
  }
  in[8].logged = race;
  in[9].logged = sex;
  Query q = make_query(QueryKind::Might, Semantics::Real, in, "label == 1");
  q.nearest = true;
  return q;
}

TEST(Query, PipelineQuestionsInRawColumnsAnsweredCaseByCase) {
  const Model m = load_model(kSourceDir + "/tests/fixtures/pipelines/mlp.onnx");
  for (const Semantics sem : {Semantics::Real, Semantics::Float64, Semantics::Float32}) {
    Query q = pipeline_query("Black", "Female");
    q.semantics = sem;
    const QueryAnswer a = answer_query(m, q);
    ASSERT_EQ(a.status, QueryAnswer::Status::Answered);
    EXPECT_TRUE(a.answer);
    EXPECT_NE(a.note.find("evaluated all 10 cases"), std::string::npos) << a.note;
    ASSERT_EQ(a.scenario.size(), 14U);
    EXPECT_EQ(a.scenario[8].text, "Black");  // nearest: race kept, sex changed
    EXPECT_EQ(a.scenario[9].text, "Male");
    EXPECT_TRUE(a.scenario[9].category);
    EXPECT_EQ(a.scenario[4].name, "education-num");  // the query's own names
    EXPECT_EQ(a.label_name, ">50K");
    EXPECT_EQ(a.changed_inputs, 1);
    if (sem != Semantics::Real) continue;  // the float solver's nearest search takes seconds here
    // The solver gives the same answer over the same encoding.
    const QueryAnswer s = answer_query(m, q, {.enumerate_cases = 0});
    EXPECT_TRUE(s.answer);
    EXPECT_EQ(s.changed_inputs, 1);
  }
}

TEST(Query, PipelineCategoriesAreCheckedByLabel) {
  const Model m = load_model(kSourceDir + "/tests/fixtures/pipelines/mlp.onnx");
  Query q = pipeline_query("Black", "Female");
  q.inputs[9].values = {"Female", "Alien"};
  try {
    (void)answer_query(m, q);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'Alien' is not a category of 'sex' (Female, Male)"), std::string::npos)
        << e.what();
  }
  Query numeric = pipeline_query("Black", "Female");
  numeric.inputs[0].category = true;
  EXPECT_THROW((void)answer_query(m, numeric), InputError);  // age is a number
  Query untyped = pipeline_query("Black", "Female");
  untyped.inputs[8].category = false;
  untyped.inputs[8].type = InputType::Real;
  EXPECT_THROW((void)answer_query(m, untyped), InputError);  // race needs type = "category"
}

}  // namespace
}  // namespace witness

namespace witness {
namespace {

// A query over AC1 (inputs x0..x12 in the schema's order) with `schema = ...`: the schema's
// constraints join the premise, so a scenario is a person who can exist.
std::string adult_query(const std::string& state, bool with_schema, const std::string& free = "") {
  const std::vector<std::pair<int, int>> ranges = {{10, 100}, {0, 6}, {0, 15}, {1, 16}, {0, 6},   {0, 13}, {0, 5},
                                                   {0, 4},    {0, 1}, {0, 19}, {0, 19}, {1, 100}, {0, 40}};
  std::string text = "name = \"adult\"\nmodel = \"models/adult/AC1.json\"\n";
  if (with_schema) text += "schema = \"adult_constrained.toml\"\n";
  text +=
      "kind = \"might\"\nsemantics = \"float64\"\nstate = \"" + state + "\"\nbehavior = \"label == 1 || label == 0\"\n";
  text += "[inputs]\n";
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const std::string name = "x" + std::to_string(i);
    // Inputs not listed as free are fixed at their lowest value (few cases: enumerated).
    const bool is_free = free.empty() || free.find(" " + name + " ") != std::string::npos;
    text += is_free ? fmt::format("{} = {{ role = \"state\", type = \"int\", min = {}, max = {} }}\n", name,
                                  ranges[i].first, ranges[i].second)
                    : fmt::format("{} = {{ role = \"state\", type = \"int\", value = {} }}\n", name, ranges[i].first);
  }
  return text;
}

QueryAnswer ask_adult(const std::string& text, const QueryOptions& o = {}) {
  const std::vector<Query> qs = load_query_text(text, kSourceDir + "/benchmarks/fairify/adult.query.toml");
  return answer_query(load_model(qs.at(0).model_path), qs.at(0), o);
}

TEST(Query, SchemaConstraintsJoinThePremise) {
  // A female husband: possible in the plain box, nobody under the schema's rules.
  QueryAnswer a = ask_adult(adult_query("x6 == 0 && x8 == 0", false));
  EXPECT_TRUE(a.answer);
  EXPECT_FALSE(a.schema_constraints);
  a = ask_adult(adult_query("x6 == 0 && x8 == 0", true));
  EXPECT_FALSE(a.answer);
  EXPECT_EQ(a.vacuous, std::optional<bool>(true));
  EXPECT_TRUE(a.schema_constraints);
  // A male husband with a bachelor's degree: education-num follows (13), and he is married.
  a = ask_adult(adult_query("x6 == 0 && x8 == 1 && x2 == 9", true));
  ASSERT_TRUE(a.answer);
  EXPECT_EQ(a.scenario.at(3).number, 13);
  EXPECT_TRUE(a.scenario.at(4).number == 1 || a.scenario.at(4).number == 2) << a.scenario.at(4).text;
  // Few free inputs: every case evaluated, and the solver, agree (education-num 12 is no bachelor).
  for (const std::size_t cases : {std::size_t{0}, std::size_t{4096}}) {
    SCOPED_TRACE(cases);
    const std::string free = " x2 x3 x6 x8 ";
    a = ask_adult(adult_query("x2 == 9 && x3 == 12", true, free), {.enumerate_cases = cases});
    EXPECT_FALSE(a.answer);
    a = ask_adult(adult_query("x3 == 13 && x8 == 0", true, free), {.enumerate_cases = cases});
    ASSERT_TRUE(a.answer);
    EXPECT_EQ(a.scenario.at(2).number, 9);  // Bachelors, the one education of 13 years
    EXPECT_NE(a.scenario.at(6).number, 0);  // a woman is no husband (and, divorced, no wife)
    EXPECT_NE(a.scenario.at(6).number, 5);
  }
}

TEST(Query, SchemaConstraintsNeedInputsHoldingTheRawValues) {
  std::string text = adult_query("x6 == 0", true);
  const std::string bool_sex = "x8 = { role = \"state\", type = \"bool\" }\n";
  text.replace(text.find("x8 = "), text.find('\n', text.find("x8 = ")) - text.find("x8 = ") + 1, bool_sex);
  try {
    (void)ask_adult(text);
    ADD_FAILURE() << "a bool input for a categorical feature was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("input 'x8' (feature 'sex') is declared bool"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("adult_constrained.toml"), std::string::npos) << e.what();
  }
  text = adult_query("x6 == 0", true);
  text.replace(text.find("schema = \"adult_constrained.toml\""), 33, "schema = \"nowhere.toml\"");
  EXPECT_THROW((void)ask_adult(text), InputError);
}

}  // namespace
}  // namespace witness
