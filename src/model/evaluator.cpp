#include "model/evaluator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace witness {
namespace {

template <typename T>
int tree_leaf(const TreeEnsemble::Tree& tree, const T* x) {
  int id = 0;
  for (;;) {  // children come after their parent (checked when built), so this ends
    const TreeEnsemble::Node& n = tree.nodes[static_cast<std::size_t>(id)];
    if (n.mode == TreeEnsemble::Mode::Leaf) return id;
    const T v = x[n.feature];
    const auto t = static_cast<T>(n.threshold);
    bool go_true = false;
    if (std::isnan(v)) {
      go_true = n.missing_tracks_true;
    } else {
      switch (n.mode) {
        case TreeEnsemble::Mode::Leq: go_true = v <= t; break;
        case TreeEnsemble::Mode::Lt: go_true = v < t; break;
        case TreeEnsemble::Mode::Geq: go_true = v >= t; break;
        case TreeEnsemble::Mode::Gt: go_true = v > t; break;
        case TreeEnsemble::Mode::Eq: go_true = v == t; break;
        case TreeEnsemble::Mode::Neq: go_true = v != t; break;
        case TreeEnsemble::Mode::Member:
          go_true = std::binary_search(n.members.begin(), n.members.end(), static_cast<double>(v));
          break;
        case TreeEnsemble::Mode::Leaf: break;
      }
    }
    id = go_true ? n.true_child : n.false_child;
  }
}

// Elementwise binary op with width-1 broadcasting.
template <typename T, typename F>
void broadcast(const Eigen::Matrix<T, -1, -1>& a, const Eigen::Matrix<T, -1, -1>& b, Eigen::Matrix<T, -1, -1>& out,
               F f) {
  const Eigen::Index rows = std::max(a.rows(), b.rows());
  const Eigen::Index cols = a.cols();
  out.resize(rows, cols);
  for (Eigen::Index c = 0; c < cols; ++c) {
    for (Eigen::Index r = 0; r < rows; ++r) {
      out(r, c) = f(a(a.rows() == 1 ? 0 : r, c), b(b.rows() == 1 ? 0 : r, c));
    }
  }
}

template <typename T>
void tree_ensemble(const TreeEnsemble& te, const Eigen::Matrix<T, -1, -1>& x, Eigen::Matrix<T, -1, -1>& out) {
  const Eigen::Index cols = x.cols();
  const int targets = te.n_targets;
  Eigen::Matrix<T, -1, -1> acc = Eigen::Matrix<T, -1, -1>::Zero(targets, cols);
  const bool extreme = te.aggregate == TreeEnsemble::Aggregate::Min || te.aggregate == TreeEnsemble::Aggregate::Max;
  Eigen::Matrix<bool, -1, -1> seen = Eigen::Matrix<bool, -1, -1>::Constant(targets, cols, false);
  // Tree by tree over all rows: one tree's nodes stay in cache (a forest of a hundred deep trees
  // does not fit), and every row still adds its trees' weights in the trees' order.
  for (const auto& tree : te.trees) {
    for (Eigen::Index c = 0; c < cols; ++c) {
      const int leaf = tree_leaf<T>(tree, x.col(c).data());
      for (const auto& w : tree.leaves_of(leaf)) {
        T& a = acc(w.target, c);
        const auto v = static_cast<T>(w.weight);
        bool& s = seen(w.target, c);
        if (!extreme || !s) {
          a = extreme ? v : a + v;
        } else {
          a = te.aggregate == TreeEnsemble::Aggregate::Min ? std::min(a, v) : std::max(a, v);
        }
        s = true;
      }
    }
  }
  for (Eigen::Index c = 0; c < cols; ++c) {
    if (te.aggregate == TreeEnsemble::Aggregate::Average) acc.col(c) /= static_cast<T>(te.trees.size());
    for (int t = 0; t < targets && !te.base_values.empty(); ++t) {
      acc(t, c) += static_cast<T>(te.base_values[static_cast<std::size_t>(t)]);
    }
  }
  if (te.binary_single_score) {
    out.resize(2, cols);
    out.row(1) = acc.row(0);
    out.row(0) = (-acc.row(0).array() + static_cast<T>(te.binary_total)).matrix();
  } else {
    out = std::move(acc);
  }
}

}  // namespace

template <typename T>
Evaluator<T>::Evaluator(const Model& model) : Evaluator(model, {model.output, model.rule.node}) {
  runs_rule_ = true;
}

template <typename T>
Evaluator<T>::Evaluator(const Model& model, const std::vector<int>& nodes) : model_(model), runs_rule_(false) {
  const std::size_t n = model.nodes.size();
  dense_weights_.resize(n);
  dense_bias_.resize(n);
  values_.resize(n);
  needed_.assign(n, false);
  for (const int k : nodes) {
    if (k < 0 || static_cast<std::size_t>(k) >= n) {
      throw InternalError(fmt::format("evaluator: node {} is outside the model's {} nodes", k, n));
    }
    needed_[static_cast<std::size_t>(k)] = true;
  }
  for (std::size_t i = n; i-- > 0;) {
    if (!needed_[i]) continue;
    for (int in : model.nodes[i].inputs) needed_[static_cast<std::size_t>(in)] = true;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Node& nd = model.nodes[i];
    if (nd.op == OpKind::Dense) {
      dense_weights_[i] = nd.weights.cast<T>();
      dense_bias_[i] = nd.values.cast<T>();
    } else if (nd.op == OpKind::Lookup) {
      dense_weights_[i] = nd.weights.cast<T>();
    }
  }
}

template <typename T>
void Evaluator<T>::compute(const Eigen::MatrixXd& x) {
  if (x.rows() != model_.input_width()) {
    throw InputError(model_.source, "",
                     fmt::format("model expects {} inputs per row, got {}", model_.input_width(), x.rows()));
  }
  const Eigen::Index cols = x.cols();
  for (std::size_t i = 0; i < model_.nodes.size(); ++i) {
    if (!needed_[i]) continue;
    const Node& nd = model_.nodes[i];
    Matrix& out = values_[i];
    auto in = [&](std::size_t k) -> const Matrix& { return values_[static_cast<std::size_t>(nd.inputs[k])]; };
    switch (nd.op) {
      case OpKind::Input: out = x.cast<T>(); break;
      case OpKind::Constant: out = nd.values.cast<T>().replicate(1, cols); break;
      case OpKind::Dense:
        out.noalias() = dense_weights_[i] * in(0);
        out.colwise() += dense_bias_[i].col(0);
        break;
      case OpKind::Add: broadcast<T>(in(0), in(1), out, [](T a, T b) { return a + b; }); break;
      case OpKind::Sub: broadcast<T>(in(0), in(1), out, [](T a, T b) { return a - b; }); break;
      case OpKind::Mul: broadcast<T>(in(0), in(1), out, [](T a, T b) { return a * b; }); break;
      case OpKind::Div: broadcast<T>(in(0), in(1), out, [](T a, T b) { return a / b; }); break;
      case OpKind::Less: broadcast<T>(in(0), in(1), out, [](T a, T b) { return T(a < b); }); break;
      case OpKind::LessEqual: broadcast<T>(in(0), in(1), out, [](T a, T b) { return T(a <= b); }); break;
      case OpKind::Greater: broadcast<T>(in(0), in(1), out, [](T a, T b) { return T(a > b); }); break;
      case OpKind::GreaterEqual: broadcast<T>(in(0), in(1), out, [](T a, T b) { return T(a >= b); }); break;
      case OpKind::Equal: broadcast<T>(in(0), in(1), out, [](T a, T b) { return T(a == b); }); break;
      case OpKind::Relu: out = in(0).cwiseMax(T(0)); break;
      case OpKind::LeakyRelu: {
        const auto alpha = static_cast<T>(nd.alpha);
        out = in(0).unaryExpr([alpha](T v) { return v > T(0) ? v : alpha * v; });
        break;
      }
      case OpKind::Sigmoid: out = in(0).unaryExpr([](T v) { return T(1) / (T(1) + std::exp(-v)); }); break;
      case OpKind::Tanh: out = in(0).array().tanh().matrix(); break;
      case OpKind::Softmax: {
        out = in(0);
        for (Eigen::Index c = 0; c < cols; ++c) {
          auto col = out.col(c);
          col.array() = (col.array() - col.maxCoeff()).exp();
          col /= col.sum();
        }
        break;
      }
      case OpKind::Identity: out = in(0); break;
      case OpKind::Where: {
        const Matrix& cond = in(0);
        const Matrix& a = in(1);
        const Matrix& b = in(2);
        out.resize(nd.width, cols);
        for (Eigen::Index c = 0; c < cols; ++c) {
          for (Eigen::Index r = 0; r < nd.width; ++r) {
            const bool k = cond(cond.rows() == 1 ? 0 : r, c) != T(0);
            out(r, c) = k ? a(a.rows() == 1 ? 0 : r, c) : b(b.rows() == 1 ? 0 : r, c);
          }
        }
        break;
      }
      case OpKind::Select:
        out.resize(nd.width, cols);
        for (std::size_t r = 0; r < nd.indices.size(); ++r) {
          out.row(static_cast<Eigen::Index>(r)) = in(0).row(nd.indices[r]);
        }
        break;
      case OpKind::Lookup: {
        const Matrix& table = dense_weights_[i];
        out.resize(nd.width, cols);
        for (Eigen::Index c = 0; c < cols; ++c) {
          // As ONNX: Cast to int64 truncates toward zero, and Gather counts negative indices from the end.
          const auto v = static_cast<double>(in(0)(0, c));
          const auto rows = static_cast<double>(table.rows());
          if (!(v > -rows - 1.0 && v < rows)) {  // NaN too
            throw InputError(model_.source, node_label(nd, i),
                             fmt::format("lookup index {} is outside the table's rows (truncated, it must lie in "
                                         "[-{}, {}): negative indices count from the end)",
                                         v, table.rows(), table.rows() - 1));
          }
          auto row = static_cast<Eigen::Index>(std::trunc(v));
          if (row < 0) row += table.rows();
          out.col(c) = table.row(row).transpose();
        }
        break;
      }
      case OpKind::Concat: {
        out.resize(nd.width, cols);
        Eigen::Index r = 0;
        for (std::size_t k = 0; k < nd.inputs.size(); ++k) {
          out.middleRows(r, in(k).rows()) = in(k);
          r += in(k).rows();
        }
        break;
      }
      case OpKind::ArgMax:
        out.resize(1, cols);
        for (Eigen::Index c = 0; c < cols; ++c) {
          Eigen::Index best = 0;
          in(0).col(c).maxCoeff(&best);  // first maximum: ties go to the lower index
          out(0, c) = static_cast<T>(best);
        }
        break;
      case OpKind::TreeEnsemble: tree_ensemble<T>(*nd.trees, in(0), out); break;
    }
  }
}

template <typename T>
int Evaluator<T>::label_of(Eigen::Index col) const {
  const DecisionRule& rule = model_.rule;
  const Matrix& v = values_[static_cast<std::size_t>(rule.node)];
  if (v.col(col).hasNaN()) {
    ++nan_labels_;
    return 0;
  }
  switch (rule.kind) {
    case DecisionRule::Kind::Threshold: return static_cast<double>(v(rule.index, col)) > rule.threshold ? 1 : 0;
    case DecisionRule::Kind::ArgMax: {
      Eigen::Index best = 0;
      v.col(col).maxCoeff(&best);
      return static_cast<int>(best);
    }
    case DecisionRule::Kind::Direct: return static_cast<int>(std::lround(static_cast<double>(v(0, col))));
  }
  return 0;
}

template <typename T>
void Evaluator<T>::check_runs_rule() const {
  if (!runs_rule_) throw InternalError("evaluator: built for some nodes only, so it cannot give labels");
}

template <typename T>
Evaluation Evaluator<T>::run(const Eigen::MatrixXd& x) {
  check_runs_rule();
  compute(x);
  Evaluation r;
  r.outputs = values_[static_cast<std::size_t>(model_.output)].template cast<double>();
  r.decision = values_[static_cast<std::size_t>(model_.rule.node)].template cast<double>();
  r.labels.resize(static_cast<std::size_t>(x.cols()));
  for (Eigen::Index c = 0; c < x.cols(); ++c) r.labels[static_cast<std::size_t>(c)] = label_of(c);
  return r;
}

template <typename T>
void Evaluator<T>::labels(const Eigen::MatrixXd& x, std::vector<int>& out) {
  check_runs_rule();
  compute(x);
  out.resize(static_cast<std::size_t>(x.cols()));
  for (Eigen::Index c = 0; c < x.cols(); ++c) out[static_cast<std::size_t>(c)] = label_of(c);
}

template class Evaluator<double>;
template class Evaluator<float>;

double cost_per_row(const Model& model) {
  double cost = 1;
  for (const Node& node : model.nodes) cost += static_cast<double>(node.weights.size() + node.width);
  return cost;
}

Eigen::Index batch_columns(const Model& model) {
  return static_cast<Eigen::Index>(std::clamp(std::ldexp(1.0, 26) / cost_per_row(model), 64.0, 4096.0));
}

Evaluation evaluate(const Model& model, const Eigen::MatrixXd& x, Precision precision) {
  if (precision == Precision::Float32) return Evaluator<float>(model).run(x);
  return Evaluator<double>(model).run(x);
}

}  // namespace witness
