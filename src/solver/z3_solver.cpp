// Z3 backend of Solver. Every number reaches Z3 as an exact integer or rational numeral; one
// z3::context per solver, so solvers in different threads are independent.
#include <fmt/format.h>
#include <z3++.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <unordered_map>
#include <utility>

#include "core/error.h"
#include "solver/solver.h"
#include "solver/z3_check.h"
#include "solver/z3_value.h"

namespace witness {
namespace {

// Runs f, turning Z3's exceptions into InternalError (exit code 1).
template <typename F>
auto guarded(const char* what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const z3::exception& e) {
    throw InternalError(std::string("z3: ") + what + ": " + e.msg());
  }
}

mpz_class lcm_of_denominators(const Term& t) {
  mpz_class l = t.constant().gmp().get_den();
  for (const auto& [id, coeff] : t.vars()) mpz_lcm(l.get_mpz_t(), l.get_mpz_t(), coeff.gmp().get_den_mpz_t());
  return l;
}

class Z3Solver final : public Solver {
 public:
  Z3Solver() : solver_(make_z3_solver(ctx_)) {}

  [[nodiscard]] std::string backend() const override { return "z3"; }

  int int_var(const std::string& name, std::int64_t lo, std::int64_t hi) override {
    return guarded("int_var", [&] {
      const int id = static_cast<int>(vars_.size());
      z3::expr e = ctx_.int_const(z3_name(name, id).c_str());
      vars_.push_back(Var{name, true, Rational(lo), Rational(hi), e, z3::to_real(e), level_});
      assert_bounds(vars_.back());
      return id;
    });
  }

  int real_var(const std::string& name, std::optional<Rational> lo, std::optional<Rational> hi) override {
    return guarded("real_var", [&] {
      const int id = static_cast<int>(vars_.size());
      z3::expr e = ctx_.real_const(z3_name(name, id).c_str());
      vars_.push_back(Var{name, false, std::move(lo), std::move(hi), e, e, level_});
      assert_bounds(vars_.back());
      return id;
    });
  }

  [[nodiscard]] int num_vars() const override { return static_cast<int>(vars_.size()); }
  [[nodiscard]] bool is_int(int var) const override { return at(var).is_int; }
  [[nodiscard]] const std::string& var_name(int var) const override { return at(var).name; }

  void assert_(const Constraint& c) override {
    // Translate first: a bad variable id must not leave half an assertion behind.
    z3::expr e = guarded("assert", [&] { return constraint(c); });
    guarded("assert", [&] { solver_.add(e); });
  }

  void push() override {
    guarded("push", [&] { solver_.push(); });
    ++level_;
  }

  void pop(int levels) override {
    if (levels < 0 || levels > level_) {
      throw InternalError("solver: pop(" + std::to_string(levels) + ") at scope level " + std::to_string(level_));
    }
    if (levels == 0) return;
    guarded("pop", [&] { solver_.pop(static_cast<unsigned>(levels)); });
    level_ -= levels;
    // Bounds of variables made inside the popped scopes were popped with them: restore them here.
    for (Var& v : vars_) {
      if (v.level > level_) {
        v.level = level_;
        guarded("pop", [&] { assert_bounds(v); });
      }
    }
  }

  [[nodiscard]] int scope_level() const override { return level_; }

  CheckResult check(double time_limit_seconds) override {
    model_.reset();
    values_.assign(vars_.size(), std::nullopt);
    reason_.clear();
    const auto start = std::chrono::steady_clock::now();
    if (const char* dir = std::getenv("WITNESS_DUMP_SMT2")) {  // debugging aid: one file per query
      std::ofstream(fmt::format("{}/q{:05d}.smt2", dir, stats_.checks)) << solver_.to_smt2();
    }
    CheckResult result = CheckResult::Unknown;
    const Z3Check c = guarded("check", [&] { return z3_check(solver_, time_limit_seconds); });
    switch (c.result) {
      case z3::sat:
        model_ = solver_.get_model();
        result = CheckResult::Sat;
        break;
      case z3::unsat: result = CheckResult::Unsat; break;
      case z3::unknown: reason_ = c.reason; break;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++stats_.checks;
    stats_.seconds += seconds;
    switch (result) {
      case CheckResult::Sat: ++stats_.sat; break;
      case CheckResult::Unsat: ++stats_.unsat; break;
      case CheckResult::Unknown: ++stats_.unknown; break;
    }
    return result;
  }

  [[nodiscard]] std::string reason_unknown() const override { return reason_; }

  [[nodiscard]] Rational value(int var) const override {
    const Var& v = at(var);
    if (!model_) throw InternalError("solver: value() needs a last check() that returned sat");
    if (values_.size() < vars_.size()) values_.resize(vars_.size());
    auto& cached = values_[static_cast<std::size_t>(var)];
    if (!cached) cached = guarded("value", [&] { return read_value(v); });
    return *cached;
  }

  [[nodiscard]] const SolverStats& stats() const override { return stats_; }

 private:
  struct Var {
    std::string name;
    bool is_int;
    std::optional<Rational> lo;
    std::optional<Rational> hi;
    z3::expr expr;  // Int or Real constant
    z3::expr real;  // the same as Real (to_real for Int)
    int level;      // scope level its bounds are asserted at
  };

  // Z3 identifies constants by name and sort, so the id makes equal names distinct variables.
  static std::string z3_name(const std::string& name, int id) { return name + "!" + std::to_string(id); }

  [[nodiscard]] const Var& at(int var) const {
    if (var < 0 || static_cast<std::size_t>(var) >= vars_.size()) {
      throw InternalError("solver: unknown variable id " + std::to_string(var) + " (solver has " +
                          std::to_string(vars_.size()) + ")");
    }
    return vars_[static_cast<std::size_t>(var)];
  }

  void assert_bounds(const Var& v) {
    if (v.lo) solver_.add(v.expr >= numeral(*v.lo, v.is_int));
    if (v.hi) solver_.add(v.expr <= numeral(*v.hi, v.is_int));
  }

  z3::expr numeral(const Rational& r, bool as_int) {
    if (as_int) return ctx_.int_val(r.to_string().c_str());  // callers pass integers only
    return ctx_.real_val(r.to_string().c_str());             // "p/q" is a Z3 real numeral
  }

  z3::expr scaled(const z3::expr& x, const Rational& coeff, bool as_int) {
    if (coeff == 1) return x;
    if (coeff == -1) return -x;
    return numeral(coeff, as_int) * x;
  }

  // The term as a Real expression.
  z3::expr real_term(const Term& t) {
    z3::expr_vector parts(ctx_);
    for (const auto& [id, coeff] : t.vars()) parts.push_back(scaled(at(id).real, coeff, false));
    for (const auto& [coeff, node] : t.nodes()) parts.push_back(scaled(term_node(node), coeff, false));
    if (t.constant().sign() != 0 || parts.empty()) parts.push_back(numeral(t.constant(), false));
    return parts.size() == 1 ? parts[0] : z3::sum(parts);
  }

  z3::expr term_node(const std::shared_ptr<const TermNode>& node) {
    if (const auto it = nodes_.find(node.get()); it != nodes_.end()) return it->second.second;
    z3::expr e(ctx_);
    switch (node->kind) {
      case TermNode::Kind::Ite:
        e = z3::ite(constraint(node->conditions.at(0)), real_term(node->args.at(0)), real_term(node->args.at(1)));
        break;
    }
    // Holding the node keeps its address from being reused by another node while cached.
    nodes_.emplace(node.get(), std::make_pair(node, e));
    return e;
  }

  // t op 0, with t = lhs + k. Linear terms over integer variables only are scaled to integer
  // coefficients and stay in the Int sort, so Z3 sees pure integer arithmetic.
  z3::expr relation(Constraint::Kind kind, const Term& t) {
    bool all_int = t.is_linear();
    for (const auto& [id, coeff] : t.vars()) all_int = all_int && at(id).is_int;
    z3::expr lhs(ctx_);
    z3::expr rhs(ctx_);
    if (all_int) {
      const Rational l{mpq_class(lcm_of_denominators(t))};
      z3::expr_vector parts(ctx_);
      for (const auto& [id, coeff] : t.vars()) parts.push_back(scaled(at(id).expr, coeff * l, true));
      lhs = parts.size() == 1 ? parts[0] : z3::sum(parts);
      rhs = numeral(-t.constant() * l, true);
    } else {
      Term linear = t;
      linear -= Term(t.constant());
      lhs = real_term(linear);
      rhs = numeral(-t.constant(), false);
    }
    switch (kind) {
      case Constraint::Kind::Le: return lhs <= rhs;
      case Constraint::Kind::Lt: return lhs < rhs;
      default: return lhs == rhs;
    }
  }

  z3::expr constraint(const Constraint& c) {
    using K = Constraint::Kind;
    switch (c.kind()) {
      case K::True: return ctx_.bool_val(true);
      case K::False: return ctx_.bool_val(false);
      case K::Le:
      case K::Lt:
      case K::Eq: return relation(c.kind(), c.term());
      case K::Not: return !constraint(c.args().front());
      case K::And:
      case K::Or: {
        z3::expr_vector args(ctx_);
        for (const Constraint& a : c.args()) args.push_back(constraint(a));
        return c.kind() == K::And ? z3::mk_and(args) : z3::mk_or(args);
      }
    }
    throw InternalError("solver: unknown constraint kind");
  }

  // Exact value of v in model_. Linear arithmetic gives rational numerals; algebraic numbers
  // (only possible once non-linear terms exist) come back as a rational within 1e-30 below.
  Rational read_value(const Var& v) const {
    bool rounded = false;
    if (const auto r = z3_rational(model_->eval(v.expr, false), rounded)) return *r;
    // Not in the model: the variable is unconstrained there, so any value in its bounds will do.
    if (v.lo) return *v.lo;
    if (v.hi && v.hi->sign() < 0) return *v.hi;
    return Rational(0);
  }

  mutable z3::context ctx_;  // mutable: reading a model value builds Z3 terms
  z3::solver solver_;
  std::vector<Var> vars_;
  int level_ = 0;
  std::unordered_map<const TermNode*, std::pair<std::shared_ptr<const TermNode>, z3::expr>> nodes_;
  std::optional<z3::model> model_;
  mutable std::vector<std::optional<Rational>> values_;
  std::string reason_;
  SolverStats stats_;
};

}  // namespace

namespace detail {
std::unique_ptr<Solver> make_z3_solver() {
  return guarded("creating a solver", [] { return std::unique_ptr<Solver>(std::make_unique<Z3Solver>()); });
}
}  // namespace detail

}  // namespace witness
