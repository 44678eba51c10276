#include "report/testing_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sstream>

#include "report/rows.h"

namespace witness {
namespace {

double rate(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

nlohmann::json pair_json(const TestingRun& run, const DiscriminatoryPair& p) {
  return {{"x", named_row(run.schema, p.x)},
          {"x_prime", named_row(run.schema, p.x_prime)},
          {"label", testing_label(run, p.label)},
          {"label_prime", testing_label(run, p.label_prime)}};
}

}  // namespace

std::string testing_label(const TestingRun& run, int label) {
  return run.model != nullptr ? label_name(*run.model, run.schema, label) : label_name(run.schema, label);
}

std::string testing_text(const TestingRun& run) {
  const TestResult& r = run.result;
  const Schema& schema = run.schema;
  const double tps = r.seconds > 0 ? static_cast<double>(r.generated) / r.seconds : 0.0;
  const double dps = r.seconds > 0 ? static_cast<double>(r.discriminatory) / r.seconds : 0.0;
  std::ostringstream out;
  const std::string who =
      run.model != nullptr ? fmt::format("{} ({})", run.model->name, run.model->source) : "'" + run.command + "'";
  out << fmt::format("{} on {}, protected {}\n", to_string(r.method), who, fmt::join(run.protected_names, ","));
  out << fmt::format("  {} unique tests, {} discriminatory ({:.1f}%) in {:.2f} s; stopped: {}\n", r.generated,
                     r.discriminatory, 100 * rate(r.discriminatory, r.generated), r.seconds, r.stopped);
  std::string phases;
  for (const TestPhase& ph : r.phases)
    phases += fmt::format("{}{} {}/{}", phases.empty() ? "" : ", ", ph.name, ph.discriminatory, ph.generated);
  out << fmt::format("  per phase (discriminatory/generated): {}\n", phases);
  out << fmt::format("  {:.0f} tests/s, {:.0f} discriminatory/s; {} labels asked of the {}\n", tps, dps, r.queries,
                     run.model != nullptr ? "model" : "program");
  if (r.rejected > 0)
    out << fmt::format("  {} label changes did not replay on the model and were dropped\n", r.rejected);
  if (r.invalid > 0) {
    const std::int64_t proposed = r.invalid + r.generated + r.duplicates;
    out << fmt::format(
        "  {} of {} proposed inputs broke a constraint of the schema and were not tested "
        "(acceptance {:.1f}%)\n",
        r.invalid, proposed, 100 * rate(proposed - r.invalid, proposed));
  }
  if (!run.pairs.empty()) {
    const DiscriminatoryPair& example = run.pairs.front();
    out << fmt::format("  example: {} -> {}\n", schema.display_row(example.x), testing_label(run, example.label));
    std::string changed;
    for (int f : run.protected_features)
      changed += fmt::format("{}{}={}", changed.empty() ? "" : ", ", schema.feature(f).name,
                             schema.display(f, example.x_prime(f)));
    out << fmt::format("       vs: {} -> {}\n", changed, testing_label(run, example.label_prime));
  }
  if (!run.pairs_csv.empty()) out << fmt::format("  {} pairs written to {}\n", run.pairs_written, run.pairs_csv);
  return out.str();
}

nlohmann::json testing_json(const TestingRun& run) {
  const TestResult& r = run.result;
  const double tps = r.seconds > 0 ? static_cast<double>(r.generated) / r.seconds : 0.0;
  const double dps = r.seconds > 0 ? static_cast<double>(r.discriminatory) / r.seconds : 0.0;
  nlohmann::json phases = nlohmann::json::object();
  for (const TestPhase& ph : r.phases)
    phases[ph.name] = {{"generated", ph.generated}, {"discriminatory", ph.discriminatory}};
  nlohmann::json doc = {{"method", to_string(r.method)},
                        {"model", run.model != nullptr ? nlohmann::json(run.model->source) : nlohmann::json(nullptr)},
                        {"command", run.model != nullptr ? nullptr : nlohmann::json(run.command)},
                        {"protected", run.protected_names},
                        {"budget", run.budget},
                        {"seed", run.seed},
                        {"generated", r.generated},
                        {"discriminatory", r.discriminatory},
                        {"success_rate", rate(r.discriminatory, r.generated)},
                        {"per_phase", phases},
                        {"seconds", r.seconds},
                        {"tests_per_second", tps},
                        {"discriminatory_per_second", dps},
                        {"queries", r.queries},
                        {"duplicates", r.duplicates},
                        {"rejected", r.rejected},
                        {"invalid", r.invalid},
                        {"stopped", r.stopped},
                        {"pairs_csv", run.pairs_csv.empty() ? nullptr : nlohmann::json(run.pairs_csv)}};
  doc["example"] = run.pairs.empty() ? nlohmann::json(nullptr) : pair_json(run, run.pairs.front());
  return doc;
}

nlohmann::json testing_pairs_json(const TestingRun& run) {
  nlohmann::json out = nlohmann::json::array();
  for (const DiscriminatoryPair& p : run.pairs) out.push_back(pair_json(run, p));
  return out;
}

}  // namespace witness
