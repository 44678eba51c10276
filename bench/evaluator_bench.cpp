// Rows per second of the concrete evaluator on real data (Release build):
//   build/bench/bench_evaluator --benchmark_counters_tabular=true
// Each iteration labels one batch of dataset rows; the rows/s counter is the throughput.
#include <benchmark/benchmark.h>

#include <string>

#include "domain/dataset.h"
#include "domain/schema.h"
#include "model/evaluator.h"
#include "model/interpreter.h"
#include "model/loaders.h"

namespace {

struct Case {
  witness::Model model;
  Eigen::MatrixXd inputs;
};

Case load_case(const std::string& model, const std::string& dataset, Eigen::Index batch) {
  const std::string root = WITNESS_SOURCE_DIR "/benchmarks/fairify/";
  witness::Schema schema = witness::load_schema(root + dataset + ".toml");
  witness::Dataset data = witness::load_csv(root + "data/" + dataset + ".csv", schema);
  Eigen::MatrixXd x = data.model_inputs(schema);
  const std::string family = dataset;
  return {witness::load_model(root + "models/" + family + "/" + model + ".h5"), x.leftCols(std::min(batch, x.cols()))};
}

template <typename T>
void BM_Evaluate(benchmark::State& state, const char* model, const char* dataset) {
  const Case c = load_case(model, dataset, state.range(0));
  witness::Evaluator<T> ev(c.model);
  std::vector<int> labels;
  for (auto _ : state) {
    ev.labels(c.inputs, labels);
    benchmark::DoNotOptimize(labels.data());
  }
  state.counters["rows/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * c.inputs.cols()), benchmark::Counter::kIsRate);
}

void BM_Float64(benchmark::State& state, const char* model, const char* dataset) {
  BM_Evaluate<double>(state, model, dataset);
}
void BM_Float32(benchmark::State& state, const char* model, const char* dataset) {
  BM_Evaluate<float>(state, model, dataset);
}

// The generic interpreter (model/interpreter.h) over doubles, one row at a time: the reference the
// batched evaluator is measured against (why the evaluator keeps its own matrix code).
void BM_Interpreter(benchmark::State& state, const char* model, const char* dataset) {
  const Case c = load_case(model, dataset, state.range(0));
  witness::FloatDomain<double> d;
  witness::ModelInterpreter<witness::FloatDomain<double>> run(c.model, d, {});
  std::vector<double> x(static_cast<std::size_t>(c.inputs.rows()));
  for (auto _ : state) {
    for (Eigen::Index col = 0; col < c.inputs.cols(); ++col) {
      for (Eigen::Index r = 0; r < c.inputs.rows(); ++r) x[static_cast<std::size_t>(r)] = c.inputs(r, col);
      benchmark::DoNotOptimize(run.run(x).label);
    }
  }
  state.counters["rows/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * c.inputs.cols()), benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(BM_Float64, AC4, "AC4", "adult")->Arg(1)->Arg(256)->Arg(4096);
BENCHMARK_CAPTURE(BM_Float32, AC4, "AC4", "adult")->Arg(4096);
BENCHMARK_CAPTURE(BM_Float64, BM4, "BM4", "bank")->Arg(1)->Arg(256)->Arg(3090);
BENCHMARK_CAPTURE(BM_Float32, BM4, "BM4", "bank")->Arg(3090);
BENCHMARK_CAPTURE(BM_Float64, AC1, "AC1", "adult")->Arg(4096);
BENCHMARK_CAPTURE(BM_Interpreter, AC4, "AC4", "adult")->Arg(4096);
BENCHMARK_CAPTURE(BM_Interpreter, AC1, "AC1", "adult")->Arg(4096);

}  // namespace

BENCHMARK_MAIN();
