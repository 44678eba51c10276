#include "fairness/oracle.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/error.h"
#include "core/parallel.h"
#include "core/process.h"
#include "domain/dataset.h"
#include "model/evaluator.h"

namespace witness {

struct ModelOracle::Worker {
  explicit Worker(const Model& m) : evaluator(m) {}
  Evaluator<double> evaluator;
  std::vector<int> labels;
};

ModelOracle::ModelOracle(const Model& model, const Schema& schema, unsigned threads) : model_(model), schema_(schema) {
  if (schema.model_width() != model.input_width()) {
    throw InputError(schema.source(), "",
                     fmt::format("describes {} model inputs, the model {} has {}", schema.model_width(), model.source,
                                 model.input_width()));
  }
  for (unsigned t = 0; t < std::max(1U, threads); ++t) workers_.push_back(std::make_unique<Worker>(model));
  chunk_ = batch_columns(model);  // 4096 columns of a small network, 64 of a 10 x 1000 one
}

ModelOracle::~ModelOracle() = default;

void ModelOracle::labels(const Eigen::MatrixXd& raw, std::vector<int>& out) {
  const Eigen::Index n = raw.cols();
  rows_ += n;
  out.assign(static_cast<std::size_t>(n), 0);
  // Fixed chunks of columns, each evaluated alone, whatever the thread count (so the labels are
  // the same bits for any --threads), in rounds of one chunk per thread: memory stays bounded (a
  // layer's activations are width x chunk) and the stop flag is asked between rounds.
  const Eigen::Index chunks = (n + chunk_ - 1) / chunk_;
  const auto threads = static_cast<Eigen::Index>(workers_.size());
  for (Eigen::Index first = 0; first < chunks; first += threads) {
    if (should_stop()) throw OracleTimeLimit("the time limit passed while the model was labelling a batch");
    const Eigen::Index parts = std::min(threads, chunks - first);
    auto run = [&](Eigen::Index p) {
      const Eigen::Index from = (first + p) * chunk_;
      const Eigen::Index to = std::min(n, from + chunk_);
      Worker& w = *workers_[static_cast<std::size_t>(p)];
      w.evaluator.labels(schema_.to_model_columns(raw.middleCols(from, to - from)), w.labels);
      std::copy(w.labels.begin(), w.labels.end(), out.begin() + from);
    };
    if (parts == 1) {
      run(0);
    } else {
      parallel_for(static_cast<unsigned>(parts), static_cast<std::size_t>(parts),
                   [&](std::size_t p, unsigned /*worker*/) { run(static_cast<Eigen::Index>(p)); });
    }
  }
}

CommandOracle::CommandOracle(const std::string& command, const Schema& schema, const CommandOptions& options)
    : command_(command), schema_(schema), options_(options) {
  if (command.find_first_not_of(" \t") == std::string::npos) throw InputError("--cmd: the command is empty");
  if (options.max_batch <= 0 || options.batch_seconds <= 0)
    throw InputError("--cmd: batch size and batch timeout must be positive");
  if (options.classes < 0 || options.classes == 1) throw InputError("--classes: expected at least 2 classes");
  process_ = std::make_unique<ChildProcess>(command);
}

CommandOracle::~CommandOracle() = default;

void CommandOracle::labels(const Eigen::MatrixXd& raw, std::vector<int>& out) {
  if (raw.rows() != schema_.size()) {
    throw InputError(schema_.source(), "",
                     fmt::format("a raw batch has {} rows, the schema {} features", raw.rows(), schema_.size()));
  }
  out.clear();
  out.reserve(static_cast<std::size_t>(raw.cols()));
  for (Eigen::Index begin = 0; begin < raw.cols(); begin += options_.max_batch)
    exchange(raw, begin, std::min<Eigen::Index>(raw.cols(), begin + options_.max_batch), out);
}

void CommandOracle::exchange(const Eigen::MatrixXd& raw, Eigen::Index begin, Eigen::Index end, std::vector<int>& out) {
  std::string text;
  if (!header_sent_) {
    for (int f = 0; f < schema_.size(); ++f) text += (f == 0 ? "" : ",") + csv_field(schema_.feature(f).name);
    text += '\n';
    header_sent_ = true;
  }
  for (Eigen::Index j = begin; j < end; ++j) {
    for (int f = 0; f < schema_.size(); ++f) {
      if (f != 0) text += ',';
      const double v = raw(f, j);
      const Feature& feat = schema_.feature(f);
      if (options_.category_names && feat.kind == FeatureKind::Categorical) {
        text += csv_field(schema_.display(f, v));
      } else if (feat.integral()) {
        text += fmt::format("{}", static_cast<long long>(v));
      } else {
        text += fmt::format("{}", v);  // shortest form that reads back as the same double
      }
    }
    text += '\n';
  }
  text += '\n';  // end of batch
  ++batches_;
  const auto rows = static_cast<std::size_t>(end - begin);
  const std::string where = fmt::format("batch {} ({} rows)", batches_, rows);
  auto with_stderr = [&](std::string what) {
    const std::string tail = process_->stderr_tail();
    if (!tail.empty()) what += "; its stderr ends: " + tail.substr(tail.size() > 400 ? tail.size() - 400 : 0);
    return what;
  };
  const auto now = std::chrono::steady_clock::now();
  const auto batch_deadline = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                        std::chrono::duration<double>(options_.batch_seconds));
  std::vector<std::string> lines;
  const ChildProcess::Status status =
      process_->exchange(text, rows, lines, std::min(batch_deadline, options_.run_deadline));
  // The answers that did arrive are checked first: a wrong answer explains more than a timeout.
  for (std::size_t i = 0; i < lines.size(); ++i)
    out.push_back(parse_label(lines[i], rows_ + static_cast<std::int64_t>(i) + 1));
  if (status == ChildProcess::Status::Timeout) {
    process_->kill();
    killed_ = true;
    if (options_.run_deadline < batch_deadline)
      throw OracleTimeLimit(fmt::format("{}: the time limit passed during {}", command_, where));
    throw InputError(command_, where,
                     with_stderr(fmt::format("no complete answer within {} s ({} of {} labels arrived)",
                                             options_.batch_seconds, lines.size(), rows)));
  }
  if (status == ChildProcess::Status::Closed) {
    throw InputError(command_, where,
                     with_stderr(fmt::format("the program stopped answering after {} of {} labels ({})", lines.size(),
                                             rows, process_->exit_description())));
  }
  // More answers than rows would shift every later answer (the rest is caught by finish()).
  if (process_->unread_output() > 0) {
    throw InputError(command_, where,
                     "the program printed more lines than there were rows; it must print exactly one label "
                     "per row and nothing for the header or the empty line that ends a batch");
  }
  rows_ += static_cast<std::int64_t>(rows);
}

void CommandOracle::finish() {
  if (killed_) return;  // a batch was cut short: its late answers prove nothing
  process_->close_input();
  const auto wait = std::chrono::milliseconds(static_cast<long>(1000 * std::min(options_.batch_seconds, 5.0)));
  (void)process_->exit_description(wait);
  if (process_->unread_output() > 0) {
    throw InputError(command_, "after the last batch",
                     "the program printed more lines than there were rows; it must print exactly one label "
                     "per row and nothing for the header or the empty line that ends a batch");
  }
}

int CommandOracle::parse_label(const std::string& line, std::int64_t row) const {
  std::string t = line;
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.pop_back();
  std::size_t start = t.find_first_not_of(" \t");
  t = start == std::string::npos ? "" : t.substr(start);
  const std::vector<std::string>& classes = schema_.label_classes();
  for (std::size_t c = 0; c < classes.size(); ++c)
    if (t == classes[c]) return static_cast<int>(c);
  const bool digits =
      !t.empty() && t.size() <= 6 && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
  const int max_class = (options_.classes > 0 ? options_.classes
                         : classes.empty()    ? 2
                                              : static_cast<int>(classes.size())) -
                        1;
  if (digits && std::stoi(t) <= max_class) return std::stoi(t);
  std::string expected = fmt::format("a class index 0..{}", max_class);
  for (const std::string& c : classes) expected += " or '" + c + "'";
  if (t.size() > 60) t = t.substr(0, 60) + "...";
  throw InputError(command_, fmt::format("answer line {}", row), fmt::format("expected {}, got '{}'", expected, t));
}

}  // namespace witness
