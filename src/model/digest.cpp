#include "model/digest.h"

#include "core/sha256.h"

namespace witness {
namespace {

void add_matrix(Sha256& h, const Eigen::MatrixXd& m) {
  h.add_integer(m.rows());
  h.add_integer(m.cols());
  for (Eigen::Index i = 0; i < m.size(); ++i) h.add_number(m.data()[i]);
}

void add_trees(Sha256& h, const TreeEnsemble& e) {
  h.add_integer(static_cast<std::int64_t>(e.trees.size()));
  for (const TreeEnsemble::Tree& t : e.trees) {
    h.add_integer(static_cast<std::int64_t>(t.nodes.size()));
    for (const TreeEnsemble::Node& n : t.nodes) {
      h.add_integer(static_cast<std::int64_t>(n.mode));
      h.add_integer(n.feature);
      h.add_number(n.threshold);
      h.add_integer(n.true_child);
      h.add_integer(n.false_child);
      h.add_integer(n.missing_tracks_true ? 1 : 0);
      h.add_integer(static_cast<std::int64_t>(n.members.size()));
      for (double v : n.members) h.add_number(v);
    }
    h.add_integer(static_cast<std::int64_t>(t.leaves.size()));
    for (const TreeEnsemble::Leaf& l : t.leaves) {
      h.add_integer(l.node);
      h.add_integer(l.target);
      h.add_number(l.weight);
    }
  }
  h.add_integer(e.n_targets);
  h.add_integer(static_cast<std::int64_t>(e.aggregate));
  h.add_integer(static_cast<std::int64_t>(e.base_values.size()));
  for (double v : e.base_values) h.add_number(v);
  h.add_integer(e.classifier ? 1 : 0);
  h.add_integer(e.binary_single_score ? 1 : 0);
  h.add_number(e.binary_total);
}

void add_column(Sha256& h, const RawColumn& c) {
  h.add_field(c.name);
  h.add_integer(c.categorical ? 1 : 0);
  h.add_integer(static_cast<std::int64_t>(c.categories.size()));
  for (const std::string& label : c.categories) h.add_field(label);
  h.add_integer(c.one_hot ? 1 : 0);
  h.add_integer(static_cast<std::int64_t>(c.norm.form));
  h.add_number(c.norm.a);
  h.add_number(c.norm.b);
  h.add_field(c.missing);
}

}  // namespace

std::string model_digest(const Model& model) {
  Sha256 h;
  h.add_field("witness model v1");
  h.add_integer(static_cast<std::int64_t>(model.nodes.size()));
  for (const Node& n : model.nodes) {
    h.add_integer(static_cast<std::int64_t>(n.op));
    h.add_integer(static_cast<std::int64_t>(n.inputs.size()));
    for (int i : n.inputs) h.add_integer(i);
    h.add_integer(n.width);
    add_matrix(h, n.weights);
    add_matrix(h, n.values);
    h.add_number(n.alpha);
    h.add_integer(static_cast<std::int64_t>(n.indices.size()));
    for (int i : n.indices) h.add_integer(i);
    h.add_integer(n.trees ? 1 : 0);
    if (n.trees) add_trees(h, *n.trees);
  }
  h.add_integer(model.input);
  h.add_integer(model.output);
  h.add_integer(static_cast<std::int64_t>(model.rule.kind));
  h.add_integer(model.rule.node);
  h.add_integer(model.rule.index);
  h.add_number(model.rule.threshold);
  h.add_integer(static_cast<std::int64_t>(model.columns.size()));
  for (const RawColumn& c : model.columns) add_column(h, c);
  return h.hex();
}

}  // namespace witness
