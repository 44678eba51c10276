#include "fairness/dual_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include "core/error.h"

namespace witness {
namespace {

bool elementwise(OpKind op) {
  switch (op) {
    case OpKind::Relu:
    case OpKind::LeakyRelu:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::Identity: return true;
    default: return false;
  }
}

// The nodes from the first Dense to the rule's node when they form a chain of Dense layers and
// elementwise activations reading the input; nullopt for any other graph.
std::optional<std::vector<int>> mlp_chain(const Model& m) {
  std::vector<int> chain;
  int id = m.rule.node;
  while (id != m.input) {
    const Node& n = m.nodes[static_cast<std::size_t>(id)];
    if (n.inputs.size() != 1 || (n.op != OpKind::Dense && !elementwise(n.op))) return std::nullopt;
    chain.push_back(id);
    id = n.inputs[0];
  }
  std::reverse(chain.begin(), chain.end());
  if (chain.empty() || m.nodes[static_cast<std::size_t>(chain.front())].op != OpKind::Dense) return std::nullopt;
  return chain;
}

std::vector<int> range(int from, int to) {
  std::vector<int> v;
  for (int i = from; i < to; ++i) v.push_back(i);
  return v;
}

struct Copies {
  int z1 = -1;  // the rule's node in each copy
  int z2 = -1;
};

// PyFair's Algorithm 2 over [x; x']: blocks [[W, 0], [0, W]], biases [b; b], one activation over both.
Copies block_diagonal(ModelBuilder& b, const Model& m, const std::vector<int>& chain, const std::vector<int>& x_prime) {
  const int d = m.input_width();
  std::vector<int> both = range(0, d);
  both.insert(both.end(), x_prime.begin(), x_prime.end());
  int h = b.select(b.input(), both, "dual/[x; x']");
  for (const int id : chain) {
    const Node& n = m.nodes[static_cast<std::size_t>(id)];
    if (n.op == OpKind::Dense) {
      const Eigen::Index r = n.weights.rows();
      const Eigen::Index c = n.weights.cols();
      Eigen::MatrixXd w = Eigen::MatrixXd::Zero(2 * r, 2 * c);
      w.topLeftCorner(r, c) = n.weights;
      w.bottomRightCorner(r, c) = n.weights;
      Eigen::VectorXd bias(2 * r);
      bias << n.values, n.values;
      h = b.dense(h, std::move(w), std::move(bias), n.name);
    } else {
      h = b.unary(n.op, h, n.name, n.alpha);
    }
  }
  const int w = b.width(h) / 2;
  return {b.select(h, range(0, w), "dual/z"), b.select(h, range(w, 2 * w), "dual/z'")};
}

// Every node the rule depends on, twice; nodes that do not depend on the input once.
Copies duplicated(ModelBuilder& b, const Model& m, const std::vector<int>& x_prime) {
  const std::size_t n = m.nodes.size();
  std::vector<bool> needed(n, false);
  needed[static_cast<std::size_t>(m.rule.node)] = true;
  for (std::size_t i = n; i-- > 0;) {
    if (!needed[i]) continue;
    for (const int in : m.nodes[i].inputs) needed[static_cast<std::size_t>(in)] = true;
  }
  std::vector<bool> reads_input(n, false);
  std::vector<int> map1(n, -1);
  std::vector<int> map2(n, -1);
  map1[static_cast<std::size_t>(m.input)] = b.select(b.input(), range(0, m.input_width()), "dual/x");
  map2[static_cast<std::size_t>(m.input)] = b.select(b.input(), x_prime, "dual/x'");
  reads_input[static_cast<std::size_t>(m.input)] = true;
  for (std::size_t i = 0; i < n; ++i) {
    const Node& nd = m.nodes[i];
    if (!needed[i] || static_cast<int>(i) == m.input) continue;
    std::vector<int> in1;
    std::vector<int> in2;
    for (const int k : nd.inputs) {
      const auto ks = static_cast<std::size_t>(k);
      reads_input[i] = reads_input[i] || reads_input[ks];
      in1.push_back(map1[ks]);
      in2.push_back(map2[ks]);
    }
    map1[i] = b.copy_node(nd, in1, nd.name);
    map2[i] = reads_input[i] ? b.copy_node(nd, in2, nd.name + "'") : map1[i];
  }
  return {map1[static_cast<std::size_t>(m.rule.node)], map2[static_cast<std::size_t>(m.rule.node)]};
}

}  // namespace

DualModel make_dual_model(const Model& m, const Schema& s, const std::vector<int>& protected_features, DualForm form) {
  if (s.model_width() != m.input_width()) {
    throw InputError(s.source(), "",
                     fmt::format("the schema describes {} model inputs, but {} takes {}", s.model_width(),
                                 m.source.empty() ? m.name : m.source, m.input_width()));
  }
  if (protected_features.empty()) throw InputError(s.source(), "", "the dual model needs a protected feature");
  DualModel d;
  d.width_x = m.input_width();
  std::set<int> seen;
  for (const int f : protected_features) {
    if (f < 0 || f >= s.size()) {
      throw InputError(s.source(), "", fmt::format("protected feature index {} is outside [0, {})", f, s.size()));
    }
    if (!seen.insert(f).second) {
      throw InputError(s.source(), "feature '" + s.feature(f).name + "'", "listed twice as protected");
    }
  }
  d.protected_inputs = s.inputs_of(protected_features);

  // Inputs (x, p'); x' = x with p replaced by p'.
  std::vector<std::string> names = s.model_input_names();
  std::vector<int> x_prime = range(0, d.width_x);
  for (std::size_t j = 0; j < d.protected_inputs.size(); ++j) {
    const int p = d.protected_inputs[j];
    names.push_back(names[static_cast<std::size_t>(p)] + "'");
    x_prime[static_cast<std::size_t>(p)] = d.width_x + static_cast<int>(j);
  }
  ModelBuilder b("dual_" + m.name, names);
  b.set_source(m.source, "dual");

  const std::optional<std::vector<int>> chain =
      form == DualForm::BlockDiagonal ? mlp_chain(m) : std::optional<std::vector<int>>();
  d.block_diagonal = chain.has_value();
  const Copies z = chain ? block_diagonal(b, m, *chain, x_prime) : duplicated(b, m, x_prime);
  d.copy1_decision_node = z.z1;
  d.copy2_decision_node = z.z2;
  d.decision_width = b.width(z.z1);

  // differ = 1 - [label(x) == label(x')], in the rule's own terms.
  const DecisionRule& rule = m.rule;
  auto entry = [&](int node, int index) { return b.width(node) == 1 ? node : b.select(node, {index}); };
  int same = -1;
  switch (rule.kind) {
    case DecisionRule::Kind::Threshold: {
      const int t = b.constant(Eigen::VectorXd::Constant(1, rule.threshold), "dual/threshold");
      const int l1 = b.binary(OpKind::Greater, entry(z.z1, rule.index), t, "dual/label");
      const int l2 = b.binary(OpKind::Greater, entry(z.z2, rule.index), t, "dual/label'");
      same = b.binary(OpKind::Equal, l1, l2, "dual/same");
      break;
    }
    case DecisionRule::Kind::ArgMax:
      same = b.binary(OpKind::Equal, b.argmax(z.z1, "dual/label"), b.argmax(z.z2, "dual/label'"), "dual/same");
      break;
    case DecisionRule::Kind::Direct: same = b.binary(OpKind::Equal, entry(z.z1, 0), entry(z.z2, 0), "dual/same"); break;
  }
  d.differ_node = b.binary(OpKind::Sub, b.constant(Eigen::VectorXd::Ones(1), "dual/one"), same, "dual/differ");

  // Output names: the logits are named after m's outputs when they match them one for one.
  std::vector<std::string> base;
  if (d.decision_width == m.output_width()) {
    base = m.output_names;
  } else {
    for (int i = 0; i < d.decision_width; ++i) base.push_back("z" + std::to_string(i));
  }
  std::vector<std::string> out_names = base;
  for (const auto& nm : base) out_names.push_back(nm + "'");
  out_names.emplace_back("differ");
  const int out = b.concat({z.z1, z.z2, d.differ_node}, "dual/output");
  d.model = b.finish(out, DecisionRule::direct(d.differ_node), std::move(out_names));
  return d;
}

Eigen::MatrixXd dual_inputs(const DualModel& d, const Eigen::MatrixXd& x, const Eigen::MatrixXd& x_prime) {
  if (x.rows() != d.width_x || x_prime.rows() != d.width_x || x.cols() != x_prime.cols()) {
    throw InputError(fmt::format("dual inputs: x is {}x{} and x' is {}x{}, expected {} rows each and equal columns",
                                 x.rows(), x.cols(), x_prime.rows(), x_prime.cols(), d.width_x));
  }
  const auto k = static_cast<Eigen::Index>(d.protected_inputs.size());
  Eigen::MatrixXd out(d.width_x + k, x.cols());
  out.topRows(d.width_x) = x;
  for (Eigen::Index j = 0; j < k; ++j) {
    out.row(d.width_x + j) = x_prime.row(d.protected_inputs[static_cast<std::size_t>(j)]);
  }
  return out;
}

}  // namespace witness
