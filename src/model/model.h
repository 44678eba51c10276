// The model IR: a small DAG of typed ops over real vectors, with one input vector, one output
// vector and a decision rule that turns values into a label.
//
//   witness::ModelBuilder b("tiny", {"x0", "x1"});
//   Eigen::MatrixXd W(3, 2), W2(1, 3);               // [out][in]
//   W << 1, -1, 0.5, 2, -1, 1;  W2 << 1, 1, -2;
//   int h = b.dense(b.input(), W, Eigen::VectorXd::Zero(3));
//   int z = b.dense(b.relu(h), W2, Eigen::VectorXd::Constant(1, -0.5));   // one logit
//   witness::Model m = b.finish(b.sigmoid(z), witness::DecisionRule::threshold_on(z, 0.0));
//   // label(x) = 1 iff z(x) > 0, i.e. sigmoid(z) > 0.5
//
// Every node's value is a vector of `width` reals; nodes are stored in topological order, so a
// node only reads nodes with smaller ids. Loaders build models with ModelBuilder, which checks
// shapes and rejects non-finite weights.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/raw_column.h"

namespace witness {

enum class OpKind : std::uint8_t {
  Input,     // the model input vector
  Constant,  // a constant vector (`values`)
  Dense,     // W x + b  (Gemm, MatMul with a constant, Keras Dense)
  Add,       // elementwise; a width-1 operand broadcasts
  Sub,
  Mul,
  Div,
  Relu,
  LeakyRelu,  // x > 0 ? x : alpha x
  Sigmoid,
  Tanh,
  Softmax,
  Identity,  // also Flatten/Reshape of a vector
  Less,      // comparisons give 1.0 or 0.0
  LessEqual,
  Greater,
  GreaterEqual,
  Equal,
  Where,   // inputs (cond, a, b): cond != 0 ? a : b, elementwise
  Select,  // out[i] = in[indices[i]]  (Gather with constant indices, Slice)
  Lookup,  // inputs (index): out = table row trunc(index), negative from the end, as ONNX Gather(Cast)
  Concat,
  ArgMax,  // index of the largest entry, ties to the lowest index
  TreeEnsemble,
};

// Decision trees and forests (ONNX ai.onnx.ml TreeEnsembleClassifier / Regressor).
struct TreeEnsemble {
  // Member: true when the value is one of `members` (categorical splits: LightGBM, scikit-learn's
  // HistGradientBoosting, ONNX ai.onnx.ml 5 BRANCH_MEMBER).
  enum class Mode : std::uint8_t { Leaf, Leq, Lt, Geq, Gt, Eq, Neq, Member };
  enum class Aggregate : std::uint8_t { Sum, Average, Min, Max };
  struct Node {
    Mode mode = Mode::Leaf;
    int feature = 0;  // input coordinate compared
    double threshold = 0.0;
    int true_child = -1;  // index into the tree's nodes
    int false_child = -1;
    bool missing_tracks_true = false;
    std::vector<double> members;  // Member: the values that go true, sorted, finite
  };
  struct Leaf {  // contribution of a leaf to one output
    int node = 0;
    int target = 0;
    double weight = 0.0;
  };
  struct Tree {
    std::vector<Node> nodes;  // nodes[0] is the root
    std::vector<Leaf> leaves;
    // Once built (ModelBuilder::tree_ensemble), `leaves` is sorted by node (stably, so a node's
    // weights keep their order) and node i's weights are leaves[leaf_begin[i] .. leaf_begin[i+1]):
    // a forest of thousands of leaves is evaluated without scanning them all.
    std::vector<int> leaf_begin;

    [[nodiscard]] std::span<const Leaf> leaves_of(int node) const {
      const auto i = static_cast<std::size_t>(node);
      return {leaves.data() + leaf_begin[i], leaves.data() + leaf_begin[i + 1]};
    }
  };
  std::vector<Tree> trees;
  int n_targets = 1;  // outputs: classes (classifier) or targets (regressor)
  Aggregate aggregate = Aggregate::Sum;
  std::vector<double> base_values;  // empty or n_targets values
  bool classifier = false;
  // Binary classifier with weights for class 1 only: outputs [binary_total - s, s], as ONNX
  // runtimes do (binary_total is 1 for probability-like leaf weights, 0 for margins).
  bool binary_single_score = false;
  double binary_total = 0.0;

  // Index of the leaf reached from `x` in tree t (a node index).
  [[nodiscard]] int leaf_of(int t, const double* x, std::ptrdiff_t stride) const;
};

struct Node {
  OpKind op = OpKind::Identity;
  std::string name;         // from the source file, for messages
  std::vector<int> inputs;  // node ids
  int width = 0;            // length of the value vector

  Eigen::MatrixXd weights;                    // Dense: [width][input width]; Lookup: [rows][width]
  Eigen::VectorXd values;                     // Constant values; Dense bias
  double alpha = 0.0;                         // LeakyRelu slope
  std::vector<int> indices;                   // Select
  std::shared_ptr<const TreeEnsemble> trees;  // TreeEnsemble
};

// How outputs become a label. Threshold: label 1 iff value[node][index] > threshold.
// ArgMax: label = argmax over value[node] (ties -> lowest index). Direct: value[node][0] is the
// label already (a model whose output is a class index).
struct DecisionRule {
  enum class Kind : std::uint8_t { Threshold, ArgMax, Direct };
  Kind kind = Kind::Threshold;
  int node = -1;
  int index = 0;
  double threshold = 0.0;
  std::vector<std::string> class_labels;  // display names; empty means 0, 1, ...

  static DecisionRule threshold_on(int node, double t, int index = 0);
  static DecisionRule argmax_of(int node);
  static DecisionRule direct(int node);
  [[nodiscard]] std::string describe() const;
};

class Model {
 public:
  std::string name;
  std::string source;       // file it was loaded from
  std::string format;       // "mlp-json-v1", "keras-h5", "onnx", "nnet"
  std::vector<Node> nodes;  // topological order; nodes[input] is OpKind::Input
  int input = 0;
  int output = 0;
  std::vector<std::string> input_names;   // one per input coordinate
  std::vector<std::string> output_names;  // one per output coordinate
  DecisionRule rule;
  // [min, max] per input coordinate where the file declares them (.nnet), else empty. Only shown
  // (`witness info`): witness evaluates inputs outside them as they are, never clipped.
  std::vector<std::pair<double, double>> input_bounds;
  // The raw columns the inputs come from, when the model carries its preprocessing (a scikit-learn
  // Pipeline, a skl2onnx graph): their inputs in order are the model's (model/columns.h). Empty:
  // the inputs are the values a schema describes.
  std::vector<RawColumn> columns;

  [[nodiscard]] int input_width() const { return nodes[input].width; }
  [[nodiscard]] int output_width() const { return nodes[output].width; }
  // Throws InternalError when the graph breaks an invariant (ids, widths, order).
  void validate() const;
};

// Builds a Model node by node, checking shapes and finiteness as it goes. Each method returns the
// new node's id. `where` names the source element (layer, ONNX node) for error messages.
class ModelBuilder {
 public:
  ModelBuilder(std::string name, std::vector<std::string> input_names);
  void set_source(std::string file, std::string format);

  [[nodiscard]] int input() const { return 0; }
  int constant(Eigen::VectorXd values, const std::string& where = {});
  int dense(int x, Eigen::MatrixXd weights, Eigen::VectorXd bias, const std::string& where = {});
  int unary(OpKind op, int x, const std::string& where = {}, double alpha = 0.0);
  int binary(OpKind op, int a, int b, const std::string& where = {});
  int where(int cond, int a, int b, const std::string& where = {});
  int select(int x, std::vector<int> indices, const std::string& where = {});
  int lookup(int index, Eigen::MatrixXd table, const std::string& where = {});
  int concat(const std::vector<int>& parts, const std::string& where = {});
  int argmax(int x, const std::string& where = {});
  int tree_ensemble(int x, std::shared_ptr<const TreeEnsemble> trees, const std::string& where = {});
  // A copy of `n` (from any model) reading `inputs`, ids of this builder.
  int copy_node(const Node& n, const std::vector<int>& inputs, const std::string& where);
  int relu(int x, const std::string& where = {}) { return unary(OpKind::Relu, x, where); }
  int sigmoid(int x, const std::string& where = {}) { return unary(OpKind::Sigmoid, x, where); }

  [[nodiscard]] int width(int node) const;
  [[nodiscard]] const Node& node(int id) const;
  // Finishes the model; output names default to y0, y1, ...
  Model finish(int output, DecisionRule rule, std::vector<std::string> output_names = {});

 private:
  int add(Node n);
  void check_id(int id, const std::string& where) const;
  [[noreturn]] void fail(const std::string& where, const std::string& what) const;
  Model model_;
};

[[nodiscard]] const char* op_name(OpKind op);
// A node as messages name it: "node 'dense_1'" (loaders that already wrote "node '...'" or
// "layer ..." as its name keep it), or "node #3" without a name.
[[nodiscard]] std::string node_label(const Node& n, std::size_t id);
// The index of the model's one tree-ensemble node; -1, with the reason in `why`, when it has none or
// several (the tree engines read one ensemble).
[[nodiscard]] int single_tree_ensemble(const Model& m, std::string& why);
// Add, Sub, Mul, Div and the comparisons: two inputs, elementwise, width-1 operands broadcast.
[[nodiscard]] bool is_elementwise_binary(OpKind op);
// Relu, LeakyRelu, Sigmoid, Tanh, Softmax, Identity: one input, same width.
[[nodiscard]] bool is_unary(OpKind op);

// The default rule for a network's output node: one output -> threshold on the logit (looking
// through a final Sigmoid: sigmoid(z) > 0.5 iff z > 0); several -> argmax (through a final Softmax).
[[nodiscard]] DecisionRule default_rule(const Model& m);

}  // namespace witness
