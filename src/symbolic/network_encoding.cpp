#include "symbolic/network_encoding.h"

#include <fmt/format.h>

#include <string>

#include "core/error.h"

namespace witness {
namespace {

std::string describe(const Model& m, int id) {
  const Node& n = m.nodes[static_cast<std::size_t>(id)];
  return n.name.empty() ? fmt::format("node #{}", id) : fmt::format("node '{}'", n.name);
}

// The message names the node itself ("...; node 'dense_3' is Sigmoid").
[[noreturn]] void unsupported(const Model& m, const std::string& what) { throw UnsupportedError(m.source, "", what); }

bool all_constant(const std::vector<Term>& v) {
  for (const Term& t : v) {
    if (!t.is_constant()) return false;
  }
  return true;
}

// Entry r of an operand that may be a width-1 broadcast.
const Term& at(const std::vector<Term>& v, std::size_t r) { return v.size() == 1 ? v[0] : v[r]; }

class NetworkEncoder {
 public:
  NetworkEncoder(const Model& m, const std::vector<Term>& inputs) : m_(m), inputs_(inputs), values_(m.nodes.size()) {}

  std::vector<Term> encode(int target) {
    if (target < 0 || static_cast<std::size_t>(target) >= m_.nodes.size()) {
      throw InternalError(fmt::format("encode_node: node {} is outside the model's {} nodes", target, m_.nodes.size()));
    }
    if (static_cast<int>(inputs_.size()) != m_.input_width()) {
      throw InternalError(
          fmt::format("encode_node: the model has {} inputs, got {} terms", m_.input_width(), inputs_.size()));
    }
    // Nodes are in topological order: mark what `target` reads, then encode those in order.
    std::vector<bool> needed(m_.nodes.size(), false);
    needed[static_cast<std::size_t>(target)] = true;
    for (std::size_t i = static_cast<std::size_t>(target) + 1; i-- > 0;) {
      if (!needed[i]) continue;
      for (int in : m_.nodes[i].inputs) needed[static_cast<std::size_t>(in)] = true;
    }
    for (std::size_t i = 0; i <= static_cast<std::size_t>(target); ++i) {
      if (needed[i]) values_[i] = node(static_cast<int>(i));
    }
    return values_[static_cast<std::size_t>(target)];
  }

 private:
  const std::vector<Term>& in(const Node& n, std::size_t k) const {
    return values_[static_cast<std::size_t>(n.inputs[k])];
  }

  std::vector<Term> node(int id) {
    const Node& n = m_.nodes[static_cast<std::size_t>(id)];
    const auto width = static_cast<std::size_t>(n.width);
    std::vector<Term> out;
    out.reserve(width);
    switch (n.op) {
      case OpKind::Input: return inputs_;
      case OpKind::Constant:
        for (Eigen::Index r = 0; r < n.values.size(); ++r) out.emplace_back(Rational::from_double(n.values[r]));
        return out;
      case OpKind::Dense: {
        const std::vector<Term>& x = in(n, 0);
        for (Eigen::Index r = 0; r < n.weights.rows(); ++r) {
          Term sum(Rational::from_double(n.values[r]));
          for (Eigen::Index c = 0; c < n.weights.cols(); ++c) {
            const double w = n.weights(r, c);
            if (w != 0.0) sum += x[static_cast<std::size_t>(c)] * Rational::from_double(w);
          }
          out.push_back(std::move(sum));
        }
        return out;
      }
      case OpKind::Add:
      case OpKind::Sub:
      case OpKind::Mul:
      case OpKind::Div: return arithmetic(id, n);
      case OpKind::Relu:
      case OpKind::LeakyRelu: {
        const Rational alpha = n.op == OpKind::LeakyRelu ? Rational::from_double(n.alpha) : Rational(0);
        for (const Term& pre : in(n, 0)) out.push_back(ite(gt(pre, 0), pre, pre * alpha));
        return out;
      }
      case OpKind::Identity: return in(n, 0);
      case OpKind::Select:
        for (int i : n.indices) out.push_back(in(n, 0)[static_cast<std::size_t>(i)]);
        return out;
      case OpKind::Concat:
        for (std::size_t k = 0; k < n.inputs.size(); ++k) {
          const std::vector<Term>& part = in(n, k);
          out.insert(out.end(), part.begin(), part.end());
        }
        return out;
      case OpKind::Where: {
        const std::vector<Term>& cond = in(n, 0);
        if (!all_constant(cond)) {
          unsupported(m_, fmt::format("the smt engine encodes Where only with a constant condition; {} has a "
                                      "condition that depends on the input",
                                      describe(m_, id)));
        }
        for (std::size_t r = 0; r < width; ++r) {
          out.push_back(at(cond, r).constant().sign() != 0 ? at(in(n, 1), r) : at(in(n, 2), r));
        }
        return out;
      }
      case OpKind::Sigmoid:
      case OpKind::Tanh:
      case OpKind::Softmax:
      case OpKind::Less:
      case OpKind::LessEqual:
      case OpKind::Greater:
      case OpKind::GreaterEqual:
      case OpKind::Equal:
      case OpKind::Lookup:
      case OpKind::ArgMax:
      case OpKind::TreeEnsemble: break;
    }
    unsupported(
        m_, fmt::format("the smt engine encodes piecewise-linear models; {} is {}", describe(m_, id), op_name(n.op)));
  }

  // Add and Sub of anything; Mul and Div only where the result stays linear (a constant factor or
  // divisor), so the encoding is exact linear arithmetic.
  std::vector<Term> arithmetic(int id, const Node& n) {
    const std::vector<Term>& a = in(n, 0);
    const std::vector<Term>& b = in(n, 1);
    const auto width = static_cast<std::size_t>(n.width);
    std::vector<Term> out;
    out.reserve(width);
    if (n.op == OpKind::Mul && !all_constant(a) && !all_constant(b)) {
      unsupported(m_, fmt::format("the smt engine encodes Mul only with a constant operand; {} multiplies two "
                                  "values that depend on the input",
                                  describe(m_, id)));
    }
    if (n.op == OpKind::Div && !all_constant(b)) {
      unsupported(m_, fmt::format("the smt engine encodes Div only by a constant; {} divides by a value that depends "
                                  "on the input",
                                  describe(m_, id)));
    }
    for (std::size_t r = 0; r < width; ++r) {
      const Term& x = at(a, r);
      const Term& y = at(b, r);
      switch (n.op) {
        case OpKind::Add: out.push_back(x + y); break;
        case OpKind::Sub: out.push_back(x - y); break;
        case OpKind::Mul: out.push_back(y.is_constant() ? x * y.constant() : y * x.constant()); break;
        default: {  // Div
          if (y.constant().sign() == 0) unsupported(m_, fmt::format("{} divides by zero", describe(m_, id)));
          out.push_back(x * (Rational(1) / y.constant()));
          break;
        }
      }
    }
    return out;
  }

  const Model& m_;
  const std::vector<Term>& inputs_;
  std::vector<std::vector<Term>> values_;
};

}  // namespace

std::vector<Term> encode_node(const Model& m, int node, const std::vector<Term>& model_inputs) {
  return NetworkEncoder(m, model_inputs).encode(node);
}

int label_count(const Model& m) {
  switch (m.rule.kind) {
    case DecisionRule::Kind::Threshold: return 2;
    case DecisionRule::Kind::ArgMax: return m.nodes.at(static_cast<std::size_t>(m.rule.node)).width;
    case DecisionRule::Kind::Direct: break;
  }
  throw UnsupportedError(m.source, "",
                         "the smt engine needs a threshold or argmax decision rule; this model's output is the "
                         "label itself (" +
                             m.rule.describe() + ")");
}

Constraint label_is(const Model& m, const std::vector<Term>& decision_values, int label) {
  const int n_labels = label_count(m);  // throws for Direct rules
  if (label < 0 || label >= n_labels) return Constraint::constant(false);
  if (m.rule.kind == DecisionRule::Kind::Threshold) {
    if (m.rule.index < 0 || static_cast<std::size_t>(m.rule.index) >= decision_values.size()) {
      throw InternalError(fmt::format("label_is: the rule reads value {} of {}", m.rule.index, decision_values.size()));
    }
    const Term& z = decision_values[static_cast<std::size_t>(m.rule.index)];
    const Rational t = Rational::from_double(m.rule.threshold);
    return label == 1 ? gt(z, t) : le(z, t);
  }
  if (static_cast<int>(decision_values.size()) != n_labels) {
    throw InternalError(
        fmt::format("label_is: {} decision values for an argmax over {}", decision_values.size(), n_labels));
  }
  const auto k = static_cast<std::size_t>(label);
  std::vector<Constraint> beats;
  for (std::size_t j = 0; j < decision_values.size(); ++j) {
    if (j < k) beats.push_back(gt(decision_values[k], decision_values[j]));
    if (j > k) beats.push_back(ge(decision_values[k], decision_values[j]));
  }
  return conjunction(beats);
}

}  // namespace witness
