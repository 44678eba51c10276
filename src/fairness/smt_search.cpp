#include "fairness/smt_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string>

#include "core/error.h"
#include "solver/rational.h"
#include "solver/term.h"
#include "symbolic/encoding.h"
#include "symbolic/network_encoding.h"

namespace witness {
namespace {

void check_arguments(const Model& model, const Schema& schema, const std::vector<int>& prot, const char* what) {
  if (schema.model_width() != model.input_width()) {
    throw InputError(schema.source(), "",
                     fmt::format("the schema describes {} model inputs but {} has {}", schema.model_width(),
                                 model.source, model.input_width()));
  }
  if (prot.empty()) throw InputError(schema.source(), "", "no protected attribute given");
  std::set<int> seen;
  for (int f : prot) {
    if (f < 0 || f >= schema.size()) throw InternalError(fmt::format("{}: protected feature index out of range", what));
    if (!seen.insert(f).second) throw InternalError(fmt::format("{}: protected feature {} given twice", what, f));
  }
}

// Both copies of the dual model over one solver: x = (p, n) is every model input, x' shares x's
// non-protected inputs and has its own variables for the protected ones (in enc_prime).
struct DualEncoding {
  DomainEncoding enc;
  DomainEncoding enc_prime;  // only the protected features are symbolic
  Constraint labels_differ;  // label(x) != label(x')
};

DualEncoding encode_dual(Solver& solver, const Model& model, const Schema& schema, const std::vector<int>& prot) {
  const auto width = static_cast<std::size_t>(schema.model_width());
  const Eigen::VectorXd zeros = Eigen::VectorXd::Zero(schema.model_width());  // every entry is replaced
  const std::vector<bool> is_prot = schema.input_mask(prot);
  DualEncoding d;
  d.enc = encode_domain(solver, schema, std::vector<bool>(width, true), zeros);
  d.enc_prime = encode_domain(solver, schema, is_prot, zeros, &d.enc);
  std::vector<Term> x_prime = d.enc.model_inputs;
  for (std::size_t i = 0; i < width; ++i) {
    if (is_prot[i]) x_prime[i] = d.enc_prime.model_inputs[i];
  }
  const int n_labels = label_count(model);  // Direct rules: UnsupportedError
  const std::vector<Term> z = encode_node(model, model.rule.node, d.enc.model_inputs);
  const std::vector<Term> z_prime = encode_node(model, model.rule.node, x_prime);
  std::vector<Constraint> cases;
  cases.reserve(static_cast<std::size_t>(n_labels));
  for (int k = 0; k < n_labels; ++k) {
    cases.push_back(conjunction({label_is(model, z, k), negation(label_is(model, z_prime, k))}));
  }
  d.labels_differ = disjunction(cases);
  return d;
}

// Seconds left before env's deadline (infinity without one).
void finish(FairnessResult& r, const Solver& solver, Env& env) {
  const SolverStats& s = solver.stats();
  r.stats.sat = s.sat;
  r.stats.unsat = s.unsat;
  r.stats.unknown = s.unknown;
  r.stats.guessed = s.guessed;
  r.stats.refuted = s.refuted;
  r.stats.seconds = env.elapsed_seconds();
  env.stats.add("smt.check_seconds", s.seconds);
}

}  // namespace

FairnessResult smt_search(const FairnessProblem& problem, Env& env, int max_witnesses,
                          const std::vector<WitnessPair>& known) {
  const Model& model = problem.model();
  const Schema& schema = problem.schema();
  const std::vector<int>& protected_features = problem.protected_features();
  check_arguments(model, schema, protected_features, "smt_search");
  FairnessResult result;
  result.engine = "smt";
  result.witnesses_asked = std::max(1, max_witnesses);
  const auto start = std::chrono::steady_clock::now();
  auto solver = make_solver("z3");
  const DualEncoding d = encode_dual(*solver, model, schema, protected_features);
  std::vector<Constraint> differ;
  for (int f : protected_features) {
    const auto uf = static_cast<std::size_t>(f);
    differ.push_back(ne(d.enc.raw_terms[uf], d.enc_prime.raw_terms[uf]));
  }
  solver->assert_(disjunction(differ));
  solver->assert_(d.labels_differ);
  // Excludes the point x: some feature takes another value.
  auto exclude = [&](const Eigen::VectorXd& raw) {
    std::vector<Constraint> other;
    other.reserve(static_cast<std::size_t>(schema.size()));
    for (int f = 0; f < schema.size(); ++f)
      other.push_back(ne(d.enc.raw_terms[static_cast<std::size_t>(f)], Term(Rational::from_double(raw(f)))));
    solver->assert_(disjunction(other));
  };
  for (const WitnessPair& w : known) exclude(w.raw);
  env.stats.add("smt.encode_seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());

  while (static_cast<int>(result.witnesses.size()) < result.witnesses_asked) {
    const double left = env.seconds_left();
    if (left <= 0) {
      result.reason = fmt::format("{} reached before the query was solved", env.stop_reason());
      result.witnesses_note = fmt::format("the {}", env.stop_reason());
      break;
    }
    const CheckResult r = solver->check(std::isinf(left) ? 0.0 : std::max(left, 1e-3));
    env.log(2, "smt: {}", to_string(r));
    if (r == CheckResult::Unsat) {
      if (result.witnesses.empty() && known.empty() && result.stats.rejected == 0) {
        result.verdict = Verdict::Verified;
        result.exhaustive = true;
      } else {
        result.witnesses_note = "these are all the unfair points (the solver proved there are no more)";
      }
      break;
    }
    if (r == CheckResult::Unknown) {
      const std::string why = solver->reason_unknown();
      result.reason = std::isinf(left) ? fmt::format("the solver gave up ({})", why.empty() ? "no reason given" : why)
                                       : "the solver gave up within the time limit";
      result.witnesses_note = result.reason;
      break;
    }
    const Eigen::VectorXd x = model_input_from_solver(*solver, d.enc, Eigen::VectorXd::Zero(schema.model_width()));
    const Eigen::VectorXd x_prime = model_input_from_solver(*solver, d.enc_prime, x);  // n from x
    ++result.stats.tests;
    exclude(schema.from_model(x));
    std::optional<WitnessPair> w = replay_witness(model, schema, protected_features, x, x_prime);
    if (w) {
      result.verdict = Verdict::Witness;
      result.witnesses.push_back(std::move(*w));
    } else if (++result.stats.rejected >= 16 || result.witnesses.empty()) {
      // Points whose labels differ only in exact arithmetic; on real features there may be no end of them.
      if (result.witnesses.empty())
        result.reason =
            "the solver's witness failed replay in double or float32 (the labels differ only in exact arithmetic)";
      else
        result.witnesses_note = "further solver witnesses failed replay in double or float32";
      break;
    }
  }
  if (result.verdict == Verdict::Witness) result.reason.clear();
  finish(result, *solver, env);
  return result;
}

CheckResult check_region(const Model& model, const Schema& schema, const std::vector<int>& protected_features,
                         const Eigen::VectorXd& raw_lo, const Eigen::VectorXd& raw_hi, const Eigen::VectorXd& p_raw,
                         const Eigen::VectorXd& p_prime_raw, double seconds) {
  check_arguments(model, schema, protected_features, "check_region");
  const auto n_prot = static_cast<Eigen::Index>(protected_features.size());
  if (raw_lo.size() != schema.size() || raw_hi.size() != schema.size() || p_raw.size() != n_prot ||
      p_prime_raw.size() != n_prot) {
    throw InternalError(
        fmt::format("check_region: box of {} and {} values for {} features, protected values {} and {} "
                    "for {} protected features",
                    raw_lo.size(), raw_hi.size(), schema.size(), p_raw.size(), p_prime_raw.size(), n_prot));
  }
  auto solver = make_solver("z3");
  const DualEncoding d = encode_dual(*solver, model, schema, protected_features);
  const std::vector<bool> is_prot = schema.feature_mask(protected_features);
  for (Eigen::Index k = 0; k < n_prot; ++k) {
    const auto f = static_cast<std::size_t>(protected_features[static_cast<std::size_t>(k)]);
    if (!std::isfinite(p_raw[k]) || !std::isfinite(p_prime_raw[k])) {
      throw InternalError("check_region: a protected value is not finite");
    }
    solver->assert_(eq(d.enc.raw_terms[f], Rational::from_double(p_raw[k])));
    solver->assert_(eq(d.enc_prime.raw_terms[f], Rational::from_double(p_prime_raw[k])));
  }
  for (int f = 0; f < schema.size(); ++f) {
    if (is_prot[static_cast<std::size_t>(f)]) continue;
    if (std::isnan(raw_lo[f]) || std::isnan(raw_hi[f])) throw InternalError("check_region: a box bound is NaN");
    const Term& t = d.enc.raw_terms[static_cast<std::size_t>(f)];
    if (std::isfinite(raw_lo[f])) solver->assert_(ge(t, Rational::from_double(raw_lo[f])));
    if (std::isfinite(raw_hi[f])) solver->assert_(le(t, Rational::from_double(raw_hi[f])));
  }
  solver->assert_(d.labels_differ);
  return solver->check(seconds > 0 ? seconds : 0.0);
}

}  // namespace witness
