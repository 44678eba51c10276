#include "fairness/concolic_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>

#include "core/error.h"
#include "domain/kmeans.h"
#include "domain/sampler.h"
#include "fairness/dual_model.h"
#include "solver/solver.h"
#include "symbolic/concolic.h"
#include "symbolic/encoding.h"

namespace witness {
namespace {

// How one path-tree exploration ended.
struct Exploration {
  bool stopped = false;  // the run callback asked to stop (a witness, or the quota reached)
  bool expired = false;  // the global time limit
  bool exhausted = false;
  std::int64_t rejected = 0;
};

// Seconds left before the global deadline (infinity without one).
// A run of the model at x. Returns whether the exploration should stop; sets `rejected` when a
// candidate witness failed replay.
using RunCallback = std::function<bool(const Eigen::VectorXd& x, const ConcolicRun& run, bool& rejected)>;

// Algorithm 1's inner loop: the path tree T and frontier queue Q explored from one start point.
// `input_terms` maps model input indices to solver terms; `solution` reads the next input vector
// out of a Sat model.
Exploration explore(ConcolicEvaluator& ce, Solver& solver, const std::vector<Term>& input_terms,
                    const std::vector<bool>& symbolic, const Eigen::VectorXd& x0,
                    const std::function<Eigen::VectorXd()>& solution, const ConcolicSearchOptions& options, Env& env,
                    SearchStats& stats, bool first, const RunCallback& on_run) {
  Exploration out;
  PathTree tree;
  FrontierQueue queue(options.order);
  bool concretised = false;
  auto visit = [&](const Eigen::VectorXd& x, const FrontierItem* from) {
    const ConcolicRun run = ce.run(x, symbolic);
    ++stats.tests;
    concretised = concretised || run.concretised;
    bool rejected = false;
    const bool stop = on_run(x, run, rejected);
    if (rejected) ++out.rejected;
    std::vector<FrontierItem> items = tree.insert(run.path, from);
    if (from == nullptr && first) stats.frontier = static_cast<std::int64_t>(items.size());
    for (auto& it : items) queue.push(std::move(it));
    return stop;
  };

  out.stopped = visit(x0, nullptr);
  // Items whose call hit the per-query limit wait for the next round, which has four times the
  // limit: easy paths first, and a hard query cannot starve the rest.
  double query_limit = options.query_time_limit;
  std::vector<FrontierItem> retry;
  std::int64_t open_unknown = 0;  // items whose latest answer is Unknown
  while (!out.stopped) {
    if (queue.empty()) {
      if (retry.empty()) break;
      query_limit *= 4;
      for (auto& it : retry) queue.push(std::move(it));
      retry.clear();
      continue;
    }
    const double left = env.seconds_left();
    if (left <= 0) {
      out.expired = true;
      break;
    }
    FrontierItem item = queue.pop();
    if (item.attempts > 0) --open_unknown;
    solver.push();
    for (const Constraint& c : item.constraints) solver.assert_(substitute(c, input_terms));
    const bool query_bound = query_limit > 0 && query_limit < left;
    const double limit = query_bound ? query_limit : left;
    const CheckResult r = solver.check(std::isinf(limit) ? 0.0 : std::max(limit, 1e-3));
    tree.mark(item, r);
    if (r == CheckResult::Sat) {
      const Eigen::VectorXd x = solution();
      solver.pop();
      out.stopped = visit(x, &item);
    } else {
      solver.pop();
      if (r == CheckResult::Unknown) {
        ++open_unknown;
        ++item.attempts;
        if (query_bound) retry.push_back(std::move(item));
      }
    }
  }
  stats.guessed += solver.stats().guessed;
  stats.refuted += solver.stats().refuted;
  stats.sat += tree.sat();
  stats.unsat += tree.unsat();
  stats.unknown += tree.unknown();
  stats.queued += tree.queued();
  stats.paths += tree.explored_paths();
  stats.divergences += tree.divergences();
  stats.rejected += out.rejected;
  stats.concretised = stats.concretised || concretised;
  out.exhausted = !out.stopped && !out.expired && queue.empty() && retry.empty() && open_unknown == 0 &&
                  tree.divergences() == 0 && !concretised && out.rejected == 0;
  return out;
}

void check_options(const Model& model, const Schema& schema, const ConcolicSearchOptions& o) {
  // The protected features are a FairnessProblem's: checked there.
  if (schema.model_width() != model.input_width()) {
    throw InputError(schema.source(), "",
                     fmt::format("the schema describes {} model inputs but {} has {}", schema.model_width(),
                                 model.source, model.input_width()));
  }
  if (o.max_witnesses < 1) throw InputError("--max-witnesses: expected a positive count");
  if (o.seeds != nullptr && o.seeds->rows() != schema.size()) {
    throw InternalError("concolic search: seed rows do not match the schema");
  }
}

// The order in which seed columns are taken, and how many.
std::vector<int> seed_order(const Eigen::MatrixXd& seeds, const ConcolicSearchOptions& o, std::uint64_t seed) {
  std::vector<int> order;
  if (o.seed_order == SeedOrder::KMeans) {
    order = round_robin(kmeans(seeds, o.kmeans_k, seed));
  } else {
    order.resize(static_cast<std::size_t>(seeds.cols()));
    for (std::size_t j = 0; j < order.size(); ++j) order[j] = static_cast<int>(j);
  }
  if (o.max_seeds > 0 && static_cast<long long>(order.size()) > o.max_seeds) {
    order.resize(static_cast<std::size_t>(o.max_seeds));
  }
  return order;
}

void finish(FairnessResult& r, const Env& env) {
  r.stats.seconds = env.elapsed_seconds();
  if (!r.witnesses.empty()) {
    r.verdict = Verdict::Witness;
    r.reason.clear();
  }
}

}  // namespace

SeedOrder parse_seed_order(const std::string& name) { return kSeedOrders.parse(name, "--seed-order"); }

FairnessResult concolic_search(const FairnessProblem& problem, const ConcolicSearchOptions& options, Env& env) {
  const Model& model = problem.model();
  const Schema& schema = problem.schema();
  const std::vector<int>& prot_features = problem.protected_features();
  check_options(model, schema, options);
  FairnessResult result;
  result.engine = "concolic";
  Eigen::MatrixXd random_seeds;
  const Eigen::MatrixXd* seeds = options.seeds;
  if (seeds == nullptr) {
    Sampler sampler(schema, env.seed());
    random_seeds = sampler.points(options.max_seeds > 0 ? options.max_seeds : 1000);
    seeds = &random_seeds;
  }
  const std::vector<int> order = seed_order(*seeds, options, env.seed());
  const std::vector<bool> sym = schema.input_mask(prot_features);
  ConcolicEvaluator ce(model);
  bool expired = false;
  std::int64_t skipped = 0;
  for (int j : order) {
    const Eigen::VectorXd raw = seeds->col(j);
    if (!schema.contains(raw)) {  // e.g. a data row outside a --box
      ++skipped;
      continue;
    }
    const Eigen::VectorXd x0 = schema.to_model(raw);
    if (const ConcolicRun first = ce.run(x0, sym); first.path.empty()) {
      // No branch depends on the protected inputs here: nothing to solve (and no solver to make,
      // which would cost more than the run on small models).
      ++result.stats.tests;
      ++result.stats.paths;  // the one path, with no branch
      ++result.stats.seeds;
      result.stats.concretised = result.stats.concretised || first.concretised;
      if (!first.concretised) ++result.stats.seeds_exhausted;
      if (env.seconds_left() <= 0) {
        expired = true;
        break;
      }
      continue;
    }
    auto solver = make_solver("lp+z3");
    const DomainEncoding enc = encode_domain(*solver, schema, sym, x0);
    int label0 = -1;
    const RunCallback on_run = [&](const Eigen::VectorXd& x, const ConcolicRun& run, bool& rejected) {
      if (label0 < 0) {
        label0 = run.label;
        return false;
      }
      if (run.label == label0) return false;
      std::optional<WitnessPair> w = replay_witness(model, schema, prot_features, x0, x);
      if (!w) {
        rejected = true;
        return false;
      }
      result.witnesses.push_back(std::move(*w));
      return true;  // one witness per seed
    };
    const Exploration e = explore(
        ce, *solver, enc.model_inputs, sym, x0, [&] { return model_input_from_solver(*solver, enc, x0); }, options, env,
        result.stats, result.stats.seeds == 0, on_run);
    ++result.stats.seeds;
    if (e.exhausted) ++result.stats.seeds_exhausted;
    env.log(2, "seed {}: {}", j, e.stopped ? "witness" : e.exhausted ? "not discriminatory" : "not exhausted");
    if (static_cast<int>(result.witnesses.size()) >= options.max_witnesses) break;
    if (e.expired || env.seconds_left() <= 0) {
      expired = true;
      break;
    }
  }
  env.stats.set("concolic.seeds_skipped", static_cast<double>(skipped));
  // Single-instance search covers its seeds only: it never proves the whole domain fair.
  result.reason = expired ? fmt::format("{} reached", env.stop_reason())
                          : fmt::format(
                                "no witness from {} seeds ({} explored exhaustively); single-instance search "
                                "cannot prove the domain fair (use --engine dual)",
                                result.stats.seeds, result.stats.seeds_exhausted);
  finish(result, env);
  return result;
}

FairnessResult dual_search(const FairnessProblem& problem, const ConcolicSearchOptions& options, Env& env) {
  const Model& model = problem.model();
  const Schema& schema = problem.schema();
  const std::vector<int>& prot_features = problem.protected_features();
  check_options(model, schema, options);
  FairnessResult result;
  result.engine = "dual";
  const DualModel dual = make_dual_model(model, schema, prot_features);

  // The start point: the first in-domain seed row, else a random point; p' another valid value.
  Sampler sampler(schema, env.seed());
  Eigen::VectorXd raw = sampler.point();
  if (options.seeds != nullptr) {
    for (Eigen::Index j = 0; j < options.seeds->cols(); ++j) {
      if (schema.contains(options.seeds->col(j))) {
        raw = options.seeds->col(j);
        break;
      }
    }
  }
  Eigen::VectorXd raw_prime = raw;
  sampler.change_protected(raw_prime, prot_features);
  const Eigen::VectorXd x0 = schema.to_model(raw);
  const Eigen::VectorXd x0_prime = schema.to_model(raw_prime);
  const auto width = static_cast<Eigen::Index>(dual.width_x);
  const auto n_prot = static_cast<Eigen::Index>(dual.protected_inputs.size());
  auto dual_point = [&](const Eigen::VectorXd& x, const Eigen::VectorXd& x_prime) {
    Eigen::VectorXd d(width + n_prot);
    d.head(width) = x;
    for (Eigen::Index k = 0; k < n_prot; ++k)
      d[width + k] = x_prime[dual.protected_inputs[static_cast<std::size_t>(k)]];
    return d;
  };
  auto prime_of = [&](const Eigen::VectorXd& d) {
    Eigen::VectorXd xp = d.head(width);
    for (Eigen::Index k = 0; k < n_prot; ++k) xp[dual.protected_inputs[static_cast<std::size_t>(k)]] = d[width + k];
    return xp;
  };

  // (p, n) and p' as solver terms, p != p' as a disjunction over the protected features.
  auto solver = make_solver("lp+z3");
  const std::vector<bool> all(static_cast<std::size_t>(schema.model_width()), true);
  const std::vector<bool> prot = schema.input_mask(prot_features);
  const DomainEncoding enc = encode_domain(*solver, schema, all, x0);
  const DomainEncoding enc_prime = encode_domain(*solver, schema, prot, x0_prime, &enc);
  std::vector<Term> terms = enc.model_inputs;
  for (int i : dual.protected_inputs) terms.push_back(enc_prime.model_inputs[static_cast<std::size_t>(i)]);
  std::vector<Constraint> differ;
  differ.reserve(prot_features.size());
  for (int f : prot_features) {
    differ.push_back(ne(enc.raw_terms[static_cast<std::size_t>(f)], enc_prime.raw_terms[static_cast<std::size_t>(f)]));
  }
  solver->assert_(disjunction(differ));

  // Each path ends with copy 1's and then copy 2's decision predicate.
  DecisionRule r1 = model.rule;
  DecisionRule r2 = model.rule;
  r1.node = dual.copy1_decision_node;
  r2.node = dual.copy2_decision_node;
  ConcolicEvaluator ce(dual.model, {r1, r2});
  const std::vector<bool> sym(static_cast<std::size_t>(dual.model.input_width()), true);
  const RunCallback on_run = [&](const Eigen::VectorXd& d, const ConcolicRun& run, bool& rejected) {
    if (run.labels[0] == run.labels[1]) return false;
    std::optional<WitnessPair> w =
        replay_witness(model, schema, prot_features, Eigen::VectorXd(d.head(width)), prime_of(d));
    if (!w) {
      rejected = true;
      return false;
    }
    result.witnesses.push_back(std::move(*w));
    return static_cast<int>(result.witnesses.size()) >= options.max_witnesses;
  };
  auto solution = [&]() -> Eigen::VectorXd {
    return dual_point(model_input_from_solver(*solver, enc, x0), model_input_from_solver(*solver, enc_prime, x0_prime));
  };
  const Exploration e =
      explore(ce, *solver, terms, sym, dual_point(x0, x0_prime), solution, options, env, result.stats, true, on_run);
  result.stats.seeds = 1;
  result.exhaustive = e.exhausted;  // with a quota above one, also after witnesses were found
  if (result.witnesses.empty()) {
    if (e.exhausted) {
      result.verdict = Verdict::Verified;
    } else if (e.expired) {
      result.reason = fmt::format("{} reached before the path tree was exhausted", env.stop_reason());
    } else if (result.stats.concretised) {
      result.reason = "a non-linear operation was concretised, so the paths do not cover the domain";
    } else if (result.stats.unknown > 0) {
      result.reason = fmt::format("{} solver calls gave up", result.stats.unknown);
    } else if (result.stats.divergences > 0) {
      result.reason = fmt::format("{} solutions left the path they were solved for (rounding or argmax decisions)",
                                  result.stats.divergences);
    } else if (result.stats.rejected > 0) {
      result.reason = fmt::format("{} candidate witnesses failed replay in double", result.stats.rejected);
    }
  }
  finish(result, env);
  return result;
}

}  // namespace witness
