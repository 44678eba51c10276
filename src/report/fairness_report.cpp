#include "report/fairness_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <sstream>

#include "core/error.h"
#include "domain/dataset.h"
#include "fairness/verdict.h"
#include "report/group_report.h"
#include "report/rows.h"

namespace witness {
namespace {

constexpr std::size_t kMaxFlipsInJson = 100000;  // flipped rows listed in `data.flips` (all in --flips-out)

// With data rows: the closest row (0-based, as in the data) and the features where x differs from it.
nlohmann::json nearest_row_json(const Schema& schema, const WitnessPair& w, const DataShare& data) {
  if (w.nearest_row < 0) return nullptr;
  nlohmann::json differs = nlohmann::json::array();
  for (int f : w.nearest_differs) differs.push_back(schema.feature(f).name);
  nlohmann::json j = {{"row", w.nearest_row + 1}, {"differs", differs}};  // a data row number, from 1
  if (!data.row_labels.empty()) j["index"] = data.row_labels[static_cast<std::size_t>(w.nearest_row)];
  return j;
}

std::string nearest_row_text(const Schema& schema, const WitnessPair& w, const DataShare& data) {
  if (w.nearest_row < 0) return "";
  const std::string row = row_name(data.row_labels, w.nearest_row);
  if (w.nearest_differs.empty()) return fmt::format("  x is a person of the data: {} of {}\n", row, data.source);
  std::vector<std::string> names;
  for (int f : w.nearest_differs) names.push_back(schema.feature(f).name);
  return fmt::format("  nearest data row: {} of {}, which differs from x in {} feature{} ({})\n", row, data.source,
                     names.size(), names.size() == 1 ? "" : "s", fmt::join(names, ", "));
}

nlohmann::json witness_json(const Model& model, const Schema& schema, const WitnessPair& w, const DataShare& data) {
  return {{"x", to_vector(w.x)},
          {"x_prime", to_vector(w.x_prime)},
          {"x_named", named_row(schema, w.raw)},
          {"x_prime_named", named_row(schema, w.raw_prime)},
          {"label", w.label},
          {"label_prime", w.label_prime},
          {"label_name", label_name(model, schema, w.label)},
          {"label_prime_name", label_name(model, schema, w.label_prime)},
          {"output", to_vector(w.output)},
          {"output_prime", to_vector(w.output_prime)},
          {"float32_witness", w.float32_witness},
          {"float32_within_rounding", w.float32_within_rounding},
          {"nearest_row", nearest_row_json(schema, w, data)}};
}

// A bin of a feature marginal as text: "credit_amount 7501..8750", "purpose=A43".
std::string bin_text(const Schema& schema, const FeatureMarginal& m, std::size_t b) {
  const std::string name = schema.feature(m.feature).name;
  if (m.lo[b] == m.hi[b]) return name + "=" + schema.display_quoted(m.feature, m.lo[b]);
  return fmt::format("{} {}..{}", name, schema.display_quoted(m.feature, m.lo[b]),
                     schema.display_quoted(m.feature, m.hi[b]));
}

// For each feature, the fewest values (a range of numbers, a set of categories) that hold 80% of
// the falsified individuals; the three features where those values are the smallest share of the
// domain say best for whom the model is unfair.
void write_marginals(std::ostream& out, const Schema& schema, const FairnessResult& r) {
  if (r.share.falsified <= 0.0) return;
  struct Where {
    double domain, falsified;
    std::string text;
  };
  std::vector<Where> found;
  for (const FeatureMarginal& m : r.marginals) {
    const std::size_t n = m.falsified.size();
    Where best{2.0, 0.0, ""};
    if (schema.feature(m.feature).kind == FeatureKind::Categorical) {
      std::vector<std::size_t> order(n);
      for (std::size_t i = 0; i < n; ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&m](std::size_t a, std::size_t b) {
        return m.falsified[a] / std::max(m.domain[a], 1e-300) > m.falsified[b] / std::max(m.domain[b], 1e-300);
      });
      double f = 0.0, d = 0.0;
      std::string names;
      for (std::size_t i = 0; i < n && f < 0.8; ++i) {
        f += m.falsified[order[i]], d += m.domain[order[i]];
        names += (names.empty() ? "" : ", ") + schema.display_quoted(m.feature, m.lo[order[i]]);
      }
      best = {d, f, schema.feature(m.feature).name + " in {" + names + "}"};
    } else {
      for (std::size_t i = 0; i < n; ++i) {  // the narrowest window of bins holding 80%
        double f = 0.0, d = 0.0;
        for (std::size_t j = i; j < n; ++j) {
          f += m.falsified[j], d += m.domain[j];
          if (f < 0.8) continue;
          if (d < best.domain) {
            const Feature& feat = schema.feature(m.feature);
            best = {d, f,
                    feat.integral() ? fmt::format("{} {}..{}", feat.name, schema.display_quoted(m.feature, m.lo[i]),
                                                  schema.display_quoted(m.feature, m.hi[j]))
                                    : real_interval_text(feat.name, m.lo[i], m.hi[j])};
          }
          break;
        }
      }
    }
    if (best.domain <= 0.7) found.push_back(best);
  }
  std::sort(found.begin(), found.end(), [](const Where& a, const Where& b) { return a.domain < b.domain; });
  if (found.empty()) return;
  out << "  for whom (values holding most of the falsified individuals; their share of the domain):\n";
  for (std::size_t i = 0; i < found.size() && i < 3; ++i)
    out << fmt::format("    {}: {} of them ({} of the domain)\n", found[i].text, percent(found[i].falsified),
                       percent(found[i].domain));
}

nlohmann::json marginals_json(const Schema& schema, const std::vector<FeatureMarginal>& marginals) {
  nlohmann::json out = nlohmann::json::array();
  for (const FeatureMarginal& m : marginals) {
    nlohmann::json bins = nlohmann::json::array();
    for (std::size_t b = 0; b < m.lo.size(); ++b)
      bins.push_back({{"range", bin_text(schema, m, b)},
                      {"lo", schema.display(m.feature, m.lo[b])},
                      {"hi", schema.display(m.feature, m.hi[b])},
                      {"falsified", m.falsified[b]},
                      {"domain", m.domain[b]}});
    out.push_back({{"feature", schema.feature(m.feature).name}, {"bins", bins}});
  }
  return out;
}

void write_shares(std::ostream& out, const Schema& schema, const std::vector<std::string>& names,
                  const std::vector<int>& prot, const FairnessResult& r) {
  const DomainShare& d = r.share;
  // With constraints, an unfinished run knows only a bound on how many points can be people.
  const bool constrained = !schema.constraints().empty();
  const std::string points = d.points <= 0.0L ? ""
                             : constrained
                                 ? fmt::format(" of {}{:.6g} points that can be people (the schema's constraints)",
                                               d.undecided > 0.0 ? "at most " : "", static_cast<double>(d.points))
                                 : fmt::format(" of {:.6g} points", static_cast<double>(d.points));
  // "near data: ..." or, when data rows were decided first, "data rows, then near data: ...".
  const bool near = r.phase.find("near data") != std::string::npos;
  out << fmt::format("  {}: certified {}, falsified {}, undecided {}{}\n",
                     near ? "near the data rows (each row's box weighing one)" : "domain", percent(d.certified),
                     percent(d.falsified), percent(d.undecided), points);
  if (d.estimate && d.estimate->samples > 0)
    out << fmt::format(
        "  estimate: falsified {} (between {} and {} at {:g}% confidence; {} of {} points drawn in the "
        "undecided regions are unfair)\n",
        percent(d.estimate->share), percent(d.estimate->lo), percent(d.estimate->hi), 100.0 * d.estimate->confidence,
        d.estimate->unfair, d.estimate->samples);
  if (d.exact) {
    out << fmt::format("  exactly {} of the {} points change label when {} changes\n",
                       static_cast<std::uint64_t>(d.falsified_points), static_cast<std::uint64_t>(d.points),
                       fmt::join(names, " or "));
  } else if (d.undecided == 0.0 && d.points >= 18446744073709551616.0L) {
    out << fmt::format(
        "  about {:.6Le} of the {:.6Le} points change label when {} changes (every region was "
        "decided, but more than 2^64 points are counted in long double: the last digits are "
        "rounded)\n",
        d.falsified_points, d.points, fmt::join(names, " or "));
  }
  write_marginals(out, schema, r);
  std::size_t shown = 0, falsified = 0;
  for (const RegionReport& g : r.regions) falsified += g.falsified > 0.0 ? 1 : 0;
  for (const RegionReport& g : r.regions) {
    if (g.falsified <= 0.0 || shown == 5) continue;
    if (shown++ == 0)
      out << fmt::format("  falsified regions, largest first ({} of {}{}):\n", std::min<std::size_t>(5, falsified),
                         falsified, falsified > 5 ? "; all with --regions-out" : "");
    const std::string who = g.all_falsified ? "every point"
                            : g.undecided > 0.0
                                ? fmt::format("at least {} of its points ({} undecided)",
                                              percent(g.falsified / g.share), percent(g.undecided / g.share))
                                : fmt::format("{} of its points", percent(g.falsified / g.share));
    out << fmt::format("    {} of the domain, {}: {}\n", percent(g.falsified), who, region_rule(schema, g, prot));
  }
}

nlohmann::json regions_json(const Schema& schema, const std::vector<int>& prot,
                            const std::vector<RegionReport>& regions) {
  nlohmann::json out = nlohmann::json::array();
  for (const RegionReport& g : regions) {
    nlohmann::json bounds = nlohmann::json::object();
    for (int f = 0; f < schema.size(); ++f) {
      if (std::find(prot.begin(), prot.end(), f) != prot.end()) continue;
      bounds[schema.feature(f).name] = {schema.display(f, g.lo(f)), schema.display(f, g.hi(f))};
    }
    out.push_back({{"rule", region_rule(schema, g, prot)},
                   {"all_falsified", g.all_falsified},
                   {"share", g.share},
                   {"falsified", g.falsified},
                   {"undecided", g.undecided},
                   {"points", static_cast<double>(g.points)},
                   {"bounds", bounds}});
  }
  return out;
}

void write_verdict(std::ostream& out, const FairnessRun& run) {
  const Model& model = run.problem.model();
  const Schema& schema = run.problem.schema();
  const std::vector<int>& prot = run.problem.protected_features();
  const std::vector<std::string>& names = run.problem.protected_names();
  const FairnessResult& r = run.result;
  const SearchStats& st = r.stats;
  switch (r.verdict) {
    case Verdict::Witness: {
      const WitnessPair& w = r.witnesses.front();
      // Name only the protected features that differ between x and x'.
      std::vector<std::string> differ;
      std::string changed;
      for (int f : prot) {
        if (w.raw[f] == w.raw_prime[f]) continue;
        // A feature derived from a protected one changes with it: named as the proxy it is.
        const DerivedFeature* d = schema.constraints().derivation_of(f);
        differ.push_back(d == nullptr ? schema.feature(f).name
                                      : fmt::format("{} (a proxy: derived from {})", schema.feature(f).name,
                                                    schema.feature(d->source).name));
        changed += fmt::format("{}{}={}", changed.empty() ? "" : ", ", schema.feature(f).name,
                               schema.display_quoted(f, w.raw_prime[f]));
      }
      out << fmt::format("witness: {} treats these two inputs differently; they differ only in {}\n", model.name,
                         fmt::join(differ, ", "));
      out << fmt::format("  x : {}\n      -> {}\n", schema.display_row(w.raw), label_name(model, schema, w.label));
      out << fmt::format("  x': {} (the rest as x)\n      -> {}\n", changed, label_name(model, schema, w.label_prime));
      if (w.float32_within_rounding) {
        out << "  replayed on the original model in double; in float32 the logits are within rounding error of "
               "the threshold, so float32 labels cannot tell\n";
      } else if (w.float32_witness) {
        out << "  replayed on the original model in double and float32\n";
      } else {
        out << "  replayed on the original model in double (in float32 both get the same label)\n";
      }
      out << nearest_row_text(schema, w, r.data);
      if (r.witnesses_asked > 1) {
        const int found = static_cast<int>(r.witnesses.size());
        out << (found >= r.witnesses_asked
                    ? fmt::format("  {} witnesses found, as asked (--witnesses-out writes them all)\n", found)
                    : fmt::format("  {} of the {} witnesses asked for: {}\n", found, r.witnesses_asked,
                                  r.witnesses_note));
      }
      break;
    }
    case Verdict::Verified:
      if (r.vacuous) {
        out << fmt::format("verified, vacuous: {}; {} has no pair to compare in {}\n", r.reason, model.name,
                           schema.source());
        break;
      }
      out << fmt::format(
          "verified: {} has no unfairness witness for {} in {} of {}\n", model.name, fmt::join(names, ", "),
          r.phase.find("near data") != std::string::npos ? "the boxes around the data rows" : "the domain",
          schema.source());
      if (r.share.measured) {
        out << fmt::format("  every region was closed by sound bounds or decided exactly ({} regions, {} leaves)\n",
                           st.regions, st.leaves);
      } else if (r.engine == "smt") {
        out << "  one exact Z3 query of the dual model over the whole domain is unsatisfiable\n";
      } else {
        out << fmt::format("  every path of the dual model was explored (exhaustive: {} paths, {} infeasible)\n",
                           st.paths, st.unsat);
      }
      break;
    case Verdict::Inconclusive: out << fmt::format("inconclusive: {}\n", r.reason); break;
  }
}

}  // namespace

std::string fairness_text(const FairnessRun& run) {
  std::ostringstream out;
  const Schema& schema = run.problem.schema();
  const std::vector<std::string>& names = run.problem.protected_names();
  const FairnessResult& r = run.result;
  const SearchStats& st = r.stats;
  write_verdict(out, run);
  if (r.data.measured)
    out << fmt::format("data: {} of {} rows of {} ({}) change label when {} changes (each row checked exactly)\n",
                       r.data.unfair, r.data.rows, r.data.source,
                       percent(static_cast<double>(r.data.unfair) / static_cast<double>(r.data.rows)),
                       fmt::join(names, " or "));
  if (run.audit != nullptr) {
    out << "  " << run.audit->outcome.sentence() << "\n";
    out << harm_text(*run.audit, schema, run.flips_shown);
  }
  const std::string phase = r.phase.empty() ? "" : " (" + r.phase + ")";
  if (r.share.measured) {
    write_shares(out, schema, names, run.problem.protected_features(), r);
    // A witness verdict says nothing of why the shares stop short; the reason does.
    if (r.verdict == Verdict::Witness && !r.exhaustive && !r.reason.empty())
      out << fmt::format("  stopped short: {}\n", r.reason);
    out << fmt::format("  engine {}{}: {} regions, {} leaves, {} tests, {:.2f} s\n", r.engine, phase, st.regions,
                       st.leaves, st.tests, st.seconds);
  } else if (r.engine.rfind("auto", 0) == 0) {
    out << fmt::format("  engine {}{}: {} tests, {:.2f} s\n", r.engine, phase, st.tests, st.seconds);
  } else {
    out << fmt::format("  engine {}: FQ {}, tests {}, sat {}, unsat {}, unknown {}, {:.2f} s\n", r.engine, st.frontier,
                       st.tests, st.sat, st.unsat, st.unknown, st.seconds);
  }
  if (st.checked > 0)
    out << fmt::format("  --check: Z3 re-proved all {} region/pair closures of the bounds\n", st.checked);
  if (st.rejected > 0) out << fmt::format("  {} candidate witnesses failed replay and were dropped\n", st.rejected);
  return out.str();
}

nlohmann::json fairness_json(const FairnessRun& run) {
  const Model& model = run.problem.model();
  const Schema& schema = run.problem.schema();
  const FairnessResult& r = run.result;
  const SearchStats& st = r.stats;
  nlohmann::json doc = {{"verdict", to_string(r.verdict)},
                        {"engine", r.engine},
                        {"model", model.source},
                        {"schema", schema.source()},
                        {"protected", run.problem.protected_names()},
                        {"exhaustive", r.exhaustive},
                        {"vacuous", r.vacuous},
                        {"reason", r.reason},
                        {"witnesses_found", r.witnesses.size()},
                        {"witnesses_asked", r.witnesses_asked},
                        {"witnesses_note", r.witnesses_note}};
  doc["witness"] =
      r.witnesses.empty() ? nlohmann::json(nullptr) : witness_json(model, schema, r.witnesses.front(), r.data);
  doc["stats"] = {{"seconds", st.seconds}, {"concretised", st.concretised}};
  for (const SearchStatsField& f : kSearchStatsFields) doc["stats"][f.name] = st.*f.field;
  if (r.share.measured) {
    doc["certified"] = r.share.certified;
    doc["falsified"] = r.share.falsified;
    doc["undecided"] = r.share.undecided;
    doc["domain"] = {{"points", r.share.points > 0.0L && r.share.points < 18446744073709551616.0L
                                    ? nlohmann::json(static_cast<std::uint64_t>(r.share.points))
                                    : nlohmann::json(static_cast<double>(r.share.points))},
                     {"exact", r.share.exact},
                     // A whole number of points, exact below 2^64 (a double would round it past 2^53).
                     {"falsified_points",
                      r.share.exact ? nlohmann::json(static_cast<std::uint64_t>(r.share.falsified_points)) : nullptr},
                     // The shares are over the points the schema's constraints allow (all, without constraints).
                     {"constraints_applied", true}};
    if (r.share.estimate)
      doc["estimate"] = {{"falsified", r.share.estimate->share}, {"lo", r.share.estimate->lo},
                         {"hi", r.share.estimate->hi},           {"confidence", r.share.estimate->confidence},
                         {"samples", r.share.estimate->samples}, {"unfair_samples", r.share.estimate->unfair},
                         {"method", "Clopper-Pearson"}};
    if (run.quantify) {
      doc["regions"] = regions_json(schema, run.problem.protected_features(), r.regions);
      doc["falsified_by_feature"] = marginals_json(schema, r.marginals);
    }
  }
  if (r.data.measured)
    doc["data"] = {{"file", r.data.source},
                   {"rows", r.data.rows},
                   {"unfair", r.data.unfair},
                   {"share", static_cast<double>(r.data.unfair) / static_cast<double>(r.data.rows)}};
  if (r.data.measured && run.audit != nullptr) {
    const nlohmann::json harm = harm_json(*run.audit, kMaxFlipsInJson);
    for (const auto& [key, value] : harm.items()) doc["data"][key] = value;
  }
  doc["counters"] = run.counters;
  if (!r.phase.empty()) doc["phase"] = r.phase;
  return doc;
}

nlohmann::json witness_pairs_json(const FairnessRun& run, std::size_t limit) {
  const Model& model = run.problem.model();
  const Schema& schema = run.problem.schema();
  nlohmann::json out = nlohmann::json::array();
  for (const WitnessPair& w : run.result.witnesses) {
    if (out.size() >= limit) break;
    out.push_back({{"x", named_row(schema, w.raw)},
                   {"x_prime", named_row(schema, w.raw_prime)},
                   {"label", label_name(model, schema, w.label)},
                   {"label_prime", label_name(model, schema, w.label_prime)}});
  }
  return out;
}

std::string witness_csv(const FairnessRun& run) {
  const Model& model = run.problem.model();
  const Schema& schema = run.problem.schema();
  PairTable table(schema, run.problem.protected_features());
  for (const WitnessPair& w : run.result.witnesses)
    table.add(w.raw, w.raw_prime, label_name(model, schema, w.label), label_name(model, schema, w.label_prime));
  return table.text();
}

std::string regions_csv(const FairnessRun& run) {
  const Schema& schema = run.problem.schema();
  const std::vector<int>& prot = run.problem.protected_features();
  std::string out = "kind,share,falsified,undecided,points,rule";
  for (int f = 0; f < schema.size(); ++f)
    if (std::find(prot.begin(), prot.end(), f) == prot.end()) out += "," + csv_field(schema.feature(f).name);
  out += "\n";
  for (const RegionReport& g : run.result.regions) {
    const char* status = g.all_falsified ? "falsified" : g.undecided > 0.0 ? "undecided" : "partly falsified";
    out += fmt::format("{},{:.17g},{:.17g},{:.17g},{:.17g},{}", status, g.share, g.falsified, g.undecided,
                       static_cast<double>(g.points), csv_field(region_rule(schema, g, prot)));
    for (int f = 0; f < schema.size(); ++f) {
      if (std::find(prot.begin(), prot.end(), f) != prot.end()) continue;
      const std::string lo = schema.display(f, g.lo(f)), hi = schema.display(f, g.hi(f));
      out += "," + csv_field(lo == hi ? lo : fmt::format("{}..{}", lo, hi));
    }
    out += "\n";
  }
  return out;
}

}  // namespace witness
