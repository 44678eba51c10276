#include "solver/lp_guess.h"

#include <CbcModel.hpp>
#include <ClpSimplex.hpp>
#include <OsiClpSolverInterface.hpp>
#include <chrono>
#include <cmath>
#include <optional>

#include "core/error.h"

namespace witness {
namespace {

// A row a.x + c (<= | < | =) 0 of the LP, in doubles.
struct Row {
  std::vector<int> vars;
  std::vector<double> coeffs;
  double constant = 0.0;
  bool equality = false;
  bool strict = false;
  Term exact;  // the row is exact <= 0, < 0 or = 0
};

class LpGuessSolver final : public Solver {
 public:
  explicit LpGuessSolver(std::unique_ptr<Solver> inner) : inner_(std::move(inner)) { scopes_.emplace_back(); }

  [[nodiscard]] std::string backend() const override { return "lp+" + inner_->backend(); }

  int int_var(const std::string& name, std::int64_t lo, std::int64_t hi) override {
    const int id = inner_->int_var(name, lo, hi);
    bounds_.push_back({true, Rational(lo), Rational(hi)});
    return id;
  }
  int real_var(const std::string& name, std::optional<Rational> lo, std::optional<Rational> hi) override {
    const int id = inner_->real_var(name, lo, hi);
    bounds_.push_back({false, std::move(lo), std::move(hi)});
    return id;
  }
  [[nodiscard]] int num_vars() const override { return inner_->num_vars(); }
  [[nodiscard]] bool is_int(int var) const override { return inner_->is_int(var); }
  [[nodiscard]] const std::string& var_name(int var) const override { return inner_->var_name(var); }

  void assert_(const Constraint& c) override {
    inner_->assert_(c);
    scopes_.back().push_back(c);
  }
  void push() override {
    inner_->push();
    scopes_.emplace_back();
  }
  void pop(int levels) override {
    inner_->pop(levels);
    scopes_.resize(scopes_.size() - static_cast<std::size_t>(levels));
  }
  [[nodiscard]] int scope_level() const override { return inner_->scope_level(); }

  CheckResult check(double time_limit_seconds) override {
    const auto start = std::chrono::steady_clock::now();
    guess_.reset();
    ++stats_.checks;
    CheckResult r = CheckResult::Unknown;
    if (const std::optional<CheckResult> quick = decide()) {
      r = *quick;
      ++(r == CheckResult::Sat ? stats_.guessed : stats_.refuted);
    } else {
      r = inner_->check(time_limit_seconds);
    }
    switch (r) {
      case CheckResult::Sat: ++stats_.sat; break;
      case CheckResult::Unsat: ++stats_.unsat; break;
      case CheckResult::Unknown: ++stats_.unknown; break;
    }
    stats_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }
  [[nodiscard]] std::string reason_unknown() const override { return guess_ ? "" : inner_->reason_unknown(); }
  [[nodiscard]] Rational value(int var) const override {
    if (!guess_) return inner_->value(var);
    if (var < 0 || static_cast<std::size_t>(var) >= guess_->size()) {
      throw InternalError("solver: unknown variable id " + std::to_string(var));
    }
    return (*guess_)[static_cast<std::size_t>(var)];
  }
  [[nodiscard]] const SolverStats& stats() const override { return stats_; }

 private:
  struct Bounds {
    bool is_int = false;
    std::optional<Rational> lo, hi;
  };

  // Top-level linear comparisons become LP rows; the rest is only checked on the rounded point.
  // Top-level disjunctions go to `ors` (may be nullptr: ignored).
  static bool collect(const Constraint& c, std::vector<Row>& rows, std::vector<Constraint>* ors = nullptr) {
    switch (c.kind()) {
      case Constraint::Kind::True: return true;
      case Constraint::Kind::False: return false;
      case Constraint::Kind::And:
        for (const Constraint& a : c.args()) {
          if (!collect(a, rows, ors)) return false;
        }
        return true;
      case Constraint::Kind::Or:
        if (ors != nullptr) ors->push_back(c);
        return true;
      case Constraint::Kind::Not: {  // a negated comparison is a comparison; a != b is a disjunction
        const Constraint& a = c.args()[0];
        if (a.kind() == Constraint::Kind::Eq) {
          if (ors != nullptr) ors->push_back(c);
          return true;
        }
        if (a.kind() == Constraint::Kind::Le || a.kind() == Constraint::Kind::Lt)
          return collect(negation(a), rows, ors);
        return true;
      }
      case Constraint::Kind::Le:
      case Constraint::Kind::Lt:
      case Constraint::Kind::Eq: {
        const Term& t = c.term();
        if (!t.is_linear()) return true;
        Row r;
        r.equality = c.kind() == Constraint::Kind::Eq;
        r.strict = c.kind() == Constraint::Kind::Lt;
        r.exact = t;
        r.constant = t.constant().to_double();
        double scale = 0.0;
        for (const auto& [v, k] : t.vars()) {
          r.vars.push_back(v);
          r.coeffs.push_back(k.to_double());
          scale = std::max(scale, std::abs(r.coeffs.back()));
        }
        if (scale > 0 && std::isfinite(scale)) {  // rows of similar size help the LP's tolerances
          for (double& k : r.coeffs) k /= scale;
          r.constant /= scale;
          r.exact *= Rational::from_double(1.0 / scale);  // any positive factor: the same row, exactly
        }
        if (!r.vars.empty()) rows.push_back(std::move(r));
        return true;
      }
      default: return true;
    }
  }

  // Exact: is sum_i y_i * row_i > 0 (or >= 0 with weight on a strict row) everywhere in the box?
  // Every feasible point has sum_i y_i * row_i <= 0 when y_i >= 0 on inequality rows (any sign on
  // equalities), so a yes proves the rows infeasible, whatever rounding produced y.
  [[nodiscard]] bool refutes(const std::vector<Row>& rows, const double* y, double sign) const {
    Term combination;
    bool strict_weight = false;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double yi = sign * y[i];
      if (!std::isfinite(yi)) return false;
      if (yi == 0.0 || (!rows[i].equality && yi < 0.0)) continue;
      combination += rows[i].exact * Rational::from_double(yi);
      strict_weight = strict_weight || (rows[i].strict && yi > 0.0);
    }
    Rational low = combination.constant();
    for (const auto& [v, k] : combination.vars()) {
      const Bounds& b = bounds_.at(static_cast<std::size_t>(v));
      const std::optional<Rational>& end = k > Rational(0) ? b.lo : b.hi;
      if (!end) return false;  // unbounded below
      low += k * *end;
    }
    return low > Rational(0) || (strict_weight && low == Rational(0));
  }

  // The ways a disjunction can hold, each as rows (a != b: a < b or a > b).
  static std::vector<std::vector<Row>> branches(const Constraint& c) {
    std::vector<std::vector<Row>> out;
    auto add = [&](const Constraint& d) {
      std::vector<Row> rows;
      if (collect(d, rows)) out.push_back(std::move(rows));
    };
    if (c.kind() == Constraint::Kind::Not) {  // not (t = 0)
      const Term& t = c.args()[0].term();
      add(lt(t, 0));
      add(gt(t, 0));
      return out;
    }
    for (const Constraint& d : c.args()) {
      if (d.kind() == Constraint::Kind::Not && d.args()[0].kind() == Constraint::Kind::Eq) {
        for (auto& b : branches(d)) out.push_back(std::move(b));
      } else {
        add(d);
      }
    }
    return out;
  }

  // Sat with a point, Unsat with a checked certificate, or nullopt (ask the exact backend).
  std::optional<CheckResult> decide() {
    std::vector<Row> rows;
    std::vector<Constraint> ors;
    for (const auto& scope : scopes_) {
      for (const Constraint& c : scope) {
        if (!collect(c, rows, &ors)) return std::nullopt;
      }
    }
    if (bounds_.empty()) return std::nullopt;
    const Attempt first = attempt(rows);
    if (first == Attempt::Refuted) return CheckResult::Unsat;  // a relaxation of the assertions
    if (first == Attempt::Point) return CheckResult::Sat;
    if (ors.empty()) return std::nullopt;
    // The point failed on a disjunction, typically p != p': try each way it can hold. When every
    // way is refuted, so is the whole.
    bool all_refuted = true;
    for (std::vector<Row>& extra : branches(ors.front())) {
      std::vector<Row> with = rows;
      for (Row& r : extra) with.push_back(std::move(r));
      const Attempt a = attempt(with);
      if (a == Attempt::Point) return CheckResult::Sat;
      all_refuted = all_refuted && a == Attempt::Refuted;
    }
    if (all_refuted) return CheckResult::Unsat;
    return std::nullopt;
  }

  enum class Attempt : std::uint8_t { Point, Refuted, Open };

  // One LP over `rows`: a point that satisfies every assertion exactly (stored in guess_), a
  // refutation of the rows checked exactly, or neither.
  Attempt attempt(const std::vector<Row>& rows) {
    const auto n = static_cast<int>(bounds_.size());
    // Columns: the variables, then the margin s; maximise s subject to a.x + c + s*|a| <= 0 on the
    // inequality rows. s may go negative, so the LP is feasible unless the equalities are not, and
    // a negative optimum comes with row duals that refute the rows.
    ClpSimplex lp;
    lp.setLogLevel(0);
    lp.resize(0, n + 1);
    for (int j = 0; j < n; ++j) {
      const Bounds& b = bounds_[static_cast<std::size_t>(j)];
      lp.setColumnLower(j, b.lo ? b.lo->to_double() : -COIN_DBL_MAX);
      lp.setColumnUpper(j, b.hi ? b.hi->to_double() : COIN_DBL_MAX);
    }
    lp.setColumnLower(n, -1e6);
    lp.setColumnUpper(n, 1e6);
    lp.setObjectiveCoefficient(n, 1.0);
    lp.setOptimizationDirection(-1);
    std::vector<double> lower;
    std::vector<double> upper;
    std::vector<CoinBigIndex> starts{0};
    std::vector<int> columns;
    std::vector<double> elements;
    for (const Row& r : rows) {
      double norm = 0.0;
      for (std::size_t k = 0; k < r.vars.size(); ++k) {
        if (r.vars[k] < 0 || r.vars[k] >= n) return Attempt::Open;
        columns.push_back(r.vars[k]);
        elements.push_back(r.coeffs[k]);
        norm += r.coeffs[k] * r.coeffs[k];
      }
      if (!r.equality) {
        columns.push_back(n);
        elements.push_back(std::sqrt(norm));
      }
      lower.push_back(r.equality ? -r.constant : -COIN_DBL_MAX);
      upper.push_back(-r.constant);
      starts.push_back(static_cast<CoinBigIndex>(columns.size()));
    }
    if (!rows.empty()) {
      lp.addRows(static_cast<int>(rows.size()), lower.data(), upper.data(), starts.data(), columns.data(),
                 elements.data());
    }
    lp.dual();
    if (lp.status() != 0) return Attempt::Open;
    const double* x = lp.getColSolution();
    if (x[n] <= 0.0) {
      // The duals' sign convention depends on the sense; the exact check makes trying both safe.
      const double* y = lp.getRowPrice();
      return refutes(rows, y, 1.0) || refutes(rows, y, -1.0) ? Attempt::Refuted : Attempt::Open;
    }
    if (auto p = exact_point(x)) {
      guess_ = std::move(*p);
      return Attempt::Point;
    }
    // Rounding the LP point failed: look for an integer point with the best margin (Cbc, floating
    // point), then check it exactly as well.
    bool any_int = false;
    for (const Bounds& b : bounds_) any_int = any_int || b.is_int;
    if (!any_int) return Attempt::Open;
    OsiClpSolverInterface osi(&lp, false);
    for (int j = 0; j < n; ++j) {
      if (bounds_[static_cast<std::size_t>(j)].is_int) osi.setInteger(j);
    }
    // Any integer point strictly inside every inequality will do: a feasibility problem, which
    // Cbc ends at its first solution (maximising the margin here costs hundreds of nodes).
    osi.setColLower(n, 1e-7);
    osi.setObjCoeff(n, 0.0);
    CbcModel mip(osi);
    mip.setLogLevel(0);
    mip.setMaximumNodes(500);  // a node limit, not a time limit: answers must not depend on load
    mip.branchAndBound();
    if (mip.bestSolution() == nullptr) return Attempt::Open;
    if (auto p = exact_point(mip.bestSolution())) {
      guess_ = std::move(*p);
      return Attempt::Point;
    }
    return Attempt::Open;
  }

  // x rounded to the variables' kinds and bounds, if it satisfies every assertion exactly.
  [[nodiscard]] std::optional<std::vector<Rational>> exact_point(const double* x) const {
    const auto n = static_cast<int>(bounds_.size());
    std::vector<Rational> point(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) {
      const Bounds& b = bounds_[static_cast<std::size_t>(j)];
      if (!std::isfinite(x[j])) return std::nullopt;
      Rational v = b.is_int ? Rational(static_cast<long>(std::llround(x[j]))) : Rational::from_double(x[j]);
      if (b.lo && v < *b.lo) v = *b.lo;
      if (b.hi && v > *b.hi) v = *b.hi;
      point[static_cast<std::size_t>(j)] = v;
    }
    const auto value_of = [&](int v) { return point.at(static_cast<std::size_t>(v)); };
    for (const auto& scope : scopes_) {
      for (const Constraint& c : scope) {
        if (!evaluate(c, value_of)) return std::nullopt;
      }
    }
    return point;
  }

  std::unique_ptr<Solver> inner_;
  std::vector<Bounds> bounds_;
  std::vector<std::vector<Constraint>> scopes_;
  std::optional<std::vector<Rational>> guess_;
  SolverStats stats_;
};

}  // namespace

std::unique_ptr<Solver> with_lp_guess(std::unique_ptr<Solver> inner) {
  return std::make_unique<LpGuessSolver>(std::move(inner));
}

}  // namespace witness
