// witness fair MODEL --schema S --protected A[,B] --engine concolic|dual: find an unfairness
// witness pair, or prove that none exists in the schema's domain.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <tuple>

#include "cli/cli.h"
#include "core/alarm.h"
#include "core/error.h"
#include "domain/dataset.h"
#include "fairness/engine.h"
#include "model/loaders.h"

namespace witness::cli {
namespace {

struct FairArgs {
  std::string model;
  std::string schema;
  std::string box;
  std::string protected_list;
  std::string engine = "auto";
  std::string seeds;
  std::string witnesses_out;
  std::string regions_out;
  std::string data;
  bool json = false;
  std::map<std::string, std::string> engine_options;  // engine_options() flags as given
  std::map<std::string, std::string> env_options;
};

std::vector<double> to_vector(const Eigen::VectorXd& v) { return {v.data(), v.data() + v.size()}; }

nlohmann::json witness_json(const Model& model, const Schema& schema, const WitnessPair& w) {
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
          {"float32_within_rounding", w.float32_within_rounding}};
}

// One row per pair: x's raw values, then the protected values of x' (columns "<name>'"), then both labels.
void write_witnesses(const std::string& path, const Model& model, const Schema& schema, const std::vector<int>& prot,
                     const std::vector<WitnessPair>& pairs) {
  PairCsv out(path, schema, prot);
  for (const WitnessPair& w : pairs)
    out.write(w.raw, w.raw_prime, label_name(model, schema, w.label), label_name(model, schema, w.label_prime));
  out.close();
}

// A share of the domain in percent, with enough digits that small shares stay visible.
std::string percent(double share) {
  if (share == 0.0) return "0%";
  if (share == 1.0) return "100%";
  const double p = 100.0 * share;
  if (p < 0.01) return fmt::format("{:.2g}%", p);
  std::string text = fmt::format("{:.4g}", p);
  // A share below 1 never reads as 100% (99.99956% is not everything).
  for (int digits = 3; text == "100" && digits < 17; ++digits) text = fmt::format("{:.{}f}", p, digits);
  return text + "%";
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
void print_marginals(const Schema& schema, const FairnessResult& r) {
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
                    fmt::format("{} {}..{}", feat.name, schema.display_quoted(m.feature, m.lo[i]),
                                schema.display_quoted(m.feature, m.hi[j]))};
          }
          break;
        }
      }
    }
    if (best.domain <= 0.7) found.push_back(best);
  }
  std::sort(found.begin(), found.end(), [](const Where& a, const Where& b) { return a.domain < b.domain; });
  if (found.empty()) return;
  std::cout << "  for whom (values holding most of the falsified individuals; their share of the domain):\n";
  for (std::size_t i = 0; i < found.size() && i < 3; ++i)
    std::cout << fmt::format("    {}: {} of them ({} of the domain)\n", found[i].text, percent(found[i].falsified),
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

void print_shares(const Schema& schema, const std::vector<std::string>& names, const std::vector<int>& prot,
                  const FairnessResult& r) {
  const DomainShare& d = r.share;
  std::cout << fmt::format("  domain: certified {}, falsified {}, undecided {}{}\n", percent(d.certified),
                           percent(d.falsified), percent(d.undecided),
                           d.points > 0.0L ? fmt::format(" of {:.6g} points", static_cast<double>(d.points)) : "");
  if (d.exact)
    std::cout << fmt::format("  exactly {:.0f} of the {:.0f} points change label when {} changes\n",
                             static_cast<double>(d.falsified_points), static_cast<double>(d.points),
                             fmt::join(names, " or "));
  print_marginals(schema, r);
  std::size_t shown = 0, falsified = 0;
  for (const RegionReport& g : r.regions) falsified += g.falsified > 0.0 ? 1 : 0;
  for (const RegionReport& g : r.regions) {
    if (g.falsified <= 0.0 || shown == 5) continue;
    if (shown++ == 0)
      std::cout << fmt::format("  falsified regions, largest first ({} of {}{}):\n",
                               std::min<std::size_t>(5, falsified), falsified,
                               falsified > 5 ? "; all with --regions-out" : "");
    const std::string who = g.all_falsified ? "every point"
                            : g.undecided > 0.0
                                ? fmt::format("at least {} of its points ({} undecided)",
                                              percent(g.falsified / g.share), percent(g.undecided / g.share))
                                : fmt::format("{} of its points", percent(g.falsified / g.share));
    std::cout << fmt::format("    {} of the domain, {}: {}\n", percent(g.falsified), who, region_rule(schema, g, prot));
  }
}

// The regions as CSV: what is known of each box, its rule, and its range per feature.
void write_regions(const std::string& path, const Schema& schema, const std::vector<int>& prot,
                   const std::vector<RegionReport>& regions) {
  std::ofstream out(path);
  if (!out) throw InputError(path, "", "cannot open for writing");
  out << "kind,share,falsified,undecided,points,rule";
  for (int f = 0; f < schema.size(); ++f)
    if (std::find(prot.begin(), prot.end(), f) == prot.end()) out << "," << csv_field(schema.feature(f).name);
  out << "\n";
  for (const RegionReport& g : regions) {
    const char* status = g.all_falsified ? "falsified" : g.undecided > 0.0 ? "undecided" : "partly falsified";
    out << fmt::format("{},{:.17g},{:.17g},{:.17g},{:.17g},{}", status, g.share, g.falsified, g.undecided,
                       static_cast<double>(g.points), csv_field(region_rule(schema, g, prot)));
    for (int f = 0; f < schema.size(); ++f) {
      if (std::find(prot.begin(), prot.end(), f) != prot.end()) continue;
      const std::string lo = schema.display(f, g.lo(f)), hi = schema.display(f, g.hi(f));
      out << "," << csv_field(lo == hi ? lo : fmt::format("{}..{}", lo, hi));
    }
    out << "\n";
  }
  out.close();
  if (!out) throw InputError(path, "", "writing failed");
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

void print_text(const Model& model, const Schema& schema, const std::vector<std::string>& names,
                const std::vector<int>& prot, const FairnessResult& r) {
  const SearchStats& st = r.stats;
  switch (r.verdict) {
    case Verdict::Witness: {
      const WitnessPair& w = r.witnesses.front();
      // Name only the protected features that differ between x and x'.
      std::vector<std::string> differ;
      std::string changed;
      for (int f : prot) {
        if (w.raw[f] == w.raw_prime[f]) continue;
        differ.push_back(schema.feature(f).name);
        changed += fmt::format("{}{}={}", changed.empty() ? "" : ", ", schema.feature(f).name,
                               schema.display_quoted(f, w.raw_prime[f]));
      }
      std::cout << fmt::format("witness: {} treats these two inputs differently; they differ only in {}\n", model.name,
                               fmt::join(differ, ", "));
      std::cout << fmt::format("  x : {}\n      -> {}\n", schema.display_row(w.raw),
                               label_name(model, schema, w.label));
      std::cout << fmt::format("  x': {} (the rest as x)\n      -> {}\n", changed,
                               label_name(model, schema, w.label_prime));
      if (w.float32_within_rounding) {
        std::cout << "  replayed on the original model in double; in float32 the logits are within rounding error of "
                     "the threshold, so float32 labels cannot tell\n";
      } else if (w.float32_witness) {
        std::cout << "  replayed on the original model in double and float32\n";
      } else {
        std::cout << "  replayed on the original model in double (in float32 both get the same label)\n";
      }
      break;
    }
    case Verdict::Verified:
      std::cout << fmt::format("verified: {} has no unfairness witness for {} in the domain of {}\n", model.name,
                               fmt::join(names, ", "), schema.source());
      if (r.share.measured) {
        std::cout << fmt::format(
            "  every region was closed by sound bounds or decided exactly ({} regions, {} leaves)\n", st.regions,
            st.leaves);
      } else if (r.engine == "smt") {
        std::cout << "  one exact Z3 query of the dual model over the whole domain is unsatisfiable\n";
      } else {
        std::cout << fmt::format("  every path of the dual model was explored (exhaustive: {} paths, {} infeasible)\n",
                                 st.paths, st.unsat);
      }
      break;
    case Verdict::Inconclusive: std::cout << fmt::format("inconclusive: {}\n", r.reason); break;
  }
  if (r.data.measured)
    std::cout << fmt::format("data: {} of {} rows of {} ({}) change label when {} changes (each row checked exactly)\n",
                             r.data.unfair, r.data.rows, r.data.source,
                             percent(static_cast<double>(r.data.unfair) / static_cast<double>(r.data.rows)),
                             fmt::join(names, " or "));
  if (r.share.measured) {
    print_shares(schema, names, prot, r);
    std::cout << fmt::format("  engine {}{}: {} regions, {} leaves, {} tests, {:.2f} s\n", r.engine,
                             r.phase.empty() ? "" : " (" + r.phase + ")", st.regions, st.leaves, st.tests, st.seconds);
  } else if (r.engine.rfind("auto", 0) == 0) {
    std::cout << fmt::format("  engine {}{}: {} tests, {:.2f} s\n", r.engine,
                             r.phase.empty() ? "" : " (" + r.phase + ")", st.tests, st.seconds);
  } else {
    std::cout << fmt::format("  engine {}: FQ {}, tests {}, sat {}, unsat {}, unknown {}, {:.2f} s\n", r.engine,
                             st.frontier, st.tests, st.sat, st.unsat, st.unknown, st.seconds);
  }
  if (st.checked > 0)
    std::cout << fmt::format("  --check: Z3 re-proved all {} region/pair closures of the bounds\n", st.checked);
  if (st.rejected > 0)
    std::cout << fmt::format("  {} candidate witnesses failed replay and were dropped\n", st.rejected);
}

int run_fair(const FairArgs& args) {
  Env env;
  apply_env_options(env, args.env_options);
  env.start();
  const Model model = load_model(args.model);
  const Schema schema = load_schema_for(model, args.schema, args.box);
  const FairnessProblem problem(
      model, schema, args.protected_list.empty() ? std::vector<std::string>() : split_list(args.protected_list));
  const std::vector<std::string>& names = problem.protected_names();
  const std::vector<int>& prot = problem.protected_features();
  (void)fairness_engine(args.engine);  // an unknown engine before any work

  EngineSettings settings;
  apply_setting_flags(engine_options(), args.engine_options, settings);
  Dataset data;
  if (!args.seeds.empty()) {
    data = load_csv(args.seeds, schema);
    if (data.raw.cols() == 0) throw InputError(args.seeds, "", "no data rows");
    settings.seeds = &data.raw;
  }
  const double limit = env.options.get_real("time-limit");
  // The latest shares the complete engine reported (sound when reported), for the answer below.
  std::atomic<double> last_certified{0.0}, last_falsified{0.0};
  const bool measures = fairness_engine(args.engine).measures_domain;
  const bool uses_z3 = engine_uses_z3(args.engine, model);
  // The last resort behind --time-limit: Z3 4.8.12 ignores its timeout and interrupts inside some
  // integer checks, so if the engine has not returned well after the limit, print an inconclusive
  // answer (with the shares known so far) and end the process (exit 20) instead of overrunning.
  auto late_answer = [&]() {
    const std::string why = fmt::format("the engine did not stop within {:.0f} s of the {} s time limit{}",
                                        limit * 0.1 + 2.0, limit, uses_z3 ? " (a Z3 call ignored its timeout)" : "");
    const double c = last_certified.load(), f = last_falsified.load();
    if (!args.json) {
      std::string text = "inconclusive: " + why + "\n";
      if (measures)
        text += fmt::format("  domain: certified {}, falsified {}, undecided {} (the last shares reported)\n",
                            percent(c), percent(f), percent(std::max(0.0, 1.0 - c - f)));
      return text;
    }
    nlohmann::json late = {{"verdict", "inconclusive"},
                           {"engine", args.engine},
                           {"model", model.source},
                           {"schema", schema.source()},
                           {"protected", names},
                           {"exhaustive", false},
                           {"reason", why},
                           {"witnesses_found", 0},
                           {"witness", nullptr},
                           {"stats", {{"seconds", limit}}}};
    if (measures) {
      late["certified"] = c;
      late["falsified"] = f;
      late["undecided"] = std::max(0.0, 1.0 - c - f);
    }
    return late.dump(2) + "\n";
  };
  const Alarm deadline(limit > 0 ? std::optional(std::chrono::steady_clock::now() +
                                                 std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                     std::chrono::duration<double>(limit * 1.1 + 2.0)))
                                 : std::nullopt,
                       [&late_answer] {
                         const std::string answer = late_answer();
                         std::fputs(answer.c_str(), stdout);
                         std::fflush(stdout);
                         std::_Exit(20);
                       });
  ProgressLine progress;
  double last_log = 0.0;
  settings.progress = [&](const CompleteProgress& p) {
    last_certified = p.certified;
    last_falsified = p.falsified;
    const std::string line = fmt::format("decided {} (certified {}, falsified {}), {} leaves, {:.0f} leaves/s",
                                         percent(p.certified + p.falsified), percent(p.certified), percent(p.falsified),
                                         p.leaves, p.seconds > 0 ? static_cast<double>(p.leaves) / p.seconds : 0.0);
    if (env.options.get_int("verbose") >= 1) {  // --verbose: a line a second, terminal or not
      if (p.seconds - last_log >= 1.0) {
        last_log = p.seconds;
        env.log(1, "{:.1f} s: {}", p.seconds, line);
      }
    } else {
      progress.show(line);
    }
  };
  Dataset rows;
  if (!args.data.empty()) {
    rows = load_csv(args.data, schema);
    if (rows.raw.cols() == 0) throw InputError(args.data, "", "no data rows");
  }
  env.log(1, "fair: {} ({} inputs), engine {}, protected {}, time limit {} s", model.name, model.input_width(),
          args.engine, fmt::join(names, ","), limit);
  FairnessResult r = run_fairness_engine(args.engine, problem, settings, env);
  progress.clear();
  if (!args.data.empty()) r.data = measure_rows(model, schema, prot, rows.raw, args.data);
  if (!args.witnesses_out.empty()) write_witnesses(args.witnesses_out, model, schema, prot, r.witnesses);
  if (!args.regions_out.empty()) write_regions(args.regions_out, schema, prot, r.regions);
  print_stats(env);

  if (args.json) {
    const SearchStats& st = r.stats;
    nlohmann::json doc = {{"verdict", to_string(r.verdict)},
                          {"engine", r.engine},
                          {"model", model.source},
                          {"schema", schema.source()},
                          {"protected", names},
                          {"exhaustive", r.exhaustive},
                          {"reason", r.reason},
                          {"witnesses_found", r.witnesses.size()}};
    doc["witness"] = r.witnesses.empty() ? nlohmann::json(nullptr) : witness_json(model, schema, r.witnesses.front());
    doc["stats"] = {{"frontier", st.frontier},
                    {"tests", st.tests},
                    {"sat", st.sat},
                    {"unsat", st.unsat},
                    {"unknown", st.unknown},
                    {"guessed", st.guessed},
                    {"refuted", st.refuted},
                    {"seconds", st.seconds},
                    {"queued", st.queued},
                    {"paths", st.paths},
                    {"divergences", st.divergences},
                    {"rejected", st.rejected},
                    {"seeds", st.seeds},
                    {"seeds_exhausted", st.seeds_exhausted},
                    {"concretised", st.concretised},
                    {"regions", st.regions},
                    {"leaves", st.leaves},
                    {"checked", st.checked}};
    if (r.share.measured) {
      doc["certified"] = r.share.certified;
      doc["falsified"] = r.share.falsified;
      doc["undecided"] = r.share.undecided;
      doc["domain"] = {{"points", static_cast<double>(r.share.points)},
                       {"exact", r.share.exact},
                       {"falsified_points",
                        r.share.exact ? nlohmann::json(static_cast<double>(r.share.falsified_points)) : nullptr}};
      if (settings.quantify) {
        doc["regions"] = regions_json(schema, prot, r.regions);
        doc["falsified_by_feature"] = marginals_json(schema, r.marginals);
      }
    }
    if (r.data.measured)
      doc["data"] = {{"file", r.data.source},
                     {"rows", r.data.rows},
                     {"unfair", r.data.unfair},
                     {"share", static_cast<double>(r.data.unfair) / static_cast<double>(r.data.rows)}};
    doc["counters"] = env.stats.all();
    if (!r.phase.empty()) doc["phase"] = r.phase;
    print_json(doc);
  } else {
    print_text(model, schema, names, prot, r);
  }
  return exit_code(r.verdict);
}

// The --engine help, from the engine table.
std::string engine_help() {
  std::string help = "the engine, by name [default auto]:";
  for (const EngineInfo& e : fairness_engines()) help += fmt::format(" {}: {};", e.name, e.summary);
  help.back() = '.';
  return help;
}

}  // namespace

void add_fair_command(CLI::App& app, int& status) {
  auto args = std::make_shared<FairArgs>();
  CLI::App* cmd = app.add_subcommand(
      "fair",
      "Find an unfairness witness (two inputs that differ only in protected attributes and get different "
      "labels), or prove that none exists. Exit 0 verified, 10 witness, 20 inconclusive");
  cmd->add_option("model", args->model, "model file (.json mlp-json-v1, Keras .h5, .onnx)")->required();
  cmd->add_option("--schema", args->schema, "input schema (TOML)")->required();
  cmd->add_option("--box", args->box, "use a named alternative box of the schema (e.g. fairify)");
  cmd->add_option("--protected", args->protected_list, "protected attributes, comma-separated (default: the schema's)");
  cmd->add_option("--engine", args->engine, engine_help());
  cmd->add_option("--seeds", args->seeds, "CSV of seed rows (concolic: every row; dual: the first is the start)");
  cmd->add_option("--witnesses-out", args->witnesses_out, "write the witness pairs as CSV (raw, named values)");
  cmd->add_option("--regions-out", args->regions_out,
                  "--quantify: write the falsified and undecided regions as CSV (rules over the features, shares)");
  cmd->add_option("--data", args->data,
                  "also check every row of this CSV against every protected value (exact) and report the share of "
                  "rows whose label changes");
  add_setting_flags(*cmd, engine_options(), args->engine_options);
  cmd->add_flag("--json", args->json, "print one JSON document on stdout");
  add_env_options(*cmd, args->env_options, {"seed", "time-limit", "threads", "verbose", "stats"});
  cmd->callback([args, &status] { status = run_fair(*args); });
}

}  // namespace witness::cli
