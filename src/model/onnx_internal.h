// Private to the ONNX loader (src/model/onnx_*.cpp), not a public API: load_model and parse_onnx
// (model/loaders.h) are. The Loader class and the values, tensors and shape helpers its files share:
//
//   onnx::ModelProto mp;  // what parse_onnx parses the file's bytes into
//   witness::Model m = witness::onnx_detail::Loader("net.onnx").load(mp);
//   witness::onnx_detail::Dims d{2, 3};
//   std::string s = witness::onnx_detail::dims_str(d);  // "[2, 3]"
//   witness::Model same = witness::load_model("net.onnx");  // the public way
//
// Every ONNX value is either a constant tensor (initializers, Constant nodes and whatever folds from
// them) or a dynamic value: an IR node plus the value's per-row shape. A dynamic value either has
// the batch dimension first (`batched`) or none at all (a tensor every row shares, such as a constant
// an op could not fold); its per-row elements, in row-major order, are the IR node's vector. Shape
// ops (Identity, Flatten, Reshape, Squeeze, Unsqueeze, float Casts) only relabel that vector.
//
// Files: onnx_loader.cpp (load, op dispatch), onnx_tensor.cpp (tensors, attributes), onnx_values.cpp
// (value table, shapes, broadcasting), onnx_ops_math.cpp, onnx_ops_shape.cpp, onnx_ops_ml.cpp (ops).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/error.h"
#include "model/model.h"

namespace witness::onnx_detail {

using Dims = std::vector<std::int64_t>;
using Proto = onnx::TensorProto;

// Limits that keep hostile files from making us allocate without bound. Constant tensors must be
// backed by bytes in the file anyway; dynamic values are what a file could inflate for free.
constexpr std::int64_t kMaxElements = std::int64_t{1} << 26;  // one constant tensor
constexpr std::int64_t kMaxWidth = std::int64_t{1} << 20;     // one dynamic value (IR node width)
constexpr std::int64_t kMaxIndex = std::int64_t{1} << 62;     // integer attributes clamp here
constexpr int kMaxNodes = 1 << 20;
// The opsets the loader reads; a model importing another is refused. The default domain from 7
// (before it, Add and Gemm broadcast by attributes the loader does not read) to 23 (none of the ops
// read here changed meaning from 13 on, only their element types); ai.onnx.ml from 1 to 5.
constexpr std::int64_t kMinOpset = 7;
constexpr std::int64_t kMaxOpset = 23;
constexpr std::int64_t kMinMlOpset = 1;
constexpr std::int64_t kMaxMlOpset = 5;

struct Tensor {
  Dims dims;
  std::vector<double> data;
  bool integer = false;  // integer or bool element type
};

struct Value {
  bool is_const = false;
  Tensor c;  // when is_const

  int node = -1;  // IR node, when dynamic
  bool batched = true;
  Dims dims;             // per-row dims (after the batch dim, if any)
  bool integer = false;  // holds integers (indices, labels, booleans)
  bool boolean = false;  // holds only 0 and 1

  // Classifier outputs: the label is the argmax of rule_node, named by class_labels.
  int rule_node = -1;
  std::vector<std::string> class_labels;
  // A classifier's label output: made into IR nodes only when a node reads it (string labels
  // cannot be). label_scores is the classifier's score output, used if the label is the only output.
  bool is_label = false;
  bool label_built = false;
  int label_scores = -1;
  std::vector<std::int64_t> int_labels;
};

// Number of elements of dims, or -1 when a dim is negative or the product of the non-zero dims is
// above cap (so that no partial product of a valid shape can overflow, even with a 0 dim).
std::int64_t count_of(const Dims& dims, std::int64_t cap);
std::string dims_str(const Dims& d);
std::vector<int> iota_map(std::int64_t n);
bool is_iota(const std::vector<int>& m);
// Product of dims[from, to).
std::int64_t span_count(const Dims& d, std::size_t from, std::size_t to);
// `map` gives, for each element of an array with dims `dims`, a flat source index. Returns the map
// of the array that takes positions `sel` along `axis`. The caller has checked the result's size.
std::vector<int> take(const std::vector<int>& map, const Dims& dims, std::size_t axis,
                      const std::vector<std::int64_t>& sel);
// Map that broadcasts an array of dims `from` to dims `to` (same length; from[k] is to[k] or 1).
std::vector<int> broadcast_map(Dims from, const Dims& to);

// Element types: integer (and bool) types, and the floating-point ones.
bool integer_type(int t);
bool float_type(int t);

class Loader {
 public:
  explicit Loader(std::string path) : path_(std::move(path)) {}
  Model load(const onnx::ModelProto& mp);
  // Reads and checks the model's opset imports (ranges above; one import per domain).
  void set_opsets(const onnx::ModelProto& mp);
  // The steps of load, in order: the metadata witness reads, the graph inputs (concatenated into
  // the model's one input vector), the nodes some output or the stored rule depends on, and the
  // output with its decision rule and names.
  [[nodiscard]] std::map<std::string, nlohmann::json> read_metadata(const onnx::ModelProto& mp) const;
  void add_inputs(const onnx::GraphProto& g, const std::map<std::string, nlohmann::json>& meta);
  void convert_live_nodes(const onnx::GraphProto& g, const std::string& rule_value);
  Model finish(const onnx::GraphProto& g, std::map<std::string, nlohmann::json>& meta, const std::string& rule_value);
  [[nodiscard]] std::int64_t ml_opset() const { return ml_opset_; }

  struct Ctx {
    const onnx::NodeProto& node;
    std::string where;
  };

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw InputError(path_, where, what);
  }
  [[noreturn]] void unsupported(const std::string& where, const std::string& what) const {
    throw UnsupportedError(path_, where, what);
  }

  // --- tensors and attributes (also used by ColumnLifter) ---
  Tensor parse_tensor(const onnx::TensorProto& t, const std::string& where) const;
  const onnx::AttributeProto* attr(const Ctx& c, const char* name) const;
  std::int64_t attr_int(const Ctx& c, const char* name, std::int64_t dflt) const;
  double attr_float(const Ctx& c, const char* name, double dflt) const;
  std::string attr_string(const Ctx& c, const char* name, const std::string& dflt) const;
  std::vector<std::int64_t> attr_ints(const Ctx& c, const char* name) const;
  std::vector<double> attr_floats(const Ctx& c, const char* name) const;
  std::vector<std::string> attr_strings(const Ctx& c, const char* name) const;
  // A float list that may instead be given as a double tensor `<name>_as_tensor` (ai.onnx.ml 3 on).
  std::vector<double> attr_floats_or_tensor(const Ctx& c, const char* name) const;
  // Checked attributes; a failure names the attribute and the index of the value. attr_finite:
  // attr_floats (attr_finite_or_tensor: attr_floats_or_tensor) with every value finite, or with
  // `allow_inf` not NaN (a split threshold of +inf is how scikit-learn's HistGradientBoosting
  // sends only NaN one way).
  std::vector<double> attr_finite(const Ctx& c, const char* name, bool allow_inf = false) const;
  std::vector<double> attr_finite_or_tensor(const Ctx& c, const char* name, bool allow_inf = false) const;
  double attr_finite_float(const Ctx& c, const char* name, double dflt) const;
  void check_finite(const Ctx& c, const std::string& name, const std::vector<double>& v, bool allow_inf) const;
  std::int64_t attr_flag(const Ctx& c, const char* name, std::int64_t dflt) const;  // 0 or 1
  std::vector<std::int64_t> attr_flags(const Ctx& c, const char* name) const;       // each 0 or 1
  std::int64_t attr_int_in(const Ctx& c, const char* name, std::int64_t dflt, std::int64_t lo, std::int64_t hi) const;
  // A string attribute that must be one of `known` (InputError naming the attribute otherwise).
  std::string attr_enum(const Ctx& c, const char* name, const std::string& dflt,
                        const std::vector<std::string>& known) const;
  // ai.onnx.ml post_transform, known (NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT) or refused.
  std::string post_transform_name(const Ctx& c) const;
  std::int64_t to_int(double v, const std::string& where, const char* what) const;
  std::vector<std::int64_t> ints_of(const Tensor& t, const std::string& where, const char* what) const;
  // A STRING tensor's elements (InputError for another type).
  std::vector<std::string> parse_strings(const onnx::TensorProto& t, const std::string& where) const;

 private:
  // --- values ---
  bool has_input(const Ctx& c, int slot) const;
  Value& get(const Ctx& c, int slot);
  Value& lookup(const std::string& name, const std::string& where);
  const Tensor& get_const(const Ctx& c, int slot, const char* what);
  void set(const Ctx& c, int slot, Value v);
  Value dyn(Value& v, const std::string& where);  // the value as an IR node (constants become nodes)
  Value dynamic(std::int64_t node, bool batched, Dims dims, const std::string& where) const;
  Value constant(Tensor t, const std::string& where) const;
  Value apply_map(Value& in, const std::vector<int>& map, Dims dims, const std::string& where);
  std::int64_t norm_axis(std::int64_t axis, std::size_t rank, const std::string& where) const;

  // --- ops ---
  void convert(const Ctx& c, const std::string& domain);
  void op_elementwise(const Ctx& c, OpKind op);
  void op_where(const Ctx& c);
  void op_unary(const Ctx& c, OpKind op, double alpha = 0.0);
  void op_softmax(const Ctx& c);
  void op_gemm(const Ctx& c);
  void op_matmul(const Ctx& c);
  void op_alias(const Ctx& c);
  void op_constant(const Ctx& c);
  void op_flatten(const Ctx& c);
  void op_reshape(const Ctx& c);
  void op_squeeze(const Ctx& c, bool unsqueeze);
  void op_cast(const Ctx& c);
  void op_gather(const Ctx& c);
  void op_slice(const Ctx& c);
  void op_concat(const Ctx& c);
  void op_argmax(const Ctx& c);
  void op_tree_classifier(const Ctx& c);
  void op_tree_regressor(const Ctx& c);
  void op_tree_ensemble(const Ctx& c);
  void op_linear_classifier(const Ctx& c);
  void op_linear_regressor(const Ctx& c);
  void op_scaler(const Ctx& c);
  void op_normalizer(const Ctx& c);
  void op_zipmap(const Ctx& c);

  // Elementwise broadcasting over several operands.
  struct Broadcast {
    bool batched = false;
    Dims dims;
    std::vector<Dims> operands;  // each operand's per-row dims, left-padded with 1s
  };
  Broadcast broadcast(const std::vector<const Value*>& ops, const std::string& where) const;
  int operand_node(Value& v, const Dims& own, const Dims& result, const std::string& where);
  // The features input of an ai.onnx.ml op: a vector per row.
  Value features(const Ctx& c, int slot);
  std::shared_ptr<TreeEnsemble> build_trees(const Ctx& c, const char* prefix, int n_features) const;
  int post_transform(int raw, const Ctx& c);
  void classifier_outputs(const Ctx& c, const Value& x, int raw, int scores, std::vector<std::string> labels,
                          std::vector<std::int64_t> int_labels);
  std::vector<std::string> class_labels(const Ctx& c, const char* ints_name, std::vector<std::int64_t>& ints) const;
  void build_label(Value& v, const std::string& where);

  std::string path_;
  std::optional<ModelBuilder> b_;
  std::unordered_map<std::string, Value> values_;
  std::unordered_map<std::string, const onnx::TensorProto*> initializers_;
  // For each value, the nodes that read it (input slot), and whether it is a graph output.
  std::unordered_map<std::string, std::vector<std::pair<const onnx::NodeProto*, int>>> consumers_;
  std::unordered_set<std::string> graph_outputs_;
  std::int64_t opset_ = 13;
  std::int64_t ml_opset_ = 5;  // ai.onnx.ml; a model that imports none is taken at its newest
};

// A graph in the shape skl2onnx gives a scikit-learn Pipeline: one input per raw column (string,
// integer or float tensors) and the ai.onnx.ml preprocessing ops (Imputer, LabelEncoder,
// CategoryMapper, OneHotEncoder, Scaler, ArrayFeatureExtractor, FeatureVectorizer) before the
// classifier. ColumnLifter reads the preprocessing as the columns' encodings (model/columns.h)
// and hands the rest of the graph, from the preprocessed features on, to the Loader.
struct LiftedColumns {
  onnx::ModelProto classifier;  // inputs: the preprocessed features (float)
  std::vector<RawColumn> columns;
  std::vector<std::vector<int>> sources;  // per element of the classifier's inputs, in order
};
// Whether the graph reads raw columns: a string input, or a preprocessing op of the list above.
bool reads_raw_columns(const onnx::ModelProto& mp);
LiftedColumns lift_columns(const onnx::ModelProto& mp, const std::string& path);

}  // namespace witness::onnx_detail
