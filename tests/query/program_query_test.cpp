// Queries over programs: soid's agents written in C answer every shipped query as their ONNX
// models do, and the car program agrees with the models on all 1024 states.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../program/source_file.h"
#include "core/error.h"
#include "model/evaluator.h"
#include "model/loaders.h"
#include "program/program.h"
#include "query/query.h"
#include "support/paths.h"
#include "support/sanitized.h"

namespace witness {
namespace {

using test::kSourceDir;

void expect_same(const QueryAnswer& model, const QueryAnswer& program, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(model.status, QueryAnswer::Status::Answered);
  ASSERT_EQ(program.status, QueryAnswer::Status::Answered) << program.reason_unknown;
  EXPECT_EQ(model.answer, program.answer);
  EXPECT_EQ(model.vacuous, program.vacuous);
  EXPECT_EQ(model.scenario.empty(), program.scenario.empty());
  EXPECT_TRUE(program.cut.empty());
  if (!program.scenario.empty()) {
    ASSERT_TRUE(program.label.has_value());
    EXPECT_EQ(program.evaluator_label, program.label);  // the native run agrees
  }
}

TEST(ProgramQuery, DiabetesProgramAnswersAsTheOnnxAgent) {
  const std::string dir = kSourceDir + "/examples/soid/diabetes/";
  const Program program = Program::compile(dir + "agent.c", "decide");
  const Model model = load_model(dir + "diabetes_agent.onnx");
  for (const char* file : {"verify.toml", "weight.toml", "weight_plausible.toml"}) {
    for (const Semantics sem : {Semantics::Float64, Semantics::Real, Semantics::Float32}) {
      for (Query q : load_query_file(dir + file)) {
        q.semantics = sem;
        const QueryAnswer a = answer_query(program, q);
        expect_same(answer_query(model, q), a, fmt::format("{} {}", file, to_string(sem)));
        if (q.name == "weight" && !a.scenario.empty()) {
          const auto w = std::find_if(a.scenario.begin(), a.scenario.end(),
                                      [](const ScenarioValue& v) { return v.name == "weight_lb"; });
          EXPECT_GE(w->number, 30.05 * 4096 * (1 - 1e-6));  // the BMI split at 30.05, without the 703
        }
      }
    }
  }
}

// agent.c with another Q-table compiled in, through its QTABLE_FILE macro. A program's build reads
// only its own folder, so the agent and the table are copied beside the wrapper.
std::string car_source(const std::string& profile) {
  return fmt::format("#define QTABLE_FILE \"qtables/{}.h\"\n#include \"car_agent.c\"\n", profile);
}
void copy_car_files(const SourceFile& wrapper, const std::string& profile) {
  const std::filesystem::path car = kSourceDir + "/examples/soid/car/";
  const std::filesystem::path dir = std::filesystem::path(wrapper.path()).parent_path();
  std::filesystem::create_directories(dir / "qtables");
  std::filesystem::copy_file(car / "agent.c", dir / "car_agent.c");
  std::filesystem::copy_file(car / "qtables" / (profile + ".h"), dir / "qtables" / (profile + ".h"));
}

const char* const kProfiles[] = {"defensive_1k", "defensive_10k", "standard_1k",     "standard_10k",
                                 "impatient_1k", "impatient_10k", "pathological_1k", "pathological_10k"};

// Every profile in a Release run; under the sanitizers (minutes) one.
TEST(ProgramQuery, CarProgramAnswersAsTheOnnxAgentsForEveryProfile) {
  const std::vector<Query> queries = load_query_file(kSourceDir + "/examples/soid/car/queries.toml");
  for (const char* profile : test::sampled(kProfiles, std::size(kProfiles))) {
    const SourceFile src("agent.c", car_source(profile));
    copy_car_files(src, profile);
    const Program program = Program::compile(src.path(), "decide");
    const Model model = load_model(fmt::format("{}/examples/soid/car/{}.onnx", kSourceDir, profile));
    for (Query q : queries) {
      for (const Semantics sem : {Semantics::Real, Semantics::Float64}) {
        q.semantics = sem;
        expect_same(answer_query(model, q), answer_query(program, q),
                    fmt::format("{} {} {}", profile, q.name, to_string(sem)));
      }
    }
  }
}

// Enumeration of all 1024 states: the program, run on each (symbolic execution with concrete
// inputs folds to one path), decides as the ONNX agent's evaluator; the native build agrees on a
// sample. Under the sanitizers every eighth state.
TEST(ProgramQuery, CarProgramDecidesAllStatesAsTheOnnxAgent) {
  for (const char* profile : {"standard_10k", "pathological_1k"}) {
    const SourceFile src("agent.c", car_source(profile));
    copy_car_files(src, profile);
    const Program program = Program::compile(src.path(), "decide");
    const Model model = load_model(fmt::format("{}/examples/soid/car/{}.onnx", kSourceDir, profile));
    ASSERT_EQ(program.inputs().size(), 10U);
    Eigen::MatrixXd states(10, 1024);  // column s: state index s, in the model's input order
    for (int s = 0; s < 1024; ++s) {
      for (int b = 0; b < 10; ++b) {
        const auto& name = model.input_names[static_cast<std::size_t>(b)];
        const auto k = std::find_if(program.inputs().begin(), program.inputs().end(),
                                    [&](const ProgramInput& p) { return p.name == name; }) -
                       program.inputs().begin();
        states(b, s) = (s >> (9 - k)) & 1;
      }
    }
    const Evaluation ev = evaluate(model, states, Precision::Float64);
    z3::context ctx;
    for (int s = 0; s < 1024; s += test::sized(1, 8)) {
      std::vector<std::optional<z3::expr>> in;
      std::vector<std::optional<NativeValue>> native;
      for (int k = 0; k < 10; ++k) {
        const int bit = (s >> (9 - k)) & 1;
        in.emplace_back(ctx.bool_val(bit == 1));
        NativeValue v;
        v.integer = bit;
        native.emplace_back(v);
      }
      const ProgramPaths paths = program.execute(ctx, in, {});
      ASSERT_EQ(paths.done.size(), 1U);
      EXPECT_TRUE(paths.cut.empty());
      EXPECT_TRUE(paths.done[0].condition.is_true());
      const int label = static_cast<int>(paths.done[0].value.get_numeral_int64());
      EXPECT_EQ(label, ev.labels[static_cast<std::size_t>(s)]) << profile << " state " << s;
      if (s % 37 == 0) {
        EXPECT_EQ(program.run_native(native).integer, label) << profile << " state " << s;
      }
    }
  }
}

// Every state bit free: the table lookup splits into 1024 paths; the answers are the ONNX agent's.
// Under the sanitizers the first behavior only, with the first four inputs as declared (64 paths).
TEST(ProgramQuery, CarProgramWithEveryInputFree) {
  Query q = load_query_file(kSourceDir + "/examples/soid/car/queries.toml")[0];
  for (std::size_t i = test::sized<std::size_t>(0, 4); i < q.inputs.size(); ++i) q.inputs[i].value.reset();
  const SourceFile src("agent.c", car_source("standard_10k"));
  copy_car_files(src, "standard_10k");
  const Program program = Program::compile(src.path(), "decide");
  const Model model = load_model(kSourceDir + "/examples/soid/car/standard_10k.onnx");
  const std::vector<std::string> behaviors = {"label == 0 || !safe_to_enter || in_intersection", "label == 1"};
  for (std::size_t b = 0; b < test::sized<std::size_t>(2, 1); ++b) {
    const std::string& behavior = behaviors[b];
    q.kind = behavior == "label == 1" ? QueryKind::Might : QueryKind::Would;
    q.behavior.text = behavior;
    expect_same(answer_query(model, q), answer_query(program, q), behavior);
  }
}

// nearest = true: the scenario changes as few logged inputs as any scenario can (enumeration of
// the 64 perceptions), for the models and the C program alike (under the sanitizers, two profiles).
TEST(ProgramQuery, NearestScenarioChangesFewestLoggedInputs) {
  std::vector<Query> all = load_query_file(kSourceDir + "/examples/soid/car/queries.toml");
  const auto it = std::find_if(all.begin(), all.end(), [](const Query& q) { return q.name == "nearest_stop"; });
  ASSERT_NE(it, all.end());
  const Query q = *it;
  ASSERT_TRUE(q.nearest);
  for (const char* profile : test::sampled(kProfiles, 4)) {
    const Model model = load_model(fmt::format("{}/examples/soid/car/{}.onnx", kSourceDir, profile));
    // Brute force: every value of the free inputs, the others as logged.
    std::vector<std::size_t> free;
    Eigen::MatrixXd x(10, 64);
    std::vector<double> logged(10);
    for (std::size_t i = 0; i < 10; ++i) {
      const auto in = std::find_if(q.inputs.begin(), q.inputs.end(),
                                   [&](const QueryInput& d) { return d.name == model.input_names[i]; });
      const std::string& v = in->value ? *in->value : *in->logged;
      logged[i] = v == "true" ? 1 : 0;
      if (!in->value) free.push_back(i);
    }
    ASSERT_EQ(free.size(), 6U);
    for (int c = 0; c < 64; ++c) {
      for (std::size_t i = 0; i < 10; ++i) x(static_cast<Eigen::Index>(i), c) = logged[i];
      for (std::size_t k = 0; k < 6; ++k) x(static_cast<Eigen::Index>(free[k]), c) = (c >> k) & 1;
    }
    const Evaluation ev = evaluate(model, x, Precision::Float64);
    int fewest = 99;
    for (int c = 0; c < 64; ++c) {
      int changed = 0;
      for (std::size_t k = 0; k < 6; ++k)
        changed += x(static_cast<Eigen::Index>(free[k]), c) != logged[free[k]] ? 1 : 0;
      if (ev.labels[static_cast<std::size_t>(c)] == 1) fewest = std::min(fewest, changed);
    }
    const SourceFile src("agent.c", car_source(profile));
    copy_car_files(src, profile);
    const Program program = Program::compile(src.path(), "decide");
    for (const QueryAnswer& a : {answer_query(model, q), answer_query(program, q)}) {
      ASSERT_EQ(a.answer, fewest < 99) << profile;
      if (!a.answer) continue;
      EXPECT_EQ(a.changed_inputs, fewest) << profile;
      EXPECT_TRUE(a.nearest_proven) << profile;
    }
  }
}

TEST(ProgramQuery, GlobalsLoopBoundsAndBadDeclarations) {
  const SourceFile src("agent.c",
                       "int limit = 3;\n"
                       "int decide(int n) {\n"
                       "  int s = 0;\n"
                       "  for (int i = 0; i < n; i++) s = (s * 7 + i) % 1000;\n"
                       "  return s > limit;\n"
                       "}\n");
  const Program program = Program::compile(src.path(), "decide");
  Query q;
  q.name = "g";
  q.where = "test: query 'g'";
  q.kind = QueryKind::Would;
  q.loop_bound = 8;
  q.inputs = {QueryInput::range("n", InputRole::State, InputType::Int, "0", "20")};
  q.behavior.text = "label == 1 || n <= 3";
  // n in 0..20: the loop bound cuts n > 9, so a "yes" covers only the finished paths.
  QueryAnswer a = answer_query(program, q);
  EXPECT_TRUE(a.answer);
  ASSERT_EQ(a.cut.size(), 1U);
  EXPECT_NE(a.cut[0].find("agent.c:4: the loop bound (8) was reached"), std::string::npos) << a.cut[0];
  // Within the bound there is no cut.
  q.inputs[0].max = "9";
  a = answer_query(program, q);
  EXPECT_TRUE(a.answer);
  EXPECT_TRUE(a.cut.empty());
  // The global is an input when declared: a larger limit makes n = 3 (s = 9) stay 0.
  q.kind = QueryKind::Might;
  q.inputs = {QueryInput::fixed("n", InputRole::State, InputType::Int, "3"),
              QueryInput::range("limit", InputRole::Environment, InputType::Int, "-5", "20")};
  q.behavior.text = "label == 0";
  a = answer_query(program, q);
  ASSERT_TRUE(a.answer);
  EXPECT_GE(a.scenario[1].number, 9);
  EXPECT_EQ(a.evaluator_label, 0);
  // Declarations must fit the parameters' types.
  q.inputs[0] = QueryInput::fixed("n", InputRole::State, InputType::Real, "3");
  EXPECT_THROW((void)answer_query(program, q), InputError);
  q.inputs[0] = QueryInput::fixed("n", InputRole::State, InputType::Int, "3000000000");
  try {
    (void)answer_query(program, q);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit the program's int"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace witness
