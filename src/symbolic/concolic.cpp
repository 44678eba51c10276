#include "symbolic/concolic.h"

#include <fmt/format.h>
#include <gmpxx.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "model/evaluator.h"

namespace witness {
// Named, not anonymous: ConcolicEvaluator::Impl holds an Affine, and an anonymous type in a member
// of a class with linkage is an error once the file is compiled in a unity batch.
namespace concolic_detail {

// Exact affine values of one node: width rows of (n coefficients, then the constant), row-major.
// Rows that are exactly 0 are flagged so that Dense skips them (inactive ReLUs are common).
struct Affine {
  int width = 0;
  int cols = 0;  // n symbolic inputs + 1
  std::vector<mpq_class> c;
  std::vector<char> has_vars;  // per row: some coefficient of a variable is non-zero
  std::vector<char> nonzero;   // per row: some entry is non-zero

  void reset(int w, int n1) {
    width = w;
    cols = n1;
    c.assign(static_cast<std::size_t>(w) * static_cast<std::size_t>(n1), mpq_class(0));
    has_vars.assign(static_cast<std::size_t>(w), 0);
    nonzero.assign(static_cast<std::size_t>(w), 0);
  }
  mpq_class* row(int r) { return c.data() + static_cast<std::size_t>(r) * static_cast<std::size_t>(cols); }
  [[nodiscard]] const mpq_class* row(int r) const {
    return c.data() + static_cast<std::size_t>(r) * static_cast<std::size_t>(cols);
  }
  void refresh(int r) {
    const mpq_class* p = row(r);
    bool v = false;
    for (int k = 0; k + 1 < cols; ++k) v = v || sgn(p[k]) != 0;
    has_vars[static_cast<std::size_t>(r)] = v ? 1 : 0;
    nonzero[static_cast<std::size_t>(r)] = (v || sgn(p[cols - 1]) != 0) ? 1 : 0;
  }
  void copy_row(int r, const Affine& from, int fr) {
    std::copy(from.row(fr), from.row(fr) + cols, row(r));
    has_vars[static_cast<std::size_t>(r)] = from.has_vars[static_cast<std::size_t>(fr)];
    nonzero[static_cast<std::size_t>(r)] = from.nonzero[static_cast<std::size_t>(fr)];
  }
};

// The nodes the decision rules read (the model's own rule when none are given).
std::vector<int> rule_nodes(const Model& m, const std::vector<DecisionRule>& rules) {
  std::vector<int> nodes;
  for (const DecisionRule& r : rules) {
    if (r.node < 0 || r.node >= static_cast<int>(m.nodes.size())) {
      throw InternalError("concolic: decision node out of range");
    }
    nodes.push_back(r.node);
  }
  if (nodes.empty()) nodes.push_back(m.rule.node);
  return nodes;
}

}  // namespace concolic_detail
using concolic_detail::Affine;
using concolic_detail::rule_nodes;

struct ConcolicEvaluator::Impl {
  const Model& model;
  std::vector<DecisionRule> rules;              // read in this order at the end of a run
  std::vector<bool> needed;                     // nodes the decision rule depends on
  std::vector<std::vector<mpq_class>> weights;  // Dense: [rows * cols], row-major
  std::vector<std::vector<mpq_class>> bias;
  Evaluator<double> concrete;  // the values in double, one column: the same code as every other run
  std::vector<Affine> sym;     // exact, for nodes with symbolic dependence
  std::vector<char> is_sym;
  Affine scratch_a, scratch_b;  // scratch for constants broadcast into affine rows
  std::vector<int> var_of;      // column -> model input index

  Impl(const Model& m, std::vector<DecisionRule> decisions)
      : model(m), rules(std::move(decisions)), concrete(m, rule_nodes(m, rules)) {
    if (rules.empty()) rules.push_back(m.rule);
    const std::size_t n = m.nodes.size();
    needed.assign(n, false);
    for (const DecisionRule& r : rules) needed[static_cast<std::size_t>(r.node)] = true;  // checked in rule_nodes
    for (std::size_t i = n; i-- > 0;) {
      if (!needed[i]) continue;
      for (int in : m.nodes[i].inputs) needed[static_cast<std::size_t>(in)] = true;
    }
    weights.resize(n);
    bias.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const Node& nd = m.nodes[i];
      if (!needed[i]) continue;
      if (nd.op == OpKind::TreeEnsemble || nd.op == OpKind::Lookup) {
        throw UnsupportedError(m.source, nd.name.empty() ? fmt::format("node {}", i) : nd.name,
                               fmt::format("concolic execution does not support {} nodes", op_name(nd.op)));
      }
      if (nd.op != OpKind::Dense) continue;
      auto& w = weights[i];
      w.resize(static_cast<std::size_t>(nd.weights.size()));
      for (Eigen::Index r = 0; r < nd.weights.rows(); ++r) {
        for (Eigen::Index c = 0; c < nd.weights.cols(); ++c) {
          w[static_cast<std::size_t>(r * nd.weights.cols() + c)] = mpq_class(nd.weights(r, c));
        }
      }
      auto& b = bias[i];
      b.resize(static_cast<std::size_t>(nd.values.size()));
      for (Eigen::Index r = 0; r < nd.values.size(); ++r) b[static_cast<std::size_t>(r)] = mpq_class(nd.values[r]);
    }
    sym.resize(n);
  }

  // The exact values of node `id`, materialising constants for a node without symbolic dependence.
  const Affine& affine(int id, Affine& scratch) const {
    if (is_sym[static_cast<std::size_t>(id)] != 0) return sym[static_cast<std::size_t>(id)];
    const Eigen::MatrixXd& v = concrete.node_values(id);
    const int cols = static_cast<int>(var_of.size()) + 1;
    scratch.reset(static_cast<int>(v.rows()), cols);
    for (int r = 0; r < scratch.width; ++r) {
      scratch.row(r)[cols - 1] = mpq_class(v(r, 0));
      scratch.refresh(r);
    }
    return scratch;
  }

  [[nodiscard]] Term term(const Affine& a, int r) const {
    const mpq_class* p = a.row(r);
    Term t{Rational(p[a.cols - 1])};
    for (int k = 0; k + 1 < a.cols; ++k) {
      if (sgn(p[k]) != 0) t += Rational(p[k]) * Term::var(var_of[static_cast<std::size_t>(k)]);
    }
    return t;
  }
  [[nodiscard]] Term term_of(int id, int r) const {
    if (is_sym[static_cast<std::size_t>(id)] == 0) return Term{Rational::from_double(concrete.node_values(id)(r, 0))};
    return term(sym[static_cast<std::size_t>(id)], r);
  }
  [[nodiscard]] bool row_has_vars(int id, int r) const {
    return is_sym[static_cast<std::size_t>(id)] != 0 &&
           sym[static_cast<std::size_t>(id)].has_vars[static_cast<std::size_t>(r)] != 0;
  }

  void dense(const Node& nd, std::size_t i, const Affine& x) {
    Affine& out = sym[i];
    const int n1 = x.cols;
    out.reset(nd.width, n1);
    const auto in_w = static_cast<int>(nd.weights.cols());
    const auto& w = weights[i];
    mpq_class tmp;
    for (int r = 0; r < nd.width; ++r) {
      mpq_class* o = out.row(r);
      for (int j = 0; j < in_w; ++j) {
        if (x.nonzero[static_cast<std::size_t>(j)] == 0) continue;
        const mpq_class& wij =
            w[static_cast<std::size_t>(r) * static_cast<std::size_t>(in_w) + static_cast<std::size_t>(j)];
        if (sgn(wij) == 0) continue;
        const mpq_class* xj = x.row(j);
        for (int k = 0; k < n1; ++k) {
          if (sgn(xj[k]) == 0) continue;
          mpq_mul(tmp.get_mpq_t(), wij.get_mpq_t(), xj[k].get_mpq_t());
          mpq_add(o[k].get_mpq_t(), o[k].get_mpq_t(), tmp.get_mpq_t());
        }
      }
      o[n1 - 1] += bias[i][static_cast<std::size_t>(r)];
      out.refresh(r);
    }
  }

  ConcolicRun run(const Eigen::VectorXd& x, const std::vector<bool>& symbolic) {
    if (x.size() != model.input_width() || static_cast<int>(symbolic.size()) != model.input_width()) {
      throw InputError(model.source, "",
                       fmt::format("concolic run: model expects {} inputs, got {} values and {} flags",
                                   model.input_width(), x.size(), symbolic.size()));
    }
    concrete.compute(x);
    ConcolicRun run;
    var_of.clear();
    for (int k = 0; k < model.input_width(); ++k) {
      if (symbolic[static_cast<std::size_t>(k)]) var_of.push_back(k);
    }
    const int n1 = static_cast<int>(var_of.size()) + 1;
    is_sym.assign(model.nodes.size(), 0);
    for (std::size_t i = 0; i < model.nodes.size(); ++i) {
      if (!needed[i]) continue;
      const Node& nd = model.nodes[i];
      bool any_sym = false;
      for (int in : nd.inputs) any_sym = any_sym || is_sym[static_cast<std::size_t>(in)] != 0;
      if (nd.op == OpKind::Input) any_sym = n1 > 1;
      if (!any_sym) continue;
      is_sym[i] = 1;
      if (!symbolic_node(nd, i, x, symbolic, n1, run)) {
        is_sym[i] = 0;
        run.concretised = true;
        run.concretised_nodes.push_back(static_cast<int>(i));
      }
    }
    decide_all(run);
    return run;
  }

  // Node i's value as an affine function of the symbolic inputs; false where it is kept concrete
  // (PyCT concretises non-linear arithmetic, divisions by zero, and the non-affine operations).
  bool symbolic_node(const Node& nd, std::size_t i, const Eigen::VectorXd& x, const std::vector<bool>& symbolic, int n1,
                     ConcolicRun& run) {
    Affine& out = sym[i];
    switch (nd.op) {
      case OpKind::Input: {
        out.reset(nd.width, n1);
        int k = 0;
        for (int r = 0; r < nd.width; ++r) {
          if (symbolic[static_cast<std::size_t>(r)]) {
            out.row(r)[k++] = 1;
          } else {
            out.row(r)[n1 - 1] = mpq_class(x[r]);
          }
          out.refresh(r);
        }
        return true;
      }
      case OpKind::Dense: dense(nd, i, sym[static_cast<std::size_t>(nd.inputs[0])]); return true;
      case OpKind::Add:
      case OpKind::Sub:
      case OpKind::Mul:
      case OpKind::Div: return arithmetic(nd, out, n1);
      case OpKind::Relu:
      case OpKind::LeakyRelu: relu(nd, static_cast<int>(i), out, n1, run); return true;
      case OpKind::Identity: out = sym[static_cast<std::size_t>(nd.inputs[0])]; return true;
      case OpKind::Select: {
        const Affine& a = sym[static_cast<std::size_t>(nd.inputs[0])];
        out.reset(nd.width, n1);
        for (int r = 0; r < nd.width; ++r) out.copy_row(r, a, nd.indices[static_cast<std::size_t>(r)]);
        return true;
      }
      case OpKind::Concat: {
        out.reset(nd.width, n1);
        int r = 0;
        for (int in : nd.inputs) {
          const Affine& a = affine(in, scratch_a);
          for (int k = 0; k < a.width; ++k) out.copy_row(r++, a, k);
        }
        return true;
      }
      default: return false;  // Sigmoid, Tanh, Softmax, comparisons, Where, ArgMax, Constant
    }
  }

  // Add, Sub, Mul and Div where they stay affine; false for the others and a division by zero.
  bool arithmetic(const Node& nd, Affine& out, int n1) {
    const bool sa = is_sym[static_cast<std::size_t>(nd.inputs[0])] != 0;
    const bool sb = is_sym[static_cast<std::size_t>(nd.inputs[1])] != 0;
    const bool linear = nd.op == OpKind::Add || nd.op == OpKind::Sub || (nd.op == OpKind::Mul && !(sa && sb)) ||
                        (nd.op == OpKind::Div && !sb);
    if (!linear) return false;
    const Affine& a = affine(nd.inputs[0], scratch_a);
    const Affine& b = affine(nd.inputs[1], scratch_b);
    bool kept = true;
    out.reset(nd.width, n1);
    for (int r = 0; r < nd.width; ++r) {
      const mpq_class* pa = a.row(a.width == 1 ? 0 : r);
      const mpq_class* pb = b.row(b.width == 1 ? 0 : r);
      mpq_class* o = out.row(r);
      switch (nd.op) {
        case OpKind::Add:
          for (int k = 0; k < n1; ++k) o[k] = pa[k] + pb[k];
          break;
        case OpKind::Sub:
          for (int k = 0; k < n1; ++k) o[k] = pa[k] - pb[k];
          break;
        case OpKind::Mul: {
          const mpq_class* pv = sa ? pa : pb;
          const mpq_class& kc = sa ? pb[n1 - 1] : pa[n1 - 1];
          for (int k = 0; k < n1; ++k) o[k] = pv[k] * kc;
          break;
        }
        default: {
          const mpq_class& d = pb[n1 - 1];
          if (sgn(d) == 0) {
            kept = false;
            break;
          }
          for (int k = 0; k < n1; ++k) o[k] = pa[k] / d;
          break;
        }
      }
      out.refresh(r);
    }
    return kept;
  }

  // A ReLU's branch at each symbolic row joins the path; its output follows the branch taken.
  void relu(const Node& nd, int id, Affine& out, int n1, ConcolicRun& run) {
    const Affine& a = sym[static_cast<std::size_t>(nd.inputs[0])];
    const mpq_class alpha = nd.op == OpKind::LeakyRelu ? mpq_class(nd.alpha) : mpq_class(0);
    out.reset(nd.width, n1);
    for (int r = 0; r < nd.width; ++r) {
      const double pre = concrete.node_values(nd.inputs[0])(r, 0);
      const bool on = pre > 0.0;
      if (a.has_vars[static_cast<std::size_t>(r)] != 0) {
        const Term t = term(a, r);
        run.path.push_back({id, r, on, false, on ? gt(t, 0) : le(t, 0), pre});
      } else if ((sgn(a.row(r)[n1 - 1]) > 0) != on) {
        // The exact constant disagrees with double rounding: this path is empty in exact
        // arithmetic. A false step keeps the run faithful to double and any claim of
        // exhaustiveness sound (its sibling diverges).
        run.path.push_back({id, r, on, false, Constraint::constant(false), pre});
      }
      if (on) {
        out.copy_row(r, a, r);
      } else if (sgn(alpha) != 0) {
        for (int k = 0; k < n1; ++k) out.row(r)[k] = a.row(r)[k] * alpha;
        out.refresh(r);
      }
    }
  }

  // Every decision rule's label and path steps, the first rule's as the run's label.
  void decide_all(ConcolicRun& run) const {
    for (std::size_t k = 0; k < rules.size(); ++k) {
      ConcolicRun part;
      decide(rules[k], part);
      if (k == 0) {
        run.label = part.label;
        run.decision_expr = part.decision_expr;
        run.decision_value = part.decision_value;
      }
      run.labels.push_back(part.label);
      for (auto& b : part.path) run.path.push_back(std::move(b));
      if (part.concretised) {
        run.concretised = true;
        run.concretised_nodes.push_back(rules[k].node);
      }
    }
  }

  void decide(const DecisionRule& rule, ConcolicRun& run) const {
    const Eigen::MatrixXd& v = concrete.node_values(rule.node);
    switch (rule.kind) {
      case DecisionRule::Kind::Threshold: {
        const double z = v(rule.index, 0);
        run.label = z > rule.threshold ? 1 : 0;
        run.decision_value = z;
        run.decision_expr = term_of(rule.node, rule.index);
        const Term t = Rational::from_double(rule.threshold);
        const bool on = run.label == 1;
        if (row_has_vars(rule.node, rule.index)) {
          run.path.push_back({rule.node, rule.index, on, true, on ? gt(run.decision_expr, t) : le(run.decision_expr, t),
                              z - rule.threshold});
        } else if ((run.decision_expr.constant() > t.constant()) != on) {  // as for a constant ReLU row
          run.path.push_back({rule.node, rule.index, on, true, Constraint::constant(false), z - rule.threshold});
        }
        break;
      }
      case DecisionRule::Kind::ArgMax: {
        Eigen::Index best = 0;
        v.col(0).maxCoeff(&best);
        const auto w = static_cast<int>(best);
        run.label = w;
        run.decision_value = v(w, 0);
        run.decision_expr = term_of(rule.node, w);
        const auto width = static_cast<int>(v.rows());
        for (int k = 0; k < width; ++k) {
          if (k == w || (!row_has_vars(rule.node, k) && !row_has_vars(rule.node, w))) continue;
          const Term zk = term_of(rule.node, k);
          // ties go to the lower index: w beats a lower k strictly, a higher k with >=
          const Constraint c = k < w ? gt(run.decision_expr, zk) : ge(run.decision_expr, zk);
          run.path.push_back({rule.node, w * width + k, true, true, c, v(w, 0) - v(k, 0)});
        }
        break;
      }
      case DecisionRule::Kind::Direct:
        run.label = static_cast<int>(std::lround(v(0, 0)));
        run.decision_value = v(0, 0);
        run.decision_expr = term_of(rule.node, 0);
        // A class index computed from symbolic values has no predicate: the caller marks it concretised.
        run.concretised = row_has_vars(rule.node, 0);
        break;
    }
  }
};

ConcolicEvaluator::ConcolicEvaluator(const Model& model, std::vector<DecisionRule> decisions)
    : impl_(std::make_unique<Impl>(model, std::move(decisions))) {}
ConcolicEvaluator::~ConcolicEvaluator() = default;

ConcolicRun ConcolicEvaluator::run(const Eigen::VectorXd& x, const std::vector<bool>& symbolic_inputs) {
  return impl_->run(x, symbolic_inputs);
}

ConcolicRun run_concolic(const Model& m, const Eigen::VectorXd& x, const std::vector<bool>& symbolic_inputs) {
  return ConcolicEvaluator(m).run(x, symbolic_inputs);
}

}  // namespace witness
