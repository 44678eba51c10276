#include "run/near_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "core/error.h"

namespace witness {

FairnessResult fair_near_data(const JobSubject& subject, const FairnessProblem& problem, const EngineSettings& settings,
                              int k, Env& env) {
  if (!subject.data) throw InputError("--near-data needs data rows (--data)");
  const Schema& schema = problem.schema();
  const Eigen::MatrixXd& raw = subject.data->raw;
  const std::vector<int>& prot = problem.protected_features();
  std::vector<bool> is_prot(static_cast<std::size_t>(schema.size()), false);
  for (int f : prot) is_prot[static_cast<std::size_t>(f)] = true;
  // Distinct non-protected parts of the valid rows, in data order, with how many rows share each.
  std::map<std::vector<double>, std::size_t> index;
  std::vector<Eigen::Index> first;
  std::vector<double> weight;
  for (Eigen::Index j = 0; j < raw.cols(); ++j) {
    if (!schema.constraints().satisfied(raw.col(j))) continue;
    std::vector<double> key;
    for (int f = 0; f < schema.size(); ++f)
      if (!is_prot[static_cast<std::size_t>(f)]) key.push_back(raw(f, j));
    const auto [it, added] = index.emplace(std::move(key), first.size());
    if (added) {
      first.push_back(j);
      weight.push_back(0.0);
    }
    weight[it->second] += 1.0;
  }
  double rows = 0.0;
  for (double w : weight) rows += w;
  if (rows == 0.0)
    throw InputError(subject.data_name, "", "--near-data: no data row satisfies the schema's constraints");

  // Boxes over real-valued features are never counted exactly (the engine splits them down to
  // slivers): without a time limit they share a default one, said in the answer's phase.
  constexpr double kRealBoxesSeconds = 30.0;
  bool real_valued = false;
  for (int f = 0; f < schema.size(); ++f)
    real_valued = real_valued || (!is_prot[static_cast<std::size_t>(f)] && !schema.feature(f).integral());
  Env shared = env;
  const bool default_limit = real_valued && !std::isfinite(env.seconds_left());
  if (default_limit) {
    shared.options.set("time-limit", fmt::format("{}", env.elapsed_seconds() + kRealBoxesSeconds));
  }
  FairnessResult out;
  out.engine = "complete";
  out.share.measured = true;
  double certified = 0.0, falsified = 0.0, decided = 0.0;  // weighted shares; rows whose box finished
  std::size_t boxes = 0;
  const int asked = std::max(1, settings.max_witnesses);
  for (std::size_t b = 0; b < first.size() && !shared.expired(); ++b) {
    Eigen::VectorXd lo(schema.size()), hi(schema.size());
    for (int f = 0; f < schema.size(); ++f) {
      const Feature& feat = schema.feature(f);
      const double v = raw(f, first[b]);
      double step = 0.0;
      if (!is_prot[static_cast<std::size_t>(f)] && feat.kind == FeatureKind::Integer) step = k;
      if (!is_prot[static_cast<std::size_t>(f)] && feat.kind == FeatureKind::Real)
        step = k * (feat.max - feat.min) / 100.0;
      lo(f) = is_prot[static_cast<std::size_t>(f)] ? feat.min : std::max(feat.min, v - step);
      hi(f) = is_prot[static_cast<std::size_t>(f)] ? feat.max : std::min(feat.max, v + step);
    }
    const Schema box = schema.with_bounds(lo, hi, fmt::format("near row {}", first[b] + 1));
    const FairnessProblem near(problem.model(), box, problem.protected_names());
    EngineSettings s = settings;
    s.max_witnesses = std::max(1, asked - static_cast<int>(out.witnesses.size()));
    // Under a time limit every box gets its share of what is left (a box that finishes early
    // leaves its time to the rest), so that every row's box is searched: on real-valued features
    // one box could otherwise take the whole limit splitting slivers.
    Env box_env = env;
    if (const double left = shared.seconds_left(); std::isfinite(left)) {
      box_env.options.set("time-limit",
                          fmt::format("{}", std::max(0.001, left / static_cast<double>(first.size() - b))));
      box_env.start();
    }
    s.estimate_seconds = 0.0;  // a box's undecided share stays undecided: no sampling per box
    const FairnessResult r = run_fairness_engine("complete", near, s, box_env);
    out.stats.regions += r.stats.regions;
    out.stats.leaves += r.stats.leaves;
    out.stats.tests += r.stats.tests;
    for (const WitnessPair& w : r.witnesses)
      if (static_cast<int>(out.witnesses.size()) < asked) out.witnesses.push_back(w);
    // A box cut short by the time limit counts with the sound shares it reached; a box where no
    // two people differ only in the protected features (a husband's sex) has no unfair point.
    if (r.vacuous) {
      certified += weight[b];
      decided += weight[b];
      ++boxes;
      continue;
    }
    certified += weight[b] * r.share.certified;
    falsified += weight[b] * r.share.falsified;
    if (r.share.undecided == 0.0) decided += weight[b];
    ++boxes;
    if (!settings.quantify && static_cast<int>(out.witnesses.size()) >= asked) break;
  }
  out.share.certified = certified / rows;
  out.share.falsified = falsified / rows;
  // Exactly 0 once every box finished (the weighted sums need not add up to 1 in floating point).
  out.share.undecided = decided == rows ? 0.0 : std::max(0.0, 1.0 - out.share.certified - out.share.falsified);
  out.phase = fmt::format("near data: boxes of +-{} around {} of {} distinct rows{}", k, boxes, first.size(),
                          default_limit ? fmt::format(" (real-valued features and no --time-limit: the boxes shared "
                                                      "{:.0f} s)",
                                                      kRealBoxesSeconds)
                                        : "");
  out.witnesses_asked = asked;
  if (!out.witnesses.empty()) {
    out.verdict = Verdict::Witness;
    out.exhaustive = settings.quantify && boxes == first.size() && out.share.undecided == 0.0;
  } else if (boxes == first.size() && out.share.falsified == 0.0 && out.share.undecided == 0.0) {
    out.verdict = Verdict::Verified;
    out.exhaustive = true;
  } else {
    out.reason = boxes < first.size() ? fmt::format("{} reached after {} of the {} boxes around the data rows",
                                                    shared.stop_reason(), boxes, first.size())
                                      : "some box around a data row stays undecided";
  }
  out.stats.seconds = env.elapsed_seconds();
  return out;
}

}  // namespace witness
