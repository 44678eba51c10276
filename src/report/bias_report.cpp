#include "report/bias_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sstream>

#include "model/evaluator.h"
#include "report/rows.h"

namespace witness {

std::string bias_text(const BiasRun& run) {
  const BiasEstimate& b = run.estimate;
  const std::string joined = fmt::format("{}", fmt::join(run.protected_names, ","));
  const std::string source = run.data.empty() ? "uniform random in-domain inputs" : "random rows of " + run.data;
  std::ostringstream out;
  out << fmt::format("Bias% of {} for {}: {:.3f}%  (95% CI {:.3f}% .. {:.3f}%)\n", run.model.name, joined,
                     100.0 * b.rate, 100.0 * b.ci_low, 100.0 * b.ci_high);
  out << fmt::format("  {} of {} {} changed label when {} changed (seed {}, {:.2f} s)\n", b.discriminatory, b.samples,
                     source, joined, run.seed, run.seconds);
  if (b.drawn > b.samples) {
    out << fmt::format(
        "  over people who can exist: {} of {} pairs drawn kept (acceptance {:.1f}%); the rest broke a constraint of "
        "the schema\n",
        b.samples, b.drawn, 100.0 * static_cast<double>(b.samples) / static_cast<double>(b.drawn));
  }
  if (b.stopped) {
    out << fmt::format(
        "  stopped early (time limit, memory limit or cancel): the estimate is over the {} samples drawn\n", b.samples);
  }
  if (b.nan_labels > 0) {
    out << fmt::format(
        "  warning: the model's decision value is NaN for {} of the {} inputs evaluated: their labels mean "
        "nothing, and neither does this estimate\n",
        b.nan_labels, 2 * b.samples);
  }
  if (b.example) {
    out << "  example: " << run.schema.display_row(b.example->first) << '\n';
    out << "       vs: " << run.schema.display_row(b.example->second) << '\n';
  }
  return out.str();
}

nlohmann::json bias_json(const BiasRun& run) {
  const BiasEstimate& b = run.estimate;
  nlohmann::json doc = {{"model", run.model.source},
                        {"protected", run.protected_names},
                        {"samples", b.samples},
                        {"inputs", run.data.empty() ? "uniform" : "data"},
                        {"seed", run.seed},
                        {"discriminatory", b.discriminatory},
                        {"bias_percent", 100.0 * b.rate},
                        {"ci95_percent", {100.0 * b.ci_low, 100.0 * b.ci_high}},
                        {"nan_labels", b.nan_labels},
                        {"drawn", b.drawn},
                        {"stopped", b.stopped},
                        {"seconds", run.seconds}};
  doc["example"] = nullptr;
  if (b.example) {
    doc["example"] = {{"x", named_row(run.schema, b.example->first)},
                      {"x_prime", named_row(run.schema, b.example->second)}};
  }
  return doc;
}

nlohmann::json bias_pairs_json(const BiasRun& run) {
  nlohmann::json out = nlohmann::json::array();
  const BiasEstimate& b = run.estimate;
  if (b.example) {
    // The labels are replayed here: the estimate keeps only the inputs.
    Eigen::MatrixXd x(run.model.input_width(), 2);
    x.col(0) = run.schema.to_model(b.example->first);
    x.col(1) = run.schema.to_model(b.example->second);
    Evaluator<double> ev(run.model);
    const Evaluation e = ev.run(x);
    out.push_back({{"x", named_row(run.schema, b.example->first)},
                   {"x_prime", named_row(run.schema, b.example->second)},
                   {"label", label_name(run.model, run.schema, e.labels[0])},
                   {"label_prime", label_name(run.model, run.schema, e.labels[1])}});
  }
  return out;
}

}  // namespace witness
