// A classifier seen only through its labels: a loaded model, or an external program that reads
// CSV rows on stdin and prints one label per row (the black-box testing methods use nothing else,
// ADF aside).
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   witness::ModelOracle native(model, schema, /*threads=*/2);
//   witness::CommandOracle program("python3 examples/blackbox/predict.py", schema, {});
//   Eigen::MatrixXd raw = witness::load_csv("benchmarks/fairify/data/adult.csv", schema).raw;   // [features][n]
//   std::vector<int> a, b;
//   native.labels(raw, a);
//   program.labels(raw, b);            // the same labels if the program wraps the same model
#pragma once

#include <Eigen/Dense>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "domain/schema.h"
#include "model/model.h"

namespace witness {

class ChildProcess;

class LabelOracle {
 public:
  virtual ~LabelOracle() = default;
  // One label (class index) per column of raw values ([schema size][n]).
  virtual void labels(const Eigen::MatrixXd& raw, std::vector<int>& out) = 0;
  // Called once after the last labels() of a complete run: a last chance to report a broken
  // oracle (InputError).
  virtual void finish() {}
  // The model behind the oracle when its weights are at hand (white-box methods, replay).
  [[nodiscard]] virtual const Model* model() const { return nullptr; }
  // What a message calls it: the model file or the command.
  [[nodiscard]] virtual std::string name() const = 0;
  [[nodiscard]] std::int64_t rows() const { return rows_; }  // labels asked for so far
  // While set, a long labels() call asks `stop` between parts of its batch and throws
  // OracleTimeLimit when it says yes (the batch is lost): a large batch on a wide network takes
  // longer than a time limit allows.
  void set_stop(std::function<bool()> stop) { stop_ = std::move(stop); }

 protected:
  [[nodiscard]] bool should_stop() const { return stop_ && stop_(); }
  std::int64_t rows_ = 0;

 private:
  std::function<bool()> stop_;
};

// The concrete evaluator in double; large batches are split over `threads` threads.
class ModelOracle : public LabelOracle {
 public:
  ModelOracle(const Model& model, const Schema& schema, unsigned threads);
  ~ModelOracle() override;
  ModelOracle(const ModelOracle&) = delete;
  ModelOracle& operator=(const ModelOracle&) = delete;
  void labels(const Eigen::MatrixXd& raw, std::vector<int>& out) override;
  [[nodiscard]] const Model* model() const override { return &model_; }
  [[nodiscard]] std::string name() const override { return model_.source; }

 private:
  struct Worker;
  const Model& model_;
  Schema schema_;
  std::vector<std::unique_ptr<Worker>> workers_;
  Eigen::Index chunk_ = 4096;  // columns evaluated at once (fewer for a costly model)
};

struct CommandOptions {
  double batch_seconds = 60.0;    // the program must answer a batch within this time
  std::int64_t max_batch = 8192;  // rows per exchange
  bool category_names = false;    // write category labels instead of codes
  int classes = 0;                // labels are 0..classes-1; 0: the schema's label classes, else 2
  // The whole run's deadline: an exchange still waiting then throws OracleTimeLimit.
  std::chrono::steady_clock::time_point run_deadline = std::chrono::steady_clock::time_point::max();
};

// The run's time limit passed while the oracle was still answering (the answer is lost).
class OracleTimeLimit : public Error {
 public:
  using Error::Error;
};

// Protocol (docs/blackbox.md): the header line (schema feature names) once, then batches of CSV
// rows, each batch followed by an empty line; the program answers every row with one line holding
// a class index or a class name of the schema's label, and flushes after each batch. Dying, a
// timeout, an unreadable answer or more answers than rows throw InputError naming the command.
class CommandOracle : public LabelOracle {
 public:
  CommandOracle(const std::string& command, const Schema& schema, const CommandOptions& options);
  ~CommandOracle() override;
  CommandOracle(const CommandOracle&) = delete;
  CommandOracle& operator=(const CommandOracle&) = delete;
  void labels(const Eigen::MatrixXd& raw, std::vector<int>& out) override;
  // Ends the program's input, waits for it to exit (at most the batch timeout, 5 s at most) and
  // throws if it printed lines that no row asked for.
  void finish() override;
  [[nodiscard]] std::string name() const override { return command_; }

 private:
  void exchange(const Eigen::MatrixXd& raw, Eigen::Index begin, Eigen::Index end, std::vector<int>& out);
  [[nodiscard]] int parse_label(const std::string& line, std::int64_t row) const;

  std::string command_;
  Schema schema_;
  CommandOptions options_;
  std::unique_ptr<ChildProcess> process_;
  bool header_sent_ = false;
  bool killed_ = false;
  std::int64_t batches_ = 0;
};

}  // namespace witness
