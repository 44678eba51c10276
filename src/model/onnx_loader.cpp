// ONNX loader: onnx::ModelProto -> model IR.
//
// Every ONNX value is either a constant tensor (initializers, Constant nodes and whatever folds from
// them) or a dynamic value: an IR node plus the value's per-row shape. A dynamic value either has
// the batch dimension first (`batched`) or none at all (a tensor every row shares, such as a constant
// an op could not fold); its per-row elements, in row-major order, are the IR node's vector. Shape
// ops (Identity, Flatten, Reshape, Squeeze, Unsqueeze, float Casts) only relabel that vector.
#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "model/loaders.h"

namespace witness {
namespace {

static_assert(std::endian::native == std::endian::little, "raw ONNX tensor data is little-endian");

using Dims = std::vector<std::int64_t>;
using Proto = onnx::TensorProto;

// Limits that keep hostile files from making us allocate without bound. Constant tensors must be
// backed by bytes in the file anyway; dynamic values are what a file could inflate for free.
constexpr std::int64_t kMaxElements = std::int64_t{1} << 26;  // one constant tensor
constexpr std::int64_t kMaxWidth = std::int64_t{1} << 20;     // one dynamic value (IR node width)
constexpr std::int64_t kMaxIndex = std::int64_t{1} << 62;     // integer attributes clamp here
constexpr int kMaxNodes = 1 << 20;

// Metadata written by save_onnx so that a round trip keeps the decision rule and the names.
constexpr const char* kMetaRule = "witness.rule";
constexpr const char* kMetaLabels = "witness.class_labels";
constexpr const char* kMetaInputs = "witness.input_names";
constexpr const char* kMetaOutputs = "witness.output_names";

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
std::int64_t count_of(const Dims& dims, std::int64_t cap) {
  std::int64_t n = 1;
  bool empty = false;
  for (const std::int64_t d : dims) {
    if (d < 0 || d > cap) return -1;
    if (d == 0) {
      empty = true;
      continue;
    }
    if (n > cap / d) return -1;
    n *= d;
  }
  return empty ? 0 : n;
}

std::string dims_str(const Dims& d) { return fmt::format("[{}]", fmt::join(d, ", ")); }

std::vector<int> iota_map(std::int64_t n) {
  std::vector<int> m(static_cast<std::size_t>(n));
  std::iota(m.begin(), m.end(), 0);
  return m;
}

bool is_iota(const std::vector<int>& m) {
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (m[i] != static_cast<int>(i)) return false;
  }
  return true;
}

// Product of dims[from, to).
std::int64_t span_count(const Dims& d, std::size_t from, std::size_t to) {
  std::int64_t n = 1;
  for (std::size_t i = from; i < to; ++i) n *= d[i];
  return n;
}

// `map` gives, for each element of an array with dims `dims`, a flat source index. Returns the map
// of the array that takes positions `sel` along `axis`. The caller has checked the result's size.
std::vector<int> take(const std::vector<int>& map, const Dims& dims, std::size_t axis,
                      const std::vector<std::int64_t>& sel) {
  const std::int64_t outer = span_count(dims, 0, axis);
  const std::int64_t inner = span_count(dims, axis + 1, dims.size());
  std::vector<int> out;
  if (outer == 0 || inner == 0 || sel.empty()) return out;
  out.reserve(static_cast<std::size_t>(outer * inner) * sel.size());
  for (std::int64_t o = 0; o < outer; ++o) {
    for (const std::int64_t s : sel) {
      for (std::int64_t i = 0; i < inner; ++i) {
        out.push_back(map[static_cast<std::size_t>((o * dims[axis] + s) * inner + i)]);
      }
    }
  }
  return out;
}

// Map that broadcasts an array of dims `from` to dims `to` (same length; from[k] is to[k] or 1).
std::vector<int> broadcast_map(Dims from, const Dims& to) {
  std::vector<int> map = iota_map(count_of(from, kMaxElements));
  for (std::size_t k = 0; k < to.size(); ++k) {
    if (from[k] == to[k]) continue;
    map = take(map, from, k, std::vector<std::int64_t>(static_cast<std::size_t>(to[k]), 0));
    from[k] = to[k];
  }
  return map;
}

double half_to_double(std::uint16_t h) {
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  double v = 0.0;
  if (exp == 0) {
    v = std::ldexp(mant, -24);
  } else if (exp == 31) {
    v = mant == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else {
    v = std::ldexp(mant + 1024, exp - 25);
  }
  return (h & 0x8000) != 0 ? -v : v;
}

double bfloat16_to_double(std::uint16_t h) {
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float f = 0.0F;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

template <typename T>
void read_raw(const std::string& raw, std::vector<double>& out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    T v{};
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    out[i] = static_cast<double>(v);
  }
}

bool integer_type(int t) {
  switch (t) {
    case Proto::INT8:
    case Proto::INT16:
    case Proto::INT32:
    case Proto::INT64:
    case Proto::UINT8:
    case Proto::UINT16:
    case Proto::UINT32:
    case Proto::UINT64:
    case Proto::BOOL: return true;
    default: return false;
  }
}

bool float_type(int t) {
  return t == Proto::FLOAT || t == Proto::DOUBLE || t == Proto::FLOAT16 || t == Proto::BFLOAT16;
}

class Loader {
 public:
  explicit Loader(std::string path) : path_(std::move(path)) {}
  Model load(const onnx::ModelProto& mp);

 private:
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

  // --- tensors and attributes ---
  Tensor parse_tensor(const onnx::TensorProto& t, const std::string& where) const;
  const onnx::AttributeProto* attr(const Ctx& c, const char* name) const;
  std::int64_t attr_int(const Ctx& c, const char* name, std::int64_t dflt) const;
  double attr_float(const Ctx& c, const char* name, double dflt) const;
  std::string attr_string(const Ctx& c, const char* name, const std::string& dflt) const;
  std::vector<std::int64_t> attr_ints(const Ctx& c, const char* name) const;
  std::vector<double> attr_floats(const Ctx& c, const char* name) const;
  std::vector<std::string> attr_strings(const Ctx& c, const char* name) const;
  // A float list that may instead be given as a double tensor `<name>_as_tensor`.
  std::vector<double> attr_floats_or_tensor(const Ctx& c, const char* name) const;
  std::int64_t to_int(double v, const std::string& where, const char* what) const;
  std::vector<std::int64_t> ints_of(const Tensor& t, const std::string& where, const char* what) const;

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
  void op_linear_classifier(const Ctx& c);
  void op_linear_regressor(const Ctx& c);
  void op_scaler(const Ctx& c);

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
  std::shared_ptr<TreeEnsemble> build_trees(const Ctx& c, const char* prefix, int n_features);
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
};

// ---------------------------------------------------------------------------------------------
// Tensors and attributes

Tensor Loader::parse_tensor(const onnx::TensorProto& t, const std::string& where) const {
  const std::string what = t.name().empty() ? std::string("tensor") : fmt::format("tensor '{}'", t.name());
  if (t.data_location() == Proto::EXTERNAL || t.external_data_size() > 0) {
    unsupported(where, what + " keeps its data in an external file; external data is not supported");
  }
  if (t.has_segment()) unsupported(where, what + " is segmented; segmented tensors are not supported");
  Tensor out;
  out.dims.assign(t.dims().begin(), t.dims().end());
  const std::int64_t n = count_of(out.dims, kMaxElements);
  if (n < 0) fail(where, fmt::format("{} has dims {}: negative or too large", what, dims_str(out.dims)));
  const auto count = static_cast<std::size_t>(n);
  const int type = t.data_type();
  std::size_t width = 0;  // bytes per element in raw_data
  switch (type) {
    case Proto::FLOAT:
    case Proto::INT32:
    case Proto::UINT32: width = 4; break;
    case Proto::DOUBLE:
    case Proto::INT64:
    case Proto::UINT64: width = 8; break;
    case Proto::INT16:
    case Proto::UINT16:
    case Proto::FLOAT16:
    case Proto::BFLOAT16: width = 2; break;
    case Proto::INT8:
    case Proto::UINT8:
    case Proto::BOOL: width = 1; break;
    default: unsupported(where, fmt::format("{} has element type {}; expected a numeric type", what, type));
  }
  out.integer = integer_type(type);
  // Sizes are checked before allocating, so a tensor costs at most a few times its bytes in the file.
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (raw.size() != count * width) {
      fail(where, fmt::format("{} has {} bytes of raw data, expected {} for dims {}", what, raw.size(), count * width,
                              dims_str(out.dims)));
    }
    out.data.resize(count);
    switch (type) {
      case Proto::FLOAT: read_raw<float>(raw, out.data); break;
      case Proto::DOUBLE: read_raw<double>(raw, out.data); break;
      case Proto::INT64: read_raw<std::int64_t>(raw, out.data); break;
      case Proto::UINT64: read_raw<std::uint64_t>(raw, out.data); break;
      case Proto::INT32: read_raw<std::int32_t>(raw, out.data); break;
      case Proto::UINT32: read_raw<std::uint32_t>(raw, out.data); break;
      case Proto::INT16: read_raw<std::int16_t>(raw, out.data); break;
      case Proto::UINT16: read_raw<std::uint16_t>(raw, out.data); break;
      case Proto::INT8: read_raw<std::int8_t>(raw, out.data); break;
      case Proto::UINT8: read_raw<std::uint8_t>(raw, out.data); break;
      case Proto::BOOL:
        read_raw<std::uint8_t>(raw, out.data);
        for (double& v : out.data) v = v != 0.0 ? 1.0 : 0.0;
        break;
      case Proto::FLOAT16:
      case Proto::BFLOAT16:
        for (std::size_t i = 0; i < count; ++i) {
          std::uint16_t h = 0;
          std::memcpy(&h, raw.data() + 2 * i, 2);
          out.data[i] = type == Proto::FLOAT16 ? half_to_double(h) : bfloat16_to_double(h);
        }
        break;
      default: break;
    }
    return out;
  }
  auto check = [&](int have) {
    if (static_cast<std::size_t>(have) != count) {
      fail(where, fmt::format("{} has {} values, expected {} for dims {}", what, have, count, dims_str(out.dims)));
    }
    out.data.resize(count);
  };
  switch (type) {
    case Proto::FLOAT:
      check(t.float_data_size());
      for (std::size_t i = 0; i < count; ++i) out.data[i] = t.float_data(static_cast<int>(i));
      break;
    case Proto::DOUBLE:
      check(t.double_data_size());
      for (std::size_t i = 0; i < count; ++i) out.data[i] = t.double_data(static_cast<int>(i));
      break;
    case Proto::INT64:
      check(t.int64_data_size());
      for (std::size_t i = 0; i < count; ++i) out.data[i] = static_cast<double>(t.int64_data(static_cast<int>(i)));
      break;
    case Proto::UINT32:
    case Proto::UINT64:
      check(t.uint64_data_size());
      for (std::size_t i = 0; i < count; ++i) out.data[i] = static_cast<double>(t.uint64_data(static_cast<int>(i)));
      break;
    default:  // the small types all live in int32_data
      check(t.int32_data_size());
      for (std::size_t i = 0; i < count; ++i) {
        const std::int32_t v = t.int32_data(static_cast<int>(i));
        if (type == Proto::FLOAT16) {
          out.data[i] = half_to_double(static_cast<std::uint16_t>(v));
        } else if (type == Proto::BFLOAT16) {
          out.data[i] = bfloat16_to_double(static_cast<std::uint16_t>(v));
        } else if (type == Proto::BOOL) {
          out.data[i] = v != 0 ? 1.0 : 0.0;
        } else {
          out.data[i] = v;
        }
      }
      break;
  }
  return out;
}

const onnx::AttributeProto* Loader::attr(const Ctx& c, const char* name) const {
  for (const auto& a : c.node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

std::int64_t Loader::attr_int(const Ctx& c, const char* name, std::int64_t dflt) const {
  const auto* a = attr(c, name);
  if (a == nullptr) return dflt;
  if (a->type() != onnx::AttributeProto::INT && !(a->type() == onnx::AttributeProto::UNDEFINED && a->has_i())) {
    fail(c.where, fmt::format("attribute '{}' must be an integer", name));
  }
  return a->i();
}

double Loader::attr_float(const Ctx& c, const char* name, double dflt) const {
  const auto* a = attr(c, name);
  if (a == nullptr) return dflt;
  if (a->type() != onnx::AttributeProto::FLOAT && !(a->type() == onnx::AttributeProto::UNDEFINED && a->has_f())) {
    fail(c.where, fmt::format("attribute '{}' must be a float", name));
  }
  return a->f();
}

std::string Loader::attr_string(const Ctx& c, const char* name, const std::string& dflt) const {
  const auto* a = attr(c, name);
  if (a == nullptr) return dflt;
  if (a->type() != onnx::AttributeProto::STRING && !(a->type() == onnx::AttributeProto::UNDEFINED && a->has_s())) {
    fail(c.where, fmt::format("attribute '{}' must be a string", name));
  }
  return a->s();
}

std::vector<std::int64_t> Loader::attr_ints(const Ctx& c, const char* name) const {
  const auto* a = attr(c, name);
  if (a == nullptr) return {};
  if (a->type() != onnx::AttributeProto::INTS && a->type() != onnx::AttributeProto::UNDEFINED) {
    fail(c.where, fmt::format("attribute '{}' must be a list of integers", name));
  }
  return {a->ints().begin(), a->ints().end()};
}

std::vector<double> Loader::attr_floats(const Ctx& c, const char* name) const {
  const auto* a = attr(c, name);
  if (a == nullptr) return {};
  if (a->type() != onnx::AttributeProto::FLOATS && a->type() != onnx::AttributeProto::UNDEFINED) {
    fail(c.where, fmt::format("attribute '{}' must be a list of floats", name));
  }
  return {a->floats().begin(), a->floats().end()};
}

std::vector<std::string> Loader::attr_strings(const Ctx& c, const char* name) const {
  const auto* a = attr(c, name);
  if (a == nullptr) return {};
  if (a->type() != onnx::AttributeProto::STRINGS && a->type() != onnx::AttributeProto::UNDEFINED) {
    fail(c.where, fmt::format("attribute '{}' must be a list of strings", name));
  }
  return {a->strings().begin(), a->strings().end()};
}

std::vector<double> Loader::attr_floats_or_tensor(const Ctx& c, const char* name) const {
  const std::string tname = std::string(name) + "_as_tensor";
  if (const auto* a = attr(c, tname.c_str()); a != nullptr) {
    if (a->type() != onnx::AttributeProto::TENSOR && !(a->type() == onnx::AttributeProto::UNDEFINED && a->has_t())) {
      fail(c.where, fmt::format("attribute '{}' must be a tensor", tname));
    }
    return parse_tensor(a->t(), c.where + " attribute '" + tname + "'").data;
  }
  return attr_floats(c, name);
}

std::int64_t Loader::to_int(double v, const std::string& where, const char* what) const {
  if (std::isnan(v) || v != std::floor(v)) fail(where, fmt::format("{} must be integers, got {}", what, v));
  // Clamping is harmless: no dimension comes near 2^62, and INT64_MAX is a common "to the end".
  if (v >= static_cast<double>(kMaxIndex)) return kMaxIndex;
  if (v <= -static_cast<double>(kMaxIndex)) return -kMaxIndex;
  return static_cast<std::int64_t>(v);
}

std::vector<std::int64_t> Loader::ints_of(const Tensor& t, const std::string& where, const char* what) const {
  std::vector<std::int64_t> out;
  out.reserve(t.data.size());
  for (const double v : t.data) out.push_back(to_int(v, where, what));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Values

bool Loader::has_input(const Ctx& c, int slot) const {
  return slot < c.node.input_size() && !c.node.input(slot).empty();
}

Value& Loader::lookup(const std::string& name, const std::string& where) {
  if (const auto it = values_.find(name); it != values_.end()) return it->second;
  if (const auto it = initializers_.find(name); it != initializers_.end()) {
    Value v;
    v.is_const = true;
    v.c = parse_tensor(*it->second, fmt::format("initializer '{}'", name));
    v.integer = v.c.integer;
    return values_.emplace(name, std::move(v)).first->second;
  }
  fail(where, fmt::format("reads '{}', which no earlier node, initializer or graph input defines", name));
}

Value& Loader::get(const Ctx& c, int slot) {
  if (!has_input(c, slot)) fail(c.where, fmt::format("input {} is missing", slot));
  return lookup(c.node.input(slot), c.where);
}

const Tensor& Loader::get_const(const Ctx& c, int slot, const char* what) {
  Value& v = get(c, slot);
  if (!v.is_const) unsupported(c.where, fmt::format("{} (input {}) must be a constant", what, slot));
  return v.c;
}

void Loader::set(const Ctx& c, int slot, Value v) {
  if (slot >= c.node.output_size() || c.node.output(slot).empty()) return;
  const std::string& name = c.node.output(slot);
  if (values_.count(name) != 0 || initializers_.count(name) != 0) {
    fail(c.where, fmt::format("redefines value '{}'", name));
  }
  values_.emplace(name, std::move(v));
}

Value Loader::dynamic(std::int64_t node, bool batched, Dims dims, const std::string& where) const {
  if (count_of(dims, kMaxWidth) < 0) {
    fail(where, fmt::format("produces per-row shape {}, which is too large", dims_str(dims)));
  }
  Value v;
  v.node = static_cast<int>(node);
  v.batched = batched;
  v.dims = std::move(dims);
  return v;
}

Value Loader::constant(Tensor t, const std::string& where) const {
  if (count_of(t.dims, kMaxElements) < 0) fail(where, fmt::format("constant shape {} is too large", dims_str(t.dims)));
  Value v;
  v.is_const = true;
  v.integer = t.integer;
  v.boolean = false;
  v.c = std::move(t);
  return v;
}

void Loader::build_label(Value& v, const std::string& where) {
  if (v.int_labels.empty()) {
    unsupported(where, "reads a classifier's string labels; only integer labels can feed other nodes");
  }
  const int am = b_->argmax(v.rule_node, where);
  bool identity = true;
  for (std::size_t i = 0; i < v.int_labels.size(); ++i) identity = identity && v.int_labels[i] == static_cast<int>(i);
  v.node = am;
  if (!identity) {
    Eigen::MatrixXd table(static_cast<Eigen::Index>(v.int_labels.size()), 1);
    for (std::size_t i = 0; i < v.int_labels.size(); ++i) {
      table(static_cast<Eigen::Index>(i), 0) = static_cast<double>(v.int_labels[i]);
    }
    v.node = b_->lookup(am, std::move(table), where);
  }
  v.label_built = true;
}

Value Loader::dyn(Value& v, const std::string& where) {
  if (v.is_label && !v.label_built) build_label(v, where);
  if (!v.is_const) return v;
  // A constant becomes a Constant node without a batch dim: every row sees the same tensor.
  if (count_of(v.c.dims, kMaxWidth) < 0) {
    fail(where, fmt::format("constant of shape {} is too large to use as a vector", dims_str(v.c.dims)));
  }
  Eigen::VectorXd values =
      Eigen::Map<const Eigen::VectorXd>(v.c.data.data(), static_cast<Eigen::Index>(v.c.data.size()));
  Value out = dynamic(b_->constant(std::move(values), where), false, v.c.dims, where);
  out.integer = v.c.integer;
  return out;
}

Value Loader::apply_map(Value& in, const std::vector<int>& map, Dims dims, const std::string& where) {
  if (in.is_const) {
    Tensor t;
    t.dims = std::move(dims);
    t.integer = in.c.integer;
    t.data.reserve(map.size());
    for (const int i : map) t.data.push_back(in.c.data[static_cast<std::size_t>(i)]);
    return constant(std::move(t), where);
  }
  const Value d = dyn(in, where);
  if (count_of(dims, kMaxWidth) < 0) fail(where, fmt::format("produces per-row shape {}", dims_str(dims)));
  Value out = d;
  out.rule_node = -1;
  out.class_labels.clear();
  out.is_label = false;
  if (!is_iota(map) || static_cast<std::int64_t>(map.size()) != b_->width(d.node)) {
    out.node = b_->select(d.node, map, where);
  }
  out.dims = std::move(dims);
  return out;
}

std::int64_t Loader::norm_axis(std::int64_t axis, std::size_t rank, const std::string& where) const {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r) fail(where, fmt::format("axis {} is out of range for rank {}", axis, r));
  return axis < 0 ? axis + r : axis;
}

// ---------------------------------------------------------------------------------------------
// Elementwise ops

Loader::Broadcast Loader::broadcast(const std::vector<const Value*>& ops, const std::string& where) const {
  Broadcast bc;
  std::size_t rank = 0;  // full rank of the batched operands
  for (const Value* v : ops) {
    if (!v->is_const && v->batched) {
      const std::size_t r = v->dims.size() + 1;
      if (bc.batched && r != rank) {
        unsupported(where,
                    fmt::format("operands of ranks {} and {} would not keep the batch dimension first", rank, r));
      }
      bc.batched = true;
      rank = r;
    }
  }
  for (const Value* v : ops) {
    Dims d = v->is_const ? v->c.dims : v->dims;
    if (bc.batched && (v->is_const || !v->batched)) {
      // Aligned from the right against [N, ...]: a leading dim facing N must be 1.
      if (d.size() > rank) {
        unsupported(where, fmt::format("a constant of shape {} would move the batch dimension", dims_str(d)));
      }
      if (d.size() == rank) {
        if (d[0] != 1) {
          fail(where, fmt::format("operand of shape {} does not broadcast against the batch dimension", dims_str(d)));
        }
        d.erase(d.begin());
      }
    }
    bc.operands.push_back(std::move(d));
  }
  std::size_t len = 0;
  for (const Dims& d : bc.operands) len = std::max(len, d.size());
  bc.dims.assign(len, 1);
  for (Dims& d : bc.operands) {
    d.insert(d.begin(), len - d.size(), 1);
    for (std::size_t k = 0; k < len; ++k) {
      if (d[k] == bc.dims[k] || d[k] == 1) continue;
      if (bc.dims[k] != 1) {
        std::vector<std::string> shapes;
        for (const Dims& e : bc.operands) shapes.push_back(dims_str(e));
        fail(where, fmt::format("operand shapes {} do not broadcast", fmt::join(shapes, " and ")));
      }
      bc.dims[k] = d[k];
    }
  }
  // Folding constants may not inflate them beyond their own size (an outer product of two small
  // constants would cost nothing in the file).
  std::int64_t cap = kMaxWidth;
  for (const Value* v : ops) {
    if (v->is_const) cap = std::max(cap, static_cast<std::int64_t>(v->c.data.size()));
  }
  if (count_of(bc.dims, cap) < 0) fail(where, fmt::format("result shape {} is too large", dims_str(bc.dims)));
  return bc;
}

int Loader::operand_node(Value& v, const Dims& own, const Dims& result, const std::string& where) {
  const std::int64_t own_count = count_of(own, kMaxElements);
  if (v.is_const) {
    std::vector<double> data = v.c.data;
    if (own_count != 1 && own != result) {
      const std::vector<int> map = broadcast_map(own, result);
      data.clear();
      for (const int i : map) data.push_back(v.c.data[static_cast<std::size_t>(i)]);
    }
    return b_->constant(Eigen::Map<const Eigen::VectorXd>(data.data(), static_cast<Eigen::Index>(data.size())), where);
  }
  const Value d = dyn(v, where);
  if (own_count == 1 || own == result) return d.node;
  return b_->select(d.node, broadcast_map(own, result), where);
}

double apply_binary(OpKind op, double a, double b, bool integer) {
  switch (op) {
    case OpKind::Add: return a + b;
    case OpKind::Sub: return a - b;
    case OpKind::Mul: return a * b;
    case OpKind::Div: return integer ? std::trunc(a / b) : a / b;  // ONNX integer Div truncates
    case OpKind::Less: return a < b ? 1.0 : 0.0;
    case OpKind::LessEqual: return a <= b ? 1.0 : 0.0;
    case OpKind::Greater: return a > b ? 1.0 : 0.0;
    case OpKind::GreaterEqual: return a >= b ? 1.0 : 0.0;
    case OpKind::Equal: return a == b ? 1.0 : 0.0;
    default: return 0.0;
  }
}

bool is_comparison(OpKind op) {
  return op == OpKind::Less || op == OpKind::LessEqual || op == OpKind::Greater || op == OpKind::GreaterEqual ||
         op == OpKind::Equal;
}

void Loader::op_elementwise(const Ctx& c, OpKind op) {
  Value& a = get(c, 0);
  Value& b = get(c, 1);
  const Broadcast bc = broadcast({&a, &b}, c.where);
  const bool cmp = is_comparison(op);
  if (a.is_const && b.is_const) {
    const bool integer = a.c.integer && b.c.integer;
    if (op == OpKind::Div && integer) {
      for (const double v : b.c.data) {
        if (v == 0.0) fail(c.where, "integer division by zero");
      }
    }
    const std::vector<int> ma = broadcast_map(bc.operands[0], bc.dims);
    const std::vector<int> mb = broadcast_map(bc.operands[1], bc.dims);
    Tensor t;
    t.dims = bc.dims;
    t.integer = cmp || integer;
    for (std::size_t i = 0; i < ma.size(); ++i) {
      t.data.push_back(apply_binary(op, a.c.data[static_cast<std::size_t>(ma[i])],
                                    b.c.data[static_cast<std::size_t>(mb[i])], integer));
    }
    set(c, 0, constant(std::move(t), c.where));
    return;
  }
  const bool integer = a.integer && b.integer && op != OpKind::Div;
  const int ia = operand_node(a, bc.operands[0], bc.dims, c.where);
  const int ib = operand_node(b, bc.operands[1], bc.dims, c.where);
  Value out = dynamic(b_->binary(op, ia, ib, c.where), bc.batched, bc.dims, c.where);
  out.integer = cmp || integer;
  out.boolean = cmp;
  set(c, 0, std::move(out));
}

void Loader::op_where(const Ctx& c) {
  Value& cond = get(c, 0);
  Value& a = get(c, 1);
  Value& b = get(c, 2);
  const Broadcast bc = broadcast({&cond, &a, &b}, c.where);
  if (cond.is_const && a.is_const && b.is_const) {
    const std::vector<int> mc = broadcast_map(bc.operands[0], bc.dims);
    const std::vector<int> ma = broadcast_map(bc.operands[1], bc.dims);
    const std::vector<int> mb = broadcast_map(bc.operands[2], bc.dims);
    Tensor t;
    t.dims = bc.dims;
    t.integer = a.c.integer && b.c.integer;
    for (std::size_t i = 0; i < mc.size(); ++i) {
      const bool k = cond.c.data[static_cast<std::size_t>(mc[i])] != 0.0;
      t.data.push_back(k ? a.c.data[static_cast<std::size_t>(ma[i])] : b.c.data[static_cast<std::size_t>(mb[i])]);
    }
    set(c, 0, constant(std::move(t), c.where));
    return;
  }
  const int ic = operand_node(cond, bc.operands[0], bc.dims, c.where);
  const int ia = operand_node(a, bc.operands[1], bc.dims, c.where);
  const int ib = operand_node(b, bc.operands[2], bc.dims, c.where);
  Value out = dynamic(b_->where(ic, ia, ib, c.where), bc.batched, bc.dims, c.where);
  out.integer = a.integer && b.integer;
  out.boolean = a.boolean && b.boolean;
  set(c, 0, std::move(out));
}

void Loader::op_unary(const Ctx& c, OpKind op, double alpha) {
  const Value x = dyn(get(c, 0), c.where);
  set(c, 0, dynamic(b_->unary(op, x.node, c.where, alpha), x.batched, x.dims, c.where));
}

// The IR's Softmax and ArgMax work on the whole per-row vector: fine when every other dim is 1.
void Loader::op_softmax(const Ctx& c) {
  const Value x = dyn(get(c, 0), c.where);
  const std::size_t rank = x.dims.size() + (x.batched ? 1 : 0);
  const std::int64_t axis = norm_axis(attr_int(c, "axis", opset_ < 13 ? 1 : -1), rank, c.where);
  if (x.batched && axis == 0) unsupported(c.where, "Softmax along the batch axis is not supported");
  const auto a = static_cast<std::size_t>(axis - (x.batched ? 1 : 0));
  // Before opset 13, Softmax flattens dims [axis, rank) into one: only the dims before must be 1.
  const std::int64_t others =
      opset_ < 13 ? span_count(x.dims, 0, a) : span_count(x.dims, 0, a) * span_count(x.dims, a + 1, x.dims.size());
  if (others != 1) {
    unsupported(c.where, fmt::format("Softmax along axis {} of per-row shape {} is not supported (only along the "
                                     "single non-unit per-row axis)",
                                     axis, dims_str(x.dims)));
  }
  set(c, 0, dynamic(b_->unary(OpKind::Softmax, x.node, c.where), x.batched, x.dims, c.where));
}

void Loader::op_argmax(const Ctx& c) {
  if (attr_int(c, "select_last_index", 0) != 0) unsupported(c.where, "ArgMax with select_last_index=1");
  const Value x = dyn(get(c, 0), c.where);
  const std::size_t rank = x.dims.size() + (x.batched ? 1 : 0);
  const std::int64_t axis = norm_axis(attr_int(c, "axis", 0), rank, c.where);
  if (x.batched && axis == 0) unsupported(c.where, "ArgMax along the batch axis is not supported");
  const auto a = static_cast<std::size_t>(axis - (x.batched ? 1 : 0));
  if (span_count(x.dims, 0, a) * span_count(x.dims, a + 1, x.dims.size()) != 1) {
    unsupported(c.where,
                fmt::format("ArgMax along axis {} of per-row shape {} is not supported", axis, dims_str(x.dims)));
  }
  Dims dims = x.dims;
  if (attr_int(c, "keepdims", 1) != 0) {
    dims[a] = 1;
  } else {
    dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(a));
  }
  Value out = dynamic(b_->argmax(x.node, c.where), x.batched, std::move(dims), c.where);
  out.integer = true;
  set(c, 0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// Linear layers

void Loader::op_gemm(const Ctx& c) {
  if (attr_int(c, "transA", 0) != 0) unsupported(c.where, "Gemm with transA=1 is not supported");
  const std::int64_t trans_b = attr_int(c, "transB", 0);
  if (trans_b != 0 && trans_b != 1) fail(c.where, "attribute transB must be 0 or 1");
  const double alpha = attr_float(c, "alpha", 1.0);
  const double beta = attr_float(c, "beta", 1.0);
  const Value a = dyn(get(c, 0), c.where);
  const Tensor& bt = get_const(c, 1, "Gemm's B");
  std::int64_t k = 0;
  if (a.batched && a.dims.size() == 1) {
    k = a.dims[0];
  } else if (!a.batched && a.dims.size() == 2 && a.dims[0] == 1) {
    k = a.dims[1];
  } else {
    fail(c.where, fmt::format("expected A of shape [N, k], got {}{}", a.batched ? "[N] + " : "", dims_str(a.dims)));
  }
  if (bt.dims.size() != 2) fail(c.where, fmt::format("expected B of rank 2, got shape {}", dims_str(bt.dims)));
  const std::int64_t m = trans_b != 0 ? bt.dims[0] : bt.dims[1];
  const std::int64_t bk = trans_b != 0 ? bt.dims[1] : bt.dims[0];
  if (bk != k) {
    fail(c.where,
         fmt::format("B has shape {} (transB={}), which does not match A's {} columns", dims_str(bt.dims), trans_b, k));
  }
  if (m <= 0) fail(c.where, "B has no output columns");
  Eigen::MatrixXd w(m, k);
  for (std::int64_t r = 0; r < m; ++r) {
    for (std::int64_t col = 0; col < k; ++col) {
      const double v = bt.data[static_cast<std::size_t>(trans_b != 0 ? r * k + col : col * m + r)];
      w(r, col) = alpha == 1.0 ? v : alpha * v;
    }
  }
  Eigen::VectorXd bias = Eigen::VectorXd::Zero(m);
  if (has_input(c, 2)) {
    const Tensor& ct = get_const(c, 2, "Gemm's C");
    const std::int64_t n = static_cast<std::int64_t>(ct.data.size());
    const bool ok = ct.dims.size() <= 2 && (n == 1 || (n == m && ct.dims.back() == m));
    if (!ok) fail(c.where, fmt::format("expected C of shape [{}] or [1, {}], got {}", m, m, dims_str(ct.dims)));
    for (std::int64_t r = 0; r < m; ++r) {
      const double v = ct.data[static_cast<std::size_t>(n == 1 ? 0 : r)];
      bias(r) = beta == 1.0 ? v : beta * v;
    }
  }
  const int id = b_->dense(a.node, std::move(w), std::move(bias), c.where);
  set(c, 0, dynamic(id, a.batched, a.batched ? Dims{m} : Dims{1, m}, c.where));
}

void Loader::op_matmul(const Ctx& c) {
  if (!get(c, 1).is_const) unsupported(c.where, "MatMul is supported only with a constant right operand");
  const Value a = dyn(get(c, 0), c.where);
  const Tensor& bt = get_const(c, 1, "MatMul's B");
  if (a.dims.empty() || span_count(a.dims, 0, a.dims.size() - 1) != 1) {
    unsupported(c.where, fmt::format("MatMul of per-row shape {} is not supported (expected one vector per row)",
                                     dims_str(a.dims)));
  }
  const std::int64_t k = a.dims.back();
  if (bt.dims.empty() || bt.dims.size() > 2 || bt.dims[0] != k) {
    fail(c.where, fmt::format("B has shape {}, expected [{}, m] or [{}]", dims_str(bt.dims), k, k));
  }
  const std::int64_t m = bt.dims.size() == 2 ? bt.dims[1] : 1;
  if (m <= 0) fail(c.where, "B has no output columns");
  Eigen::MatrixXd w(m, k);
  for (std::int64_t r = 0; r < m; ++r) {
    for (std::int64_t col = 0; col < k; ++col) w(r, col) = bt.data[static_cast<std::size_t>(col * m + r)];
  }
  Dims dims(a.dims.begin(), a.dims.end() - 1);
  if (bt.dims.size() == 2) dims.push_back(m);
  const int id = b_->dense(a.node, std::move(w), Eigen::VectorXd::Zero(m), c.where);
  set(c, 0, dynamic(id, a.batched, std::move(dims), c.where));
}

// ---------------------------------------------------------------------------------------------
// Shape ops

void Loader::op_alias(const Ctx& c) {
  Value v = get(c, 0);
  set(c, 0, std::move(v));
}

void Loader::op_constant(const Ctx& c) {
  Tensor t;
  if (const auto* a = attr(c, "value"); a != nullptr) {
    t = parse_tensor(a->t(), c.where);
  } else if (attr(c, "value_float") != nullptr) {
    t.data = {attr_float(c, "value_float", 0.0)};
  } else if (attr(c, "value_floats") != nullptr) {
    t.data = attr_floats(c, "value_floats");
    t.dims = {static_cast<std::int64_t>(t.data.size())};
  } else if (attr(c, "value_int") != nullptr) {
    t.data = {static_cast<double>(attr_int(c, "value_int", 0))};
    t.integer = true;
  } else if (attr(c, "value_ints") != nullptr) {
    for (const std::int64_t v : attr_ints(c, "value_ints")) t.data.push_back(static_cast<double>(v));
    t.dims = {static_cast<std::int64_t>(t.data.size())};
    t.integer = true;
  } else {
    unsupported(c.where, "Constant without a numeric value, value_float(s) or value_int(s) attribute");
  }
  set(c, 0, constant(std::move(t), c.where));
}

void Loader::op_flatten(const Ctx& c) {
  Value v = get(c, 0);
  const bool batched = !v.is_const && v.batched;
  Dims& dims = v.is_const ? v.c.dims : v.dims;
  const std::size_t rank = dims.size() + (batched ? 1 : 0);
  const std::int64_t raw = attr_int(c, "axis", 1);
  // Flatten's axis may equal the rank.
  if (raw < -static_cast<std::int64_t>(rank) || raw > static_cast<std::int64_t>(rank)) {
    fail(c.where, fmt::format("axis {} is out of range for rank {}", raw, rank));
  }
  const auto axis = static_cast<std::size_t>(raw < 0 ? raw + static_cast<std::int64_t>(rank) : raw);
  if (batched) {
    if (axis == 0 || span_count(dims, 0, axis - 1) != 1) {
      unsupported(c.where, "Flatten that merges the batch dimension is not supported");
    }
    dims = Dims{span_count(dims, 0, dims.size())};
  } else {
    dims = Dims{span_count(dims, 0, axis), span_count(dims, axis, dims.size())};
  }
  set(c, 0, std::move(v));
}

void Loader::op_reshape(const Ctx& c) {
  Value v = get(c, 0);
  std::vector<std::int64_t> target;
  if (has_input(c, 1)) {
    target = ints_of(get_const(c, 1, "Reshape's shape"), c.where, "shape values");
  } else {
    target = attr_ints(c, "shape");
  }
  const bool allow_zero = attr_int(c, "allowzero", 0) != 0;
  const bool batched = !v.is_const && v.batched;
  Dims& dims = v.is_const ? v.c.dims : v.dims;
  const std::int64_t width = span_count(dims, 0, dims.size());
  std::size_t first = 0;  // target entries that describe per-row dims start here
  if (batched) {
    if (target.empty()) unsupported(c.where, "Reshape to a scalar would drop the batch dimension");
    // The leading entry must keep the batch: 0 (copy), -1 (inferred, the rest keeps the width) or 1
    // (a batch-1 export).
    if (!((target[0] == 0 && !allow_zero) || target[0] == -1 || target[0] == 1)) {
      unsupported(c.where, fmt::format("Reshape to {} does not keep the batch dimension first", dims_str(target)));
    }
    first = 1;
  }
  Dims out;
  int infer = -1;
  for (std::size_t i = first; i < target.size(); ++i) {
    std::int64_t t = target[i];
    if (t == 0 && !allow_zero) {
      // 0 copies the input's dim at the same position (counting the batch dim).
      const std::size_t src = batched ? i - 1 : i;
      if (src >= dims.size())
        fail(c.where, fmt::format("shape {} copies a dim the input does not have", dims_str(target)));
      t = dims[src];
    }
    if (t == -1) {
      if (infer >= 0 || (batched && target[0] == -1))
        fail(c.where, fmt::format("shape {} has two -1", dims_str(target)));
      infer = static_cast<int>(out.size());
      t = 1;
    } else if (t < 0) {
      fail(c.where, fmt::format("shape {} has a negative dim", dims_str(target)));
    }
    out.push_back(t);
  }
  const std::int64_t known = count_of(out, kMaxElements);
  if (known < 0) fail(c.where, fmt::format("shape {} is too large", dims_str(target)));
  if (infer >= 0) {
    if (known == 0 || width % known != 0) {
      unsupported(c.where, fmt::format("Reshape of {} values per row to {} is not supported", width, dims_str(target)));
    }
    out[static_cast<std::size_t>(infer)] = width / known;
  }
  if (count_of(out, kMaxElements) != width) {
    unsupported(c.where, fmt::format("Reshape to {} does not keep the per-row width {} (per-row shape {})",
                                     dims_str(target), width, dims_str(dims)));
  }
  dims = std::move(out);
  set(c, 0, std::move(v));
}

void Loader::op_squeeze(const Ctx& c, bool unsqueeze) {
  Value v = get(c, 0);
  std::vector<std::int64_t> axes;
  const bool given = has_input(c, 1) || attr(c, "axes") != nullptr;
  if (has_input(c, 1)) {
    axes = ints_of(get_const(c, 1, "axes"), c.where, "axes");
  } else {
    axes = attr_ints(c, "axes");
  }
  const bool batched = !v.is_const && v.batched;
  Dims& dims = v.is_const ? v.c.dims : v.dims;
  const std::size_t off = batched ? 1 : 0;
  if (unsqueeze) {
    if (!given) fail(c.where, "Unsqueeze needs axes");
    const std::size_t rank = dims.size() + off + axes.size();
    std::set<std::int64_t> at;
    for (const std::int64_t a : axes) {
      if (!at.insert(norm_axis(a, rank, c.where)).second) fail(c.where, "axes repeat");
    }
    if (batched && at.count(0) != 0) unsupported(c.where, "Unsqueeze before the batch dimension is not supported");
    for (const std::int64_t a : at) {
      dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(a) - off), 1);
    }
  } else if (!given) {
    dims.erase(std::remove(dims.begin(), dims.end(), 1), dims.end());
  } else {
    const std::size_t rank = dims.size() + off;
    std::set<std::int64_t> at;
    for (const std::int64_t a : axes) at.insert(norm_axis(a, rank, c.where));
    if (batched && at.count(0) != 0) unsupported(c.where, "Squeeze of the batch dimension is not supported");
    for (auto it = at.rbegin(); it != at.rend(); ++it) {
      const auto i = static_cast<std::size_t>(*it) - off;
      if (dims[i] != 1) fail(c.where, fmt::format("cannot squeeze axis {} of size {}", *it, dims[i]));
      dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  set(c, 0, std::move(v));
}

void Loader::op_cast(const Ctx& c) {
  Value v = get(c, 0);
  const auto* to_attr = attr(c, "to");
  if (to_attr == nullptr) fail(c.where, "Cast needs attribute 'to'");
  const std::int64_t to = attr_int(c, "to", 0);
  if (v.is_const) {
    for (double& x : v.c.data) {
      if (to == Proto::FLOAT) {
        x = static_cast<float>(x);
      } else if (to == Proto::BOOL) {
        x = x != 0.0 ? 1.0 : 0.0;
      } else if (integer_type(static_cast<int>(to))) {
        if (!std::isfinite(x)) fail(c.where, "casts a non-finite constant to an integer");
        x = std::trunc(x);
      } else if (!float_type(static_cast<int>(to))) {
        unsupported(c.where, fmt::format("Cast to element type {} is not supported", to));
      }
    }
    v.c.integer = v.c.integer || integer_type(static_cast<int>(to));
    v.integer = v.c.integer;
    set(c, 0, std::move(v));
    return;
  }
  if (float_type(static_cast<int>(to))) {
    // The IR computes in double: casts between float types are taken as exact. A label cast to a
    // float is plain numbers from here on (still decided by its classifier's scores).
    if (v.is_label) {
      v = dyn(v, c.where);
      v.is_label = false;
    }
    set(c, 0, std::move(v));
    return;
  }
  if (to == Proto::BOOL) {
    if (v.boolean) {
      set(c, 0, std::move(v));
      return;
    }
    // bool(x) = x != 0 ? 1 : 0.
    Value x = dyn(v, c.where);
    const int one = b_->constant(Eigen::VectorXd::Ones(1), c.where);
    const int zero = b_->constant(Eigen::VectorXd::Zero(1), c.where);
    Value out = dynamic(b_->where(x.node, one, zero, c.where), x.batched, x.dims, c.where);
    out.integer = out.boolean = true;
    set(c, 0, std::move(out));
    return;
  }
  if (!integer_type(static_cast<int>(to)))
    unsupported(c.where, fmt::format("Cast to element type {} is not supported", to));
  if (!v.integer) {
    // The IR cannot truncate. A float cast to an index that only Gather reads is fine: Lookup rounds.
    bool only_gather = c.node.output_size() > 0 && graph_outputs_.count(c.node.output(0)) == 0;
    if (only_gather) {
      for (const auto& [n, slot] : consumers_[c.node.output(0)]) {
        only_gather = only_gather && n->op_type() == "Gather" && slot == 1;
      }
    }
    if (!only_gather) {
      unsupported(c.where, "Cast of a float value to an integer type is supported only for Gather indices");
    }
  }
  v.integer = true;
  set(c, 0, std::move(v));
}

void Loader::op_gather(const Ctx& c) {
  Value& data = get(c, 0);
  Value& idx = get(c, 1);
  const std::int64_t raw_axis = attr_int(c, "axis", 0);
  if (!idx.is_const) {
    // Dynamic index into a constant table: Lookup.
    if (!data.is_const) unsupported(c.where, "Gather with both data and indices computed is not supported");
    const Tensor& t = data.c;
    if (t.dims.empty()) fail(c.where, "Gather from a scalar");
    if (norm_axis(raw_axis, t.dims.size(), c.where) != 0) {
      unsupported(c.where, "Gather with computed indices is supported only along axis 0 of a constant table");
    }
    const Value i = dyn(idx, c.where);
    if (span_count(i.dims, 0, i.dims.size()) != 1) {
      unsupported(c.where, fmt::format("Gather with computed indices of per-row shape {} (expected one index per row)",
                                       dims_str(i.dims)));
    }
    const std::int64_t rows = t.dims[0];
    const std::int64_t width = span_count(t.dims, 1, t.dims.size());
    if (rows <= 0 || width <= 0) fail(c.where, fmt::format("Gather from an empty table of shape {}", dims_str(t.dims)));
    if (width > kMaxWidth) fail(c.where, "Gather table rows are too wide");
    Eigen::MatrixXd table(rows, width);
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t k = 0; k < width; ++k) table(r, k) = t.data[static_cast<std::size_t>(r * width + k)];
    }
    Dims dims = i.dims;
    dims.insert(dims.end(), t.dims.begin() + 1, t.dims.end());
    Value out = dynamic(b_->lookup(i.node, std::move(table), c.where), i.batched, std::move(dims), c.where);
    out.integer = t.integer;
    set(c, 0, std::move(out));
    return;
  }
  // Constant indices: a selection along a per-row axis (or plain folding on constants).
  const Tensor& it = idx.c;
  const bool batched = !data.is_const && data.batched;
  const Dims& dims = data.is_const ? data.c.dims : data.dims;
  const std::int64_t axis = norm_axis(raw_axis, dims.size() + (batched ? 1 : 0), c.where);
  if (batched && axis == 0) unsupported(c.where, "Gather along the batch axis is not supported");
  const auto a = static_cast<std::size_t>(axis - (batched ? 1 : 0));
  std::vector<std::int64_t> sel = ints_of(it, c.where, "Gather indices");
  for (std::int64_t& s : sel) {
    if (s < -dims[a] || s >= dims[a])
      fail(c.where, fmt::format("index {} is out of range for a dim of {}", s, dims[a]));
    if (s < 0) s += dims[a];
  }
  Dims out_dims(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(a));
  out_dims.insert(out_dims.end(), it.dims.begin(), it.dims.end());
  out_dims.insert(out_dims.end(), dims.begin() + static_cast<std::ptrdiff_t>(a) + 1, dims.end());
  const std::int64_t cap =
      data.is_const ? std::max(kMaxWidth, static_cast<std::int64_t>(data.c.data.size() + it.data.size())) : kMaxWidth;
  if (count_of(out_dims, cap) < 0) {
    fail(c.where, fmt::format("result shape {} is too large", dims_str(out_dims)));
  }
  const std::vector<int> map = take(iota_map(span_count(dims, 0, dims.size())), dims, a, sel);
  Value out = apply_map(data, map, std::move(out_dims), c.where);
  out.integer = data.integer;
  out.boolean = data.boolean;
  set(c, 0, std::move(out));
}

void Loader::op_slice(const Ctx& c) {
  Value& data = get(c, 0);
  std::vector<std::int64_t> starts;
  std::vector<std::int64_t> ends;
  std::vector<std::int64_t> axes;
  std::vector<std::int64_t> steps;
  if (has_input(c, 1)) {
    starts = ints_of(get_const(c, 1, "Slice's starts"), c.where, "starts");
    ends = ints_of(get_const(c, 2, "Slice's ends"), c.where, "ends");
    if (has_input(c, 3)) axes = ints_of(get_const(c, 3, "Slice's axes"), c.where, "axes");
    if (has_input(c, 4)) steps = ints_of(get_const(c, 4, "Slice's steps"), c.where, "steps");
  } else {
    starts = attr_ints(c, "starts");
    ends = attr_ints(c, "ends");
    axes = attr_ints(c, "axes");
  }
  const bool batched = !data.is_const && data.batched;
  Dims dims = data.is_const ? data.c.dims : data.dims;
  const std::size_t rank = dims.size() + (batched ? 1 : 0);
  if (axes.empty()) {
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    fail(c.where, "starts, ends, axes and steps must have the same length");
  }
  std::vector<int> map = iota_map(span_count(dims, 0, dims.size()));
  std::set<std::int64_t> seen;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const std::int64_t axis = norm_axis(axes[i], rank, c.where);
    if (!seen.insert(axis).second) fail(c.where, "axes repeat");
    std::int64_t start = starts[i];
    std::int64_t end = ends[i];
    const std::int64_t step = steps[i];
    if (step == 0) fail(c.where, "step 0");
    if (batched && axis == 0) {
      if (start != 0 || end < std::numeric_limits<std::int32_t>::max() || step != 1) {
        unsupported(c.where, "Slice of the batch axis is not supported");
      }
      continue;
    }
    const auto a = static_cast<std::size_t>(axis - (batched ? 1 : 0));
    const std::int64_t dim = dims[a];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    std::vector<std::int64_t> sel;
    if (step > 0) {
      start = std::clamp<std::int64_t>(start, 0, dim);
      end = std::clamp<std::int64_t>(end, 0, dim);
      for (std::int64_t k = start; k < end; k += step) sel.push_back(k);
    } else {
      start = std::clamp<std::int64_t>(start, 0, dim - 1);
      end = std::clamp<std::int64_t>(end, -1, dim - 1);
      for (std::int64_t k = start; k > end; k += step) sel.push_back(k);
    }
    map = take(map, dims, a, sel);
    dims[a] = static_cast<std::int64_t>(sel.size());
  }
  Value out = apply_map(data, map, std::move(dims), c.where);
  out.integer = data.integer;
  out.boolean = data.boolean;
  set(c, 0, std::move(out));
}

void Loader::op_concat(const Ctx& c) {
  const auto* axis_attr = attr(c, "axis");
  if (axis_attr == nullptr) fail(c.where, "Concat needs attribute 'axis'");
  std::vector<Value*> parts;
  for (int i = 0; i < c.node.input_size(); ++i) {
    if (!c.node.input(i).empty()) parts.push_back(&lookup(c.node.input(i), c.where));
  }
  if (parts.empty()) fail(c.where, "Concat of nothing");
  bool batched = false;
  bool all_const = true;
  std::size_t rank = 0;
  for (const Value* p : parts) {
    all_const = all_const && p->is_const;
    if (!p->is_const && p->batched) {
      batched = true;
      rank = p->dims.size() + 1;
    }
  }
  if (!batched) rank = parts[0]->is_const ? parts[0]->c.dims.size() : parts[0]->dims.size();
  std::vector<Dims> shapes;
  for (const Value* p : parts) {
    Dims d = p->is_const ? p->c.dims : p->dims;
    if (batched && (p->is_const || !p->batched)) {
      // A shared tensor joins batched ones only with a leading 1, which we repeat for every row.
      if (d.size() != rank || d[0] != 1) {
        fail(c.where, fmt::format("cannot concatenate a constant of shape {} with batched values", dims_str(d)));
      }
      d.erase(d.begin());
    } else if (d.size() + (batched ? 1 : 0) != rank) {
      fail(c.where, "Concat inputs have different ranks");
    }
    shapes.push_back(std::move(d));
  }
  const std::int64_t axis = norm_axis(attr_int(c, "axis", 0), rank, c.where);
  if (batched && axis == 0) unsupported(c.where, "Concat along the batch axis is not supported");
  const auto a = static_cast<std::size_t>(axis - (batched ? 1 : 0));
  Dims dims = shapes[0];
  dims[a] = 0;
  for (const Dims& s : shapes) {
    for (std::size_t k = 0; k < s.size(); ++k) {
      if (k != a && s[k] != dims[k]) fail(c.where, "Concat inputs differ outside the concatenation axis");
    }
    dims[a] += s[a];
  }
  if (count_of(dims, all_const ? kMaxElements : kMaxWidth) < 0) {
    fail(c.where, fmt::format("result shape {} is too large", dims_str(dims)));
  }
  // Joining the flat parts gives every part's block in turn; interleave them along axis a.
  const std::int64_t outer = span_count(dims, 0, a);
  const std::int64_t inner = span_count(dims, a + 1, dims.size());
  std::vector<int> map;
  std::vector<std::int64_t> base;  // offset of each part in the joined vector
  std::int64_t offset = 0;
  for (const Dims& s : shapes) {
    base.push_back(offset);
    offset += span_count(s, 0, s.size());
  }
  if (offset > 0) {
    for (std::int64_t o = 0; o < outer; ++o) {
      for (std::size_t p = 0; p < shapes.size(); ++p) {
        const std::int64_t block = shapes[p][a] * inner;
        for (std::int64_t j = 0; j < block; ++j) map.push_back(static_cast<int>(base[p] + o * block + j));
      }
    }
  }
  if (all_const) {
    Tensor t;
    t.dims = dims;
    t.integer = true;
    std::vector<double> joined;
    for (const Value* p : parts) {
      joined.insert(joined.end(), p->c.data.begin(), p->c.data.end());
      t.integer = t.integer && p->c.integer;
    }
    for (const int i : map) t.data.push_back(joined[static_cast<std::size_t>(i)]);
    set(c, 0, constant(std::move(t), c.where));
    return;
  }
  std::vector<int> nodes;
  bool integer = true;
  bool boolean = true;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    if (span_count(shapes[p], 0, shapes[p].size()) == 0) continue;  // empty parts add nothing
    nodes.push_back(dyn(*parts[p], c.where).node);
    integer = integer && parts[p]->integer;
    boolean = boolean && parts[p]->boolean;
  }
  Value out = dynamic(b_->concat(nodes, c.where), batched, dims, c.where);
  if (!is_iota(map)) out.node = b_->select(out.node, map, c.where);
  out.integer = integer;
  out.boolean = boolean;
  set(c, 0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// ai.onnx.ml

Value Loader::features(const Ctx& c, int slot) {
  Value x = dyn(get(c, slot), c.where);
  const bool ok = x.batched ? x.dims.size() <= 1 : (x.dims.size() == 1 || (x.dims.size() == 2 && x.dims[0] == 1));
  if (!ok) {
    fail(c.where, fmt::format("expected input X of shape [N, features], got per-row shape {}", dims_str(x.dims)));
  }
  return x;
}

std::shared_ptr<TreeEnsemble> Loader::build_trees(const Ctx& c, const char* prefix, int n_features) {
  const auto tree_ids = attr_ints(c, "nodes_treeids");
  const auto node_ids = attr_ints(c, "nodes_nodeids");
  const auto feature_ids = attr_ints(c, "nodes_featureids");
  const auto modes = attr_strings(c, "nodes_modes");
  const auto true_ids = attr_ints(c, "nodes_truenodeids");
  const auto false_ids = attr_ints(c, "nodes_falsenodeids");
  const auto missing = attr_ints(c, "nodes_missing_value_tracks_true");
  const auto thresholds = attr_floats_or_tensor(c, "nodes_values");
  const std::size_t n = tree_ids.size();
  if (n == 0) fail(c.where, "tree ensemble has no nodes (nodes_treeids is empty)");
  if (node_ids.size() != n || feature_ids.size() != n || modes.size() != n || true_ids.size() != n ||
      false_ids.size() != n || (!thresholds.empty() && thresholds.size() != n) ||
      (!missing.empty() && missing.size() != n)) {
    fail(c.where, fmt::format("the nodes_* attributes must all have {} entries (one per node)", n));
  }
  auto te = std::make_shared<TreeEnsemble>();
  std::map<std::int64_t, std::size_t> tree_index;  // ONNX tree id -> our tree
  std::vector<std::vector<std::size_t>> members;   // attribute positions of each tree's nodes
  for (std::size_t i = 0; i < n; ++i) {
    const auto [it, fresh] = tree_index.emplace(tree_ids[i], members.size());
    if (fresh) members.emplace_back();
    members[it->second].push_back(i);
  }
  // Modes first: they decide which nodes have children.
  std::vector<TreeEnsemble::Mode> mode(n, TreeEnsemble::Mode::Leaf);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& m = modes[i];
    if (m == "BRANCH_LEQ") {
      mode[i] = TreeEnsemble::Mode::Leq;
    } else if (m == "BRANCH_LT") {
      mode[i] = TreeEnsemble::Mode::Lt;
    } else if (m == "BRANCH_GTE") {
      mode[i] = TreeEnsemble::Mode::Geq;
    } else if (m == "BRANCH_GT") {
      mode[i] = TreeEnsemble::Mode::Gt;
    } else if (m == "BRANCH_EQ") {
      mode[i] = TreeEnsemble::Mode::Eq;
    } else if (m == "BRANCH_NEQ") {
      mode[i] = TreeEnsemble::Mode::Neq;
    } else if (m != "LEAF") {
      fail(c.where, fmt::format("tree {} node {} has mode '{}' (expected BRANCH_LEQ, BRANCH_LT, BRANCH_GTE, "
                                "BRANCH_GT, BRANCH_EQ, BRANCH_NEQ or LEAF)",
                                tree_ids[i], node_ids[i], m));
    }
  }
  std::vector<std::map<std::int64_t, int>> renumber(members.size());  // ONNX node id -> our index
  for (std::size_t t = 0; t < members.size(); ++t) {
    const std::string tw = fmt::format("tree {}", tree_ids[members[t][0]]);
    std::map<std::int64_t, std::size_t> local;  // node id -> attribute position
    for (const std::size_t i : members[t]) {
      if (!local.emplace(node_ids[i], i).second) fail(c.where, fmt::format("{} has node {} twice", tw, node_ids[i]));
    }
    std::map<std::size_t, std::size_t> parent;  // attribute position -> its parent's
    auto child = [&](std::size_t i, std::int64_t id) {
      const auto f = local.find(id);
      if (f == local.end())
        fail(c.where, fmt::format("{} node {} has child {}, which does not exist", tw, node_ids[i], id));
      const auto [q, inserted] = parent.emplace(f->second, i);
      if (!inserted && q->second != i)
        fail(c.where, fmt::format("{} node {} has two parents; expected a tree", tw, id));
      return f->second;
    };
    std::map<std::size_t, std::pair<std::size_t, std::size_t>> kids;
    for (const std::size_t i : members[t]) {
      if (mode[i] != TreeEnsemble::Mode::Leaf) kids[i] = {child(i, true_ids[i]), child(i, false_ids[i])};
    }
    std::vector<std::size_t> roots;
    for (const std::size_t i : members[t]) {
      if (parent.count(i) == 0) roots.push_back(i);
    }
    if (roots.size() != 1) fail(c.where, fmt::format("{} has {} roots; expected one", tw, roots.size()));
    // Pre-order numbering puts every child after its parent, as the IR requires.
    std::map<std::size_t, int> index;
    std::vector<std::size_t> order;
    std::vector<std::size_t> stack{roots[0]};
    while (!stack.empty()) {
      const std::size_t i = stack.back();
      stack.pop_back();
      if (index.count(i) != 0) continue;  // both branches to one child
      index[i] = static_cast<int>(order.size());
      order.push_back(i);
      if (const auto k = kids.find(i); k != kids.end()) {
        stack.push_back(k->second.second);
        stack.push_back(k->second.first);
      }
    }
    if (order.size() != members[t].size()) {
      fail(c.where, fmt::format("{} has nodes that its root does not reach (a cycle?)", tw));
    }
    TreeEnsemble::Tree tree;
    for (const std::size_t i : order) {
      TreeEnsemble::Node nd;
      nd.mode = mode[i];
      if (nd.mode != TreeEnsemble::Mode::Leaf) {
        if (feature_ids[i] < 0 || feature_ids[i] >= n_features) {
          fail(c.where, fmt::format("{} node {} tests feature {}, but the input has {}", tw, node_ids[i],
                                    feature_ids[i], n_features));
        }
        nd.feature = static_cast<int>(feature_ids[i]);
        nd.threshold = thresholds.empty() ? 0.0 : thresholds[i];
        nd.true_child = index[kids[i].first];
        nd.false_child = index[kids[i].second];
        nd.missing_tracks_true = !missing.empty() && missing[i] != 0;
      }
      tree.nodes.push_back(nd);
      renumber[t][node_ids[i]] = index[i];
    }
    te->trees.push_back(std::move(tree));
  }
  const std::string p(prefix);
  const auto w_trees = attr_ints(c, (p + "treeids").c_str());
  const auto w_nodes = attr_ints(c, (p + "nodeids").c_str());
  const auto w_ids = attr_ints(c, (p + "ids").c_str());
  const auto w_weights = attr_floats_or_tensor(c, (p + "weights").c_str());
  const std::size_t nw = w_trees.size();
  if (w_nodes.size() != nw || w_ids.size() != nw || w_weights.size() != nw) {
    fail(c.where, fmt::format("the {}* attributes must all have {} entries (one per leaf weight)", p, nw));
  }
  for (std::size_t k = 0; k < nw; ++k) {
    const auto t = tree_index.find(w_trees[k]);
    if (t == tree_index.end()) fail(c.where, fmt::format("{}treeids names tree {}, which has no nodes", p, w_trees[k]));
    const auto nd = renumber[t->second].find(w_nodes[k]);
    if (nd == renumber[t->second].end()) {
      fail(c.where, fmt::format("{}nodeids names node {} of tree {}, which does not exist", p, w_nodes[k], w_trees[k]));
    }
    if (w_ids[k] < 0 || w_ids[k] > std::numeric_limits<int>::max()) {
      fail(c.where, fmt::format("{}ids has {}, expected an output index", p, w_ids[k]));
    }
    te->trees[t->second].leaves.push_back({nd->second, static_cast<int>(w_ids[k]), w_weights[k]});
  }
  return te;
}

int Loader::post_transform(int raw, const Ctx& c) {
  const std::string pt = attr_string(c, "post_transform", "NONE");
  if (pt == "NONE") return raw;
  if (pt == "LOGISTIC") return b_->sigmoid(raw, c.where + "/logistic");
  if (pt == "SOFTMAX") return b_->unary(OpKind::Softmax, raw, c.where + "/softmax");
  unsupported(c.where, fmt::format("post_transform '{}' is not supported (expected NONE, LOGISTIC or SOFTMAX)", pt));
}

std::vector<std::string> Loader::class_labels(const Ctx& c, const char* ints_name,
                                              std::vector<std::int64_t>& ints) const {
  ints = attr_ints(c, ints_name);
  std::vector<std::string> names = attr_strings(c, "classlabels_strings");
  if (ints.empty() == names.empty())
    fail(c.where, fmt::format("expected exactly one of {} and classlabels_strings", ints_name));
  for (const std::int64_t v : ints) names.push_back(std::to_string(v));
  return names;
}

void Loader::classifier_outputs(const Ctx& c, const Value& x, int raw, int scores, std::vector<std::string> labels,
                                std::vector<std::int64_t> int_labels) {
  Value label;
  label.is_label = true;
  label.integer = true;
  label.batched = x.batched;
  label.dims = x.batched ? Dims{} : Dims{1};
  label.rule_node = raw;
  label.class_labels = labels;
  label.label_scores = scores;
  label.int_labels = std::move(int_labels);
  set(c, 0, std::move(label));
  const auto width = static_cast<std::int64_t>(b_->width(scores));
  Value s = dynamic(scores, x.batched, x.batched ? Dims{width} : Dims{1, width}, c.where);
  s.rule_node = raw;
  s.class_labels = std::move(labels);
  set(c, 1, std::move(s));
}

void Loader::op_tree_classifier(const Ctx& c) {
  const Value x = features(c, 0);
  const int n_features = b_->width(x.node);
  std::shared_ptr<TreeEnsemble> te = build_trees(c, "class_", n_features);
  std::vector<std::int64_t> ints;
  std::vector<std::string> labels = class_labels(c, "classlabels_int64s", ints);
  const auto n_classes = static_cast<int>(labels.size());
  std::vector<double> base = attr_floats_or_tensor(c, "base_values");
  std::set<int> ids;
  bool positive = true;
  for (const auto& tree : te->trees) {
    for (const auto& leaf : tree.leaves) {
      ids.insert(leaf.target);
      positive = positive && leaf.weight >= 0.0;
    }
  }
  for (const int id : ids) {
    if (id >= n_classes) fail(c.where, fmt::format("class_ids has {}, but there are {} classes", id, n_classes));
  }
  te->classifier = true;
  int raw = -1;
  int scores = -1;
  if (n_classes == 2 && ids.size() == 1) {
    // One score s for a binary classifier: scores [1 - s, s] for probability-like (non-negative)
    // weights, [-s, s] for margins, as onnxruntime computes them.
    const int cls = *ids.begin();
    if (base.size() > 2) fail(c.where, fmt::format("{} base values for a binary classifier", base.size()));
    if (!base.empty()) base = {base.size() == 1 ? base[0] : base[static_cast<std::size_t>(cls)]};
    for (auto& tree : te->trees) {
      for (auto& leaf : tree.leaves) leaf.target = 0;
    }
    te->n_targets = 1;
    te->base_values = std::move(base);
    te->binary_single_score = true;
    te->binary_total = positive ? 1.0 : 0.0;
    raw = b_->tree_ensemble(x.node, te, c.where);
    const std::string pt = attr_string(c, "post_transform", "NONE");
    if (pt == "PROBIT" || pt == "SOFTMAX_ZERO") unsupported(c.where, fmt::format("post_transform '{}'", pt));
    // onnxruntime applies only LOGISTIC here, and only to margins.
    scores = !positive && pt == "LOGISTIC" ? b_->sigmoid(raw, c.where + "/logistic") : raw;
  } else {
    if (!base.empty() && base.size() != labels.size()) {
      fail(c.where, fmt::format("{} base values for {} classes", base.size(), labels.size()));
    }
    te->n_targets = n_classes;
    te->base_values = std::move(base);
    raw = b_->tree_ensemble(x.node, te, c.where);
    scores = post_transform(raw, c);
  }
  classifier_outputs(c, x, raw, scores, std::move(labels), std::move(ints));
}

void Loader::op_tree_regressor(const Ctx& c) {
  const Value x = features(c, 0);
  std::shared_ptr<TreeEnsemble> te = build_trees(c, "target_", b_->width(x.node));
  int max_id = 0;
  for (const auto& tree : te->trees) {
    for (const auto& leaf : tree.leaves) max_id = std::max(max_id, leaf.target);
  }
  const std::int64_t n_targets = attr_int(c, "n_targets", static_cast<std::int64_t>(max_id) + 1);
  if (n_targets <= 0 || n_targets > kMaxWidth) fail(c.where, fmt::format("n_targets is {}", n_targets));
  te->n_targets = static_cast<int>(n_targets);
  const std::string agg = attr_string(c, "aggregate_function", "SUM");
  if (agg == "SUM") {
    te->aggregate = TreeEnsemble::Aggregate::Sum;
  } else if (agg == "AVERAGE") {
    te->aggregate = TreeEnsemble::Aggregate::Average;
  } else if (agg == "MIN") {
    te->aggregate = TreeEnsemble::Aggregate::Min;
  } else if (agg == "MAX") {
    te->aggregate = TreeEnsemble::Aggregate::Max;
  } else {
    fail(c.where, fmt::format("aggregate_function '{}' (expected SUM, AVERAGE, MIN or MAX)", agg));
  }
  te->base_values = attr_floats_or_tensor(c, "base_values");
  const int raw = b_->tree_ensemble(x.node, te, c.where);
  const int out = post_transform(raw, c);
  set(c, 0, dynamic(out, x.batched, x.batched ? Dims{n_targets} : Dims{1, n_targets}, c.where));
}

void Loader::op_linear_classifier(const Ctx& c) {
  const Value x = features(c, 0);
  const std::int64_t f = b_->width(x.node);
  const std::vector<double> coef = attr_floats(c, "coefficients");
  std::vector<double> intercepts = attr_floats(c, "intercepts");
  std::vector<std::int64_t> ints;
  std::vector<std::string> labels = class_labels(c, "classlabels_ints", ints);
  const auto rows =
      static_cast<std::int64_t>(intercepts.empty() ? coef.size() / static_cast<std::size_t>(f) : intercepts.size());
  if (rows == 0 || static_cast<std::int64_t>(coef.size()) != rows * f) {
    fail(c.where, fmt::format("{} coefficients for {} classes of {} features", coef.size(), rows, f));
  }
  if (intercepts.empty()) intercepts.assign(static_cast<std::size_t>(rows), 0.0);
  const std::string pt = attr_string(c, "post_transform", "NONE");
  int raw = -1;
  int scores = -1;
  if (rows == 1 && labels.size() == 2) {
    // One score s: the label is 1 iff s > 0. Raw scores [-s, s] decide exactly that by argmax;
    // onnxruntime reports [1 - s, s] without a post_transform.
    Eigen::MatrixXd w(2, f);
    Eigen::VectorXd b(2);
    for (std::int64_t k = 0; k < f; ++k) {
      w(1, k) = coef[static_cast<std::size_t>(k)];
      w(0, k) = -w(1, k);
    }
    b << -intercepts[0], intercepts[0];
    raw = b_->dense(x.node, std::move(w), std::move(b), c.where);
    if (pt == "NONE") {
      Eigen::VectorXd shift(2);
      shift << 1.0, 0.0;
      scores = b_->binary(OpKind::Add, raw, b_->constant(shift, c.where + "/shift"), c.where + "/scores");
    } else {
      scores = post_transform(raw, c);
    }
  } else {
    if (rows != static_cast<std::int64_t>(labels.size())) {
      fail(c.where, fmt::format("coefficients give {} classes but there are {} class labels", rows, labels.size()));
    }
    Eigen::MatrixXd w(rows, f);
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t k = 0; k < f; ++k) w(r, k) = coef[static_cast<std::size_t>(r * f + k)];
    }
    Eigen::VectorXd b = Eigen::Map<const Eigen::VectorXd>(intercepts.data(), rows);
    raw = b_->dense(x.node, std::move(w), std::move(b), c.where);
    scores = post_transform(raw, c);
  }
  classifier_outputs(c, x, raw, scores, std::move(labels), std::move(ints));
}

void Loader::op_linear_regressor(const Ctx& c) {
  const Value x = features(c, 0);
  const std::int64_t f = b_->width(x.node);
  const std::vector<double> coef = attr_floats(c, "coefficients");
  std::vector<double> intercepts = attr_floats(c, "intercepts");
  const std::int64_t targets = attr_int(c, "targets", 1);
  if (targets <= 0 || targets > kMaxWidth || static_cast<std::int64_t>(coef.size()) != targets * f ||
      (!intercepts.empty() && static_cast<std::int64_t>(intercepts.size()) != targets)) {
    fail(c.where, fmt::format("expected {} x {} coefficients and {} intercepts", targets, f, targets));
  }
  if (intercepts.empty()) intercepts.assign(static_cast<std::size_t>(targets), 0.0);
  Eigen::MatrixXd w(targets, f);
  for (std::int64_t r = 0; r < targets; ++r) {
    for (std::int64_t k = 0; k < f; ++k) w(r, k) = coef[static_cast<std::size_t>(r * f + k)];
  }
  const int raw =
      b_->dense(x.node, std::move(w), Eigen::Map<const Eigen::VectorXd>(intercepts.data(), targets), c.where);
  set(c, 0, dynamic(post_transform(raw, c), x.batched, x.batched ? Dims{targets} : Dims{1, targets}, c.where));
}

void Loader::op_scaler(const Ctx& c) {
  const Value x = features(c, 0);
  const std::int64_t f = b_->width(x.node);
  const std::vector<double> offset = attr_floats(c, "offset");
  const std::vector<double> scale = attr_floats(c, "scale");
  for (const auto* v : {&offset, &scale}) {
    if (!v->empty() && v->size() != 1 && static_cast<std::int64_t>(v->size()) != f) {
      fail(c.where, fmt::format("offset and scale need 1 or {} values", f));
    }
  }
  // (x - offset) * scale, in that order, as onnxruntime rounds it.
  int y = x.node;
  if (!offset.empty()) {
    const auto n = static_cast<Eigen::Index>(offset.size());
    y = b_->binary(OpKind::Sub, y, b_->constant(Eigen::Map<const Eigen::VectorXd>(offset.data(), n), c.where), c.where);
  }
  if (!scale.empty()) {
    const auto n = static_cast<Eigen::Index>(scale.size());
    y = b_->binary(OpKind::Mul, y, b_->constant(Eigen::Map<const Eigen::VectorXd>(scale.data(), n), c.where), c.where);
  }
  set(c, 0, dynamic(y, x.batched, x.dims, c.where));
}

// ---------------------------------------------------------------------------------------------
// Graph

void Loader::convert(const Ctx& c, const std::string& domain) {
  const std::string& op = c.node.op_type();
  if (domain == "ai.onnx.ml") {
    if (op == "TreeEnsembleClassifier") return op_tree_classifier(c);
    if (op == "TreeEnsembleRegressor") return op_tree_regressor(c);
    if (op == "LinearClassifier") return op_linear_classifier(c);
    if (op == "LinearRegressor") return op_linear_regressor(c);
    if (op == "Scaler") return op_scaler(c);
    if (op == "ZipMap") return op_alias(c);  // the scores, keyed by label: same values
  } else if (domain.empty() || domain == "ai.onnx") {
    if (op == "Gemm") return op_gemm(c);
    if (op == "MatMul") return op_matmul(c);
    if (op == "Add") return op_elementwise(c, OpKind::Add);
    if (op == "Sub") return op_elementwise(c, OpKind::Sub);
    if (op == "Mul") return op_elementwise(c, OpKind::Mul);
    if (op == "Div") return op_elementwise(c, OpKind::Div);
    if (op == "Less") return op_elementwise(c, OpKind::Less);
    if (op == "LessOrEqual") return op_elementwise(c, OpKind::LessEqual);
    if (op == "Greater") return op_elementwise(c, OpKind::Greater);
    if (op == "GreaterOrEqual") return op_elementwise(c, OpKind::GreaterEqual);
    if (op == "Equal") return op_elementwise(c, OpKind::Equal);
    if (op == "Where") return op_where(c);
    if (op == "Relu") return op_unary(c, OpKind::Relu);
    if (op == "LeakyRelu") return op_unary(c, OpKind::LeakyRelu, attr_float(c, "alpha", 0.01F));
    if (op == "Sigmoid") return op_unary(c, OpKind::Sigmoid);
    if (op == "Tanh") return op_unary(c, OpKind::Tanh);
    if (op == "Softmax") return op_softmax(c);
    if (op == "Identity") return op_alias(c);
    if (op == "Dropout") {
      if (c.node.output_size() > 1 && !c.node.output(1).empty() &&
          (!consumers_[c.node.output(1)].empty() || graph_outputs_.count(c.node.output(1)) != 0)) {
        unsupported(c.where, "Dropout's mask output is not supported");
      }
      return op_alias(c);  // inference: the identity
    }
    if (op == "Flatten") return op_flatten(c);
    if (op == "Reshape") return op_reshape(c);
    if (op == "Squeeze") return op_squeeze(c, false);
    if (op == "Unsqueeze") return op_squeeze(c, true);
    if (op == "Cast") return op_cast(c);
    if (op == "Constant") return op_constant(c);
    if (op == "Gather") return op_gather(c);
    if (op == "Slice") return op_slice(c);
    if (op == "Concat") return op_concat(c);
    if (op == "ArgMax") return op_argmax(c);
  }
  unsupported(c.where, fmt::format("op type '{}.{}' is not supported", domain.empty() ? "ai.onnx" : domain, op));
}

std::vector<std::string> json_strings(const nlohmann::json& j, const std::string& path, const char* key) {
  if (!j.is_array()) throw InputError(path, fmt::format("metadata '{}'", key), "expected a JSON array of strings");
  std::vector<std::string> out;
  for (const auto& s : j) {
    if (!s.is_string()) throw InputError(path, fmt::format("metadata '{}'", key), "expected a JSON array of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

Model Loader::load(const onnx::ModelProto& mp) {
  for (const auto& o : mp.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
  }
  if (!mp.has_graph()) fail("", "the model has no graph");
  const onnx::GraphProto& g = mp.graph();
  if (g.node_size() > kMaxNodes) fail("graph", fmt::format("{} nodes is too many", g.node_size()));
  if (g.sparse_initializer_size() > 0) unsupported("graph", "sparse initializers are not supported");

  std::map<std::string, nlohmann::json> meta;
  for (const auto& p : mp.metadata_props()) {
    if (p.key() != kMetaRule && p.key() != kMetaLabels && p.key() != kMetaInputs && p.key() != kMetaOutputs) continue;
    nlohmann::json j = nlohmann::json::parse(p.value(), nullptr, false);
    if (j.is_discarded()) fail(fmt::format("metadata '{}'", p.key()), "not valid JSON");
    meta[p.key()] = std::move(j);
  }

  for (const auto& t : g.initializer()) {
    if (!initializers_.emplace(t.name(), &t).second)
      fail("graph", fmt::format("initializer '{}' appears twice", t.name()));
  }

  // Graph inputs, concatenated into the IR's one input vector.
  struct Input {
    std::string name;
    bool batched = true;
    Dims dims;
    std::int64_t width = 0;
    bool integer = false;
  };
  std::vector<Input> inputs;
  std::int64_t total = 0;
  for (const auto& in : g.input()) {
    if (initializers_.count(in.name()) != 0) continue;  // an initializer's default
    const std::string where = fmt::format("input '{}'", in.name());
    if (!in.type().has_tensor_type()) unsupported(where, "is not a tensor");
    const auto& tt = in.type().tensor_type();
    if (!float_type(tt.elem_type()) && !integer_type(tt.elem_type())) {
      unsupported(where, fmt::format("has element type {}; expected a numeric type", tt.elem_type()));
    }
    if (!tt.has_shape()) fail(where, "has no shape; expected [N, k]");
    Input x;
    x.name = in.name();
    x.integer = integer_type(tt.elem_type());
    const auto& dims = tt.shape().dim();
    // [N, k...] with a batch dim; [k] or a scalar without; [N] (symbolic) is one value per row.
    if (dims.empty()) {
      x.batched = false;
    } else if (dims.size() == 1) {
      x.batched = !dims[0].has_dim_value();
      if (!x.batched) x.dims = {dims[0].dim_value()};
    } else {
      for (int i = 1; i < dims.size(); ++i) {
        if (!dims[i].has_dim_value() || dims[i].dim_value() <= 0) {
          fail(where, fmt::format("dimension {} must be a fixed positive size; expected [N, k]", i));
        }
        x.dims.push_back(dims[i].dim_value());
      }
    }
    x.width = count_of(x.dims, kMaxWidth);
    if (x.width <= 0)
      fail(where, fmt::format("has per-row shape {}; expected a positive, bounded size", dims_str(x.dims)));
    total += x.width;
    if (total > kMaxWidth) fail(where, "the inputs are too wide");
    inputs.push_back(std::move(x));
  }
  if (inputs.empty()) fail("graph", "has no inputs");

  std::vector<std::string> names;
  for (const Input& x : inputs) {
    for (std::int64_t i = 0; i < x.width; ++i) {
      names.push_back(x.width == 1 ? x.name : fmt::format("{}[{}]", x.name, i));
    }
  }
  if (const auto it = meta.find(kMetaInputs); it != meta.end()) {
    std::vector<std::string> m = json_strings(it->second, path_, kMetaInputs);
    if (m.size() != names.size()) {
      fail(fmt::format("metadata '{}'", kMetaInputs), fmt::format("{} names for {} inputs", m.size(), names.size()));
    }
    names = std::move(m);
  }
  b_.emplace(g.name().empty() ? std::string("model") : g.name(), std::move(names));
  b_->set_source(path_, "onnx");
  std::int64_t offset = 0;
  for (const Input& x : inputs) {
    int node = b_->input();
    if (inputs.size() > 1) {
      std::vector<int> idx(static_cast<std::size_t>(x.width));
      std::iota(idx.begin(), idx.end(), static_cast<int>(offset));
      node = b_->select(node, std::move(idx), fmt::format("input '{}'", x.name));
    }
    offset += x.width;
    Value v = dynamic(node, x.batched, x.dims, "graph");
    v.integer = x.integer;
    if (!values_.emplace(x.name, std::move(v)).second) fail("graph", fmt::format("input '{}' appears twice", x.name));
  }

  // Convert only nodes that some graph output (or the stored decision rule) depends on.
  std::string rule_value;
  if (const auto it = meta.find(kMetaRule); it != meta.end()) {
    const auto v = it->second.find("value");
    if (!it->second.is_object() || v == it->second.end() || !v->is_string()) {
      fail(fmt::format("metadata '{}'", kMetaRule), "expected an object with a string \"value\"");
    }
    rule_value = v->get<std::string>();
  }
  std::unordered_set<std::string> needed;
  for (const auto& o : g.output()) {
    needed.insert(o.name());
    graph_outputs_.insert(o.name());
  }
  if (!rule_value.empty()) needed.insert(rule_value);
  std::vector<bool> live(static_cast<std::size_t>(g.node_size()), false);
  for (int i = g.node_size(); i-- > 0;) {
    const auto& n = g.node(i);
    for (const auto& out : n.output())
      live[static_cast<std::size_t>(i)] = live[static_cast<std::size_t>(i)] || needed.count(out) != 0;
    if (!live[static_cast<std::size_t>(i)]) continue;
    for (int k = 0; k < n.input_size(); ++k) {
      needed.insert(n.input(k));
      consumers_[n.input(k)].emplace_back(&n, k);
    }
  }
  for (int i = 0; i < g.node_size(); ++i) {
    if (!live[static_cast<std::size_t>(i)]) continue;
    const auto& n = g.node(i);
    const std::string where =
        n.name().empty() ? fmt::format("node #{} ({})", i, n.op_type()) : fmt::format("node '{}'", n.name());
    convert(Ctx{n, where}, n.domain());
  }

  // The model output: the first graph output that is not an integer label.
  if (g.output_size() == 0) fail("graph", "has no outputs");
  const onnx::ValueInfoProto* chosen = nullptr;
  for (const auto& o : g.output()) {
    Value& v = lookup(o.name(), fmt::format("output '{}'", o.name()));
    const bool int_type = o.type().has_tensor_type() && (integer_type(o.type().tensor_type().elem_type()) ||
                                                         o.type().tensor_type().elem_type() == Proto::STRING);
    if (int_type || v.is_label) continue;
    chosen = &o;
    break;
  }
  if (chosen == nullptr) chosen = &g.output(0);
  const std::string where = fmt::format("output '{}'", chosen->name());
  Value& v = lookup(chosen->name(), where);
  int out = -1;
  DecisionRule rule;
  if (v.is_label) {
    out = v.label_scores;  // a classifier whose only output is its label: report its scores
  } else {
    out = dyn(v, where).node;
  }
  if (v.rule_node >= 0) {
    rule = DecisionRule::argmax_of(v.rule_node);
    rule.class_labels = v.class_labels;
  }
  if (!rule_value.empty()) {
    const std::string mw = fmt::format("metadata '{}'", kMetaRule);
    const nlohmann::json& j = meta[kMetaRule];
    const auto kind = j.find("kind");
    if (kind == j.end() || !kind->is_string()) fail(mw, "expected a string \"kind\"");
    const int node = dyn(lookup(rule_value, mw), mw).node;
    if (*kind == "threshold") {
      const auto idx = j.find("index");
      const auto thr = j.find("threshold");
      if (idx == j.end() || !idx->is_number_integer() || thr == j.end() || !thr->is_number()) {
        fail(mw, "expected an integer \"index\" and a number \"threshold\"");
      }
      const auto i = idx->get<std::int64_t>();
      if (i < 0 || i >= b_->width(node)) fail(mw, fmt::format("index {} is out of range", i));
      rule = DecisionRule::threshold_on(node, thr->get<double>(), static_cast<int>(i));
    } else if (*kind == "argmax") {
      rule = DecisionRule::argmax_of(node);
    } else if (*kind == "direct") {
      rule = DecisionRule::direct(node);
    } else {
      fail(mw, "\"kind\" must be threshold, argmax or direct");
    }
  }
  if (const auto it = meta.find(kMetaLabels); it != meta.end()) {
    rule.class_labels = json_strings(it->second, path_, kMetaLabels);
  }
  const int width = b_->width(out);
  std::vector<std::string> out_names;
  out_names.reserve(static_cast<std::size_t>(width));
  for (int i = 0; i < width; ++i) {
    out_names.push_back(width == 1 ? chosen->name() : fmt::format("{}[{}]", chosen->name(), i));
  }
  if (const auto it = meta.find(kMetaOutputs); it != meta.end()) {
    std::vector<std::string> m = json_strings(it->second, path_, kMetaOutputs);
    if (static_cast<int>(m.size()) != width) {
      fail(fmt::format("metadata '{}'", kMetaOutputs), fmt::format("{} names for {} outputs", m.size(), width));
    }
    out_names = std::move(m);
  }
  return b_->finish(out, std::move(rule), std::move(out_names));
}

}  // namespace

Model parse_onnx(const std::string& bytes, const std::string& path) {
  onnx::ModelProto mp;
  if (!mp.ParseFromString(bytes)) throw InputError(path, "", "not a valid ONNX protobuf");
  return Loader(path).load(mp);
}

Model load_onnx(const std::string& path) { return parse_onnx(read_file(path), path); }

}  // namespace witness
