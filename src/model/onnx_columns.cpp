// ONNX loader: skl2onnx-shaped pipelines. The preprocessing between the raw-column inputs and the
// classifier is read abstractly, element by element, as references to raw columns (a value, a
// missing-value test, a one-hot indicator of some categories, an ordinal code, each after an affine
// map); the elements that reach the classifier become its inputs. See onnx_internal.h.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "model/onnx_internal.h"

namespace witness::onnx_detail {
namespace {

// One element of a preprocessed tensor, in terms of one raw column.
struct Ref {
  enum class Kind : std::uint8_t { Value, IsMissing, Indicator, Code };
  int column = -1;
  Kind kind = Kind::Value;
  std::vector<std::string> labels;  // Indicator: the categories that make it 1
  Normalisation norm;               // Value, Code: the affine map applied so far
};

// A value of the graph while the preprocessing is read: references per row, or a constant.
struct LValue {
  enum class Kind : std::uint8_t { Refs, Numbers, Strings };
  Kind kind = Kind::Refs;
  Dims dims;  // Refs: per-row dims (the batch is implicit); constants: all dims
  std::vector<Ref> refs;
  std::vector<double> numbers;
  std::vector<std::string> strings;
};

struct ColumnState {
  std::string name;
  bool text = false;     // a string input
  bool integer = false;  // an integer input
  int type = 0;          // the declared element type (TensorProto::DataType), for messages
  std::optional<std::vector<std::string>> categories;
  bool one_hot = false;
  std::string missing;
  std::string step;       // the encoder, for messages
  std::string norm_step;  // the scaler
};

std::string number_label(double v) {
  if (std::floor(v) == v && std::fabs(v) < 9.0e15) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{}", v);
}

// The ops read here; any other op that reads references ends the preprocessing.
const std::set<std::pair<std::string, std::string>>& lifted_ops() {
  static const std::set<std::pair<std::string, std::string>> ops = {
      {"", "Identity"},
      {"", "Reshape"},
      {"", "Flatten"},
      {"", "Squeeze"},
      {"", "Unsqueeze"},
      {"", "Cast"},
      {"", "Concat"},
      {"", "Gather"},
      {"", "Split"},
      {"", "ReduceSum"},
      {"", "Where"},
      {"", "Mul"},
      {"", "Add"},
      {"", "Sub"},
      {"", "Div"},
      {"ai.onnx.ml", "ArrayFeatureExtractor"},
      {"ai.onnx.ml", "LabelEncoder"},
      {"ai.onnx.ml", "CategoryMapper"},
      {"ai.onnx.ml", "Imputer"},
      {"ai.onnx.ml", "OneHotEncoder"},
      {"ai.onnx.ml", "Scaler"},
      {"ai.onnx.ml", "FeatureVectorizer"},
  };
  return ops;
}

std::string domain_of(const onnx::NodeProto& n) { return n.domain() == "ai.onnx" ? std::string() : n.domain(); }

// "tensor(float)", as ONNX names input types.
std::string type_name(int type) {
  std::string name = Proto::DataType_IsValid(type) ? Proto::DataType_Name(type) : std::to_string(type);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return "tensor(" + name + ")";
}

class ColumnLifter {
 public:
  ColumnLifter(const onnx::ModelProto& mp, std::string path) : mp_(mp), path_(std::move(path)), h_(path_) {
    h_.set_opsets(mp_);
  }

  LiftedColumns lift();

 private:
  using Ctx = Loader::Ctx;

  [[noreturn]] void fail(const std::string& where, const std::string& what) const { h_.fail(where, what); }
  [[noreturn]] void unsupported(const std::string& where, const std::string& what) const {
    h_.unsupported(where, what);
  }

  void add_inputs();
  // The value `name` if it is a reference tensor or a constant the preprocessing can read.
  const LValue* value(const std::string& name);
  const LValue& need(const Ctx& c, int slot, const char* what);
  const LValue& refs(const Ctx& c, int slot);
  std::vector<double> numbers(const Ctx& c, int slot, const char* what);
  void set(const Ctx& c, int slot, LValue v);
  void convert(const Ctx& c);

  // Ops.
  void reshape(const Ctx& c, const LValue& x, Dims dims);
  void concat(const Ctx& c, const std::vector<const LValue*>& parts, std::int64_t axis);
  void gather(const Ctx& c, const LValue& x, const std::vector<std::int64_t>& idx, const Dims& idx_dims,
              std::int64_t axis);
  void affine(const Ctx& c);
  void label_encoder(const Ctx& c, bool category_mapper);
  void imputer(const Ctx& c);
  void one_hot(const Ctx& c);
  void scaler(const Ctx& c);
  void where_missing(const Ctx& c);
  void reduce_sum(const Ctx& c);
  void split(const Ctx& c);

  std::int64_t axis_of(const Ctx& c, std::int64_t axis, std::size_t per_row_rank) const;
  ColumnState& column_of(const Ref& r) { return columns_[static_cast<std::size_t>(r.column)]; }
  // For an op that reads `r`'s raw values as text (`text`) or as numbers (`how`: the op and its
  // attribute): refuses a column declared tensor(string) read as numbers, or the reverse.
  void need_kind(const Ctx& c, const Ref& r, bool text, const std::string& how);
  void set_categories(const Ctx& c, ColumnState& col, std::vector<std::string> labels, bool one_hot);
  void set_missing(const Ctx& c, ColumnState& col, const std::string& fill) const;
  onnx::ModelProto rewrite(const std::vector<bool>& lifted) const;

  const onnx::ModelProto& mp_;
  std::string path_;
  Loader h_;  // tensor and attribute parsing
  std::unordered_map<std::string, LValue> values_;
  std::unordered_map<std::string, const onnx::TensorProto*> initializers_;
  std::vector<ColumnState> columns_;
  std::vector<std::string> boundary_;  // reference tensors the classifier reads, in order of reading
};

std::int64_t ColumnLifter::axis_of(const Ctx& c, std::int64_t axis, std::size_t per_row_rank) const {
  const auto rank = static_cast<std::int64_t>(per_row_rank) + 1;
  if (axis < -rank || axis >= rank) fail(c.where, fmt::format("axis {} is out of range for rank {}", axis, rank));
  if (axis < 0) axis += rank;
  if (axis == 0) unsupported(c.where, "works along the batch axis");
  return axis - 1;  // along the per-row dims
}

void ColumnLifter::add_inputs() {
  for (const auto& in : mp_.graph().input()) {
    if (initializers_.count(in.name()) != 0) continue;
    const std::string where = fmt::format("input '{}'", in.name());
    if (!in.type().has_tensor_type()) unsupported(where, "is not a tensor");
    const auto& tt = in.type().tensor_type();
    const int type = tt.elem_type();
    if (type != Proto::STRING && !float_type(type) && !integer_type(type))
      unsupported(where, fmt::format("has element type {}", type));
    Dims per_row;
    if (tt.has_shape()) {
      const auto& dims = tt.shape().dim();
      for (int i = 1; i < dims.size(); ++i) {
        if (!dims[i].has_dim_value() || dims[i].dim_value() <= 0)
          fail(where, fmt::format("dimension {} must be a fixed positive size; expected [N, 1]", i));
        per_row.push_back(dims[i].dim_value());
      }
    }
    const std::int64_t width = count_of(per_row, 4096);
    if (width <= 0) fail(where, fmt::format("has per-row shape {}; expected [N, 1]", dims_str(per_row)));
    LValue v;
    v.dims = per_row;
    for (std::int64_t i = 0; i < width; ++i) {
      ColumnState col;
      col.name = width == 1 ? in.name() : fmt::format("{}[{}]", in.name(), i);
      col.text = type == Proto::STRING;
      col.integer = integer_type(type);
      col.type = type;
      v.refs.push_back(
          Ref{.column = static_cast<int>(columns_.size()), .kind = Ref::Kind::Value, .labels = {}, .norm = {}});
      columns_.push_back(std::move(col));
    }
    values_.emplace(in.name(), std::move(v));
  }
  if (columns_.empty()) fail("graph", "has no inputs");
}

const LValue* ColumnLifter::value(const std::string& name) {
  if (const auto it = values_.find(name); it != values_.end()) return &it->second;
  if (const auto it = initializers_.find(name); it != initializers_.end()) {
    const onnx::TensorProto& t = *it->second;
    LValue v;
    v.dims.assign(t.dims().begin(), t.dims().end());
    if (t.data_type() == Proto::STRING) {
      v.kind = LValue::Kind::Strings;
      v.strings = h_.parse_strings(t, fmt::format("initializer '{}'", name));
    } else {
      v.kind = LValue::Kind::Numbers;
      v.numbers = h_.parse_tensor(t, fmt::format("initializer '{}'", name)).data;
    }
    return &values_.emplace(name, std::move(v)).first->second;
  }
  return nullptr;
}

const LValue& ColumnLifter::need(const Ctx& c, int slot, const char* what) {
  if (slot >= c.node.input_size() || c.node.input(slot).empty())
    fail(c.where, fmt::format("input {} ({}) is missing", slot, what));
  const LValue* v = value(c.node.input(slot));
  if (v == nullptr)
    unsupported(c.where, fmt::format("{} (input {}) must be a constant or a preprocessed column", what, slot));
  return *v;
}

const LValue& ColumnLifter::refs(const Ctx& c, int slot) {
  const LValue& v = need(c, slot, "X");
  if (v.kind != LValue::Kind::Refs) unsupported(c.where, "expected a preprocessed column as input X");
  return v;
}

std::vector<double> ColumnLifter::numbers(const Ctx& c, int slot, const char* what) {
  const LValue& v = need(c, slot, what);
  if (v.kind != LValue::Kind::Numbers) unsupported(c.where, fmt::format("{} must be a numeric constant", what));
  return v.numbers;
}

void ColumnLifter::set(const Ctx& c, int slot, LValue v) {
  if (slot >= c.node.output_size() || c.node.output(slot).empty()) return;
  if (!values_.emplace(c.node.output(slot), std::move(v)).second)
    fail(c.where, fmt::format("redefines value '{}'", c.node.output(slot)));
}

void ColumnLifter::need_kind(const Ctx& c, const Ref& r, bool text, const std::string& how) {
  const ColumnState& col = column_of(r);
  if (r.kind != Ref::Kind::Value || col.text == text) return;
  fail(c.where, fmt::format("column '{}' is declared {}, but {} reads it as {}", col.name, type_name(col.type), how,
                            text ? "text" : "numbers"));
}

void ColumnLifter::set_categories(const Ctx& c, ColumnState& col, std::vector<std::string> labels, bool one_hot) {
  if (col.categories) {
    if (*col.categories != labels || col.one_hot != one_hot)
      unsupported(
          c.where,
          fmt::format("column '{}' is encoded twice, in two ways; witness reads one encoding per column", col.name));
    return;
  }
  std::set<std::string_view> seen;
  for (const std::string& l : labels) {
    if (!seen.insert(l).second) fail(c.where, fmt::format("category '{}' of '{}' is listed twice", l, col.name));
  }
  if (labels.empty()) fail(c.where, fmt::format("column '{}' has no categories", col.name));
  col.categories = std::move(labels);
  col.one_hot = one_hot;
  col.step = fmt::format("{} {}", c.node.op_type(), c.where);
}

void ColumnLifter::set_missing(const Ctx& c, ColumnState& col, const std::string& fill) const {
  if (!col.missing.empty() && col.missing != fill)
    unsupported(c.where, fmt::format("column '{}' is imputed twice", col.name));
  col.missing = fill;
}

// --- shape ops ---------------------------------------------------------------------------------

void ColumnLifter::reshape(const Ctx& c, const LValue& x, Dims dims) {
  const std::int64_t n = count_of(dims, kMaxWidth);
  if (n != static_cast<std::int64_t>(x.refs.size()))
    fail(c.where, fmt::format("reshapes {} values a row into {}", x.refs.size(), dims_str(dims)));
  LValue out = x;
  out.dims = std::move(dims);
  set(c, 0, std::move(out));
}

void ColumnLifter::concat(const Ctx& c, const std::vector<const LValue*>& parts, std::int64_t full_axis) {
  const std::size_t rank = parts.front()->dims.size();
  const auto axis = static_cast<std::size_t>(axis_of(c, full_axis, rank));
  Dims dims = parts.front()->dims;
  dims[axis] = 0;
  for (const LValue* p : parts) {
    if (p->dims.size() != rank) fail(c.where, "concatenates tensors of different ranks");
    for (std::size_t k = 0; k < rank; ++k) {
      if (k != axis && p->dims[k] != parts.front()->dims[k]) fail(c.where, "concatenates tensors of other shapes");
    }
    dims[axis] += p->dims[axis];
  }
  LValue out;
  out.dims = dims;
  const std::int64_t outer = span_count(dims, 0, axis);
  for (std::int64_t o = 0; o < outer; ++o) {
    for (const LValue* p : parts) {
      const std::int64_t block = span_count(p->dims, axis, rank);
      for (std::int64_t i = 0; i < block; ++i) out.refs.push_back(p->refs[static_cast<std::size_t>(o * block + i)]);
    }
  }
  set(c, 0, std::move(out));
}

void ColumnLifter::gather(const Ctx& c, const LValue& x, const std::vector<std::int64_t>& idx, const Dims& idx_dims,
                          std::int64_t axis) {
  if (x.dims.empty()) unsupported(c.where, "gathers from one value a row");
  const auto a = static_cast<std::size_t>(axis);
  std::vector<std::int64_t> sel;
  for (std::int64_t i : idx) {
    if (i < 0) i += x.dims[a];
    if (i < 0 || i >= x.dims[a]) fail(c.where, fmt::format("index {} is out of range [0, {})", i, x.dims[a]));
    sel.push_back(i);
  }
  LValue out;
  out.dims.assign(x.dims.begin(), x.dims.begin() + static_cast<std::ptrdiff_t>(a));
  out.dims.insert(out.dims.end(), idx_dims.begin(), idx_dims.end());
  out.dims.insert(out.dims.end(), x.dims.begin() + static_cast<std::ptrdiff_t>(a) + 1, x.dims.end());
  for (const int i : take(iota_map(static_cast<std::int64_t>(x.refs.size())), x.dims, a, sel))
    out.refs.push_back(x.refs[static_cast<std::size_t>(i)]);
  set(c, 0, std::move(out));
}

void ColumnLifter::split(const Ctx& c) {
  const LValue& x = refs(c, 0);
  const auto axis = static_cast<std::size_t>(axis_of(c, h_.attr_int(c, "axis", 0), x.dims.size()));
  std::vector<std::int64_t> sizes = h_.attr_ints(c, "split");
  if (c.node.input_size() > 1 && !c.node.input(1).empty()) {
    for (const double v : numbers(c, 1, "split")) sizes.push_back(h_.to_int(v, c.where, "split sizes"));
  }
  if (sizes.empty()) {
    const auto parts = static_cast<std::int64_t>(c.node.output_size());
    if (parts == 0 || x.dims[axis] % parts != 0) fail(c.where, "cannot split evenly");
    sizes.assign(static_cast<std::size_t>(parts), x.dims[axis] / parts);
  }
  if (static_cast<int>(sizes.size()) != c.node.output_size()) fail(c.where, "split sizes do not match the outputs");
  // Checked before any index is taken: a negative size would select positions before the axis.
  std::int64_t total = 0;
  for (const std::int64_t k : sizes) {
    if (k < 0 || k > x.dims[axis]) fail(c.where, fmt::format("split size {} for an axis of {}", k, x.dims[axis]));
    total += k;
  }
  if (total != x.dims[axis])
    fail(c.where, fmt::format("split sizes add up to {}, not the axis' {}", total, x.dims[axis]));
  std::int64_t at = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    std::vector<std::int64_t> sel;
    for (std::int64_t i = 0; i < sizes[k]; ++i) sel.push_back(at + i);
    at += sizes[k];
    if (at > x.dims[axis]) fail(c.where, "split sizes exceed the axis");
    LValue out;
    out.dims = x.dims;
    out.dims[axis] = sizes[k];
    for (const int i : take(iota_map(static_cast<std::int64_t>(x.refs.size())), x.dims, axis, sel))
      out.refs.push_back(x.refs[static_cast<std::size_t>(i)]);
    set(c, static_cast<int>(k), std::move(out));
  }
}

// --- preprocessing ops -------------------------------------------------------------------------

// x op constant: composes the affine map of every element (one map per column, in one of the
// forms Normalisation holds, so the schema computes exactly what the graph does).
void ColumnLifter::affine(const Ctx& c) {
  const std::string& op = c.node.op_type();
  const LValue& x = refs(c, 0);
  const LValue& k = need(c, 1, "the constant operand");
  if (k.kind != LValue::Kind::Numbers) unsupported(c.where, fmt::format("{} of two preprocessed columns", op));
  const std::size_t n = x.refs.size();
  const std::size_t last = x.dims.empty() ? 1 : static_cast<std::size_t>(x.dims.back());
  if (k.numbers.size() != 1 && k.numbers.size() != last)
    unsupported(c.where, fmt::format("{} by a constant of {} values over {} per row", op, k.numbers.size(), n));
  LValue out = x;
  for (std::size_t i = 0; i < n; ++i) {
    Ref& r = out.refs[i];
    const double v = k.numbers.size() == 1 ? k.numbers[0] : k.numbers[i % last];
    if (r.kind != Ref::Kind::Value && r.kind != Ref::Kind::Code)
      unsupported(c.where, fmt::format("{} of a one-hot column of '{}'", op, column_of(r).name));
    need_kind(c, r, false, op);
    if (!std::isfinite(v)) fail(c.where, fmt::format("{} by {} (input 1); expected a finite constant", op, v));
    Normalisation& m = r.norm;
    using F = Normalisation::Form;
    const bool none = m.form == F::None;
    const bool identity = none || (m.form == F::MeanStd && m.a == 0.0 && m.b == 1.0);  // (x - 0) / 1
    if (identity && op == "Mul") {
      m = {F::ScaleOffset, v, 0.0};
    } else if (none && op == "Add") {
      m = {F::ScaleOffset, 1.0, v};
    } else if (none && op == "Sub") {
      m = {F::MeanStd, v, 1.0};
    } else if (none && op == "Div") {
      m = {F::MeanStd, 0.0, v};
    } else if ((m.form == F::ScaleOffset && m.b == 0.0 && op == "Add") ||
               (m.form == F::MeanStd && m.b == 1.0 && op == "Div")) {
      m.b = v;
    } else if (m.form == F::ScaleOffset && m.b == 0.0 && op == "Sub") {
      m.b = -v;  // x * a - v == x * a + (-v) exactly
    } else if (m.form == F::MeanStd && m.b == 1.0 && op == "Mul") {
      m = {F::CenterScale, m.a, v};
    } else {
      unsupported(c.where, fmt::format("{} after {} on '{}': witness holds one affine map per column", op,
                                       m.describe("x"), column_of(r).name));
    }
    if ((m.form == F::ScaleOffset && m.a == 0.0) || (m.form != F::ScaleOffset && m.b == 0.0))
      unsupported(c.where, fmt::format("the map {} of '{}' is not invertible", m.describe("x"), column_of(r).name));
    column_of(r).norm_step = fmt::format("{} {}", op, c.where);
  }
  set(c, 0, std::move(out));
}

void ColumnLifter::label_encoder(const Ctx& c, bool category_mapper) {
  const LValue& x = need(c, 0, "X");
  std::vector<std::string> key_text;
  std::vector<std::int64_t> values;
  bool text_keys = true;  // the keys are strings: X holds text
  std::string keys_attr = "cats_strings";
  if (category_mapper) {
    key_text = h_.attr_strings(c, "cats_strings");
    values = h_.attr_ints(c, "cats_int64s");
    if (key_text.size() != values.size()) fail(c.where, "cats_strings and cats_int64s differ in length");
  } else {
    // LabelEncoder 1 (ai.onnx.ml 1) has classes_strings and defaults instead of keys and values.
    if (h_.ml_opset() < 2) unsupported(c.where, "LabelEncoder of ai.onnx.ml opset 1 (witness reads opset 2 on)");
    int given = 0;
    for (const char* k : {"keys_strings", "keys_int64s", "keys_floats"}) {
      if (h_.attr(c, k) != nullptr) {
        ++given;
        keys_attr = k;
      }
    }
    if (given > 1) fail(c.where, "a LabelEncoder has one of keys_strings, keys_int64s and keys_floats, not several");
    text_keys = keys_attr == "keys_strings";
    key_text = h_.attr_strings(c, "keys_strings");
    for (const std::int64_t k : h_.attr_ints(c, "keys_int64s"))
      key_text.push_back(number_label(static_cast<double>(k)));
    for (const double k : h_.attr_finite(c, "keys_floats")) key_text.push_back(number_label(k));
    values = h_.attr_ints(c, "values_int64s");
  }
  if (x.kind != LValue::Kind::Refs) {
    // A constant: skl2onnx makes the string imputer's fill value this way (int64 0 -> the value).
    const std::vector<std::string> value_strings = h_.attr_strings(c, "values_strings");
    if (category_mapper || value_strings.size() != key_text.size() || x.kind != LValue::Kind::Numbers)
      unsupported(c.where, "a LabelEncoder of a constant other than integer keys to strings");
    LValue out;
    out.kind = LValue::Kind::Strings;
    out.dims = x.dims;
    const std::string dflt = h_.attr_string(c, "default_string", "_Unused");
    for (const double v : x.numbers) {
      const auto it = std::find(key_text.begin(), key_text.end(), number_label(v));
      out.strings.push_back(it == key_text.end() ? dflt
                                                 : value_strings[static_cast<std::size_t>(it - key_text.begin())]);
    }
    set(c, 0, std::move(out));
    return;
  }
  if (values.size() != key_text.size() || values.empty())
    unsupported(c.where, "a LabelEncoder other than labels -> integer codes (or the string imputer's test)");
  LValue out = x;
  // skl2onnx's string imputer: 1 where the value is the missing marker, else 0.
  const bool missing_test = values.size() == 1 && values[0] == 1 && h_.attr_int(c, "default_int64", -1) == 0;
  for (Ref& r : out.refs) {
    if (r.kind != Ref::Kind::Value || r.norm.form != Normalisation::Form::None)
      unsupported(c.where, fmt::format("encodes column '{}' after it was encoded", column_of(r).name));
    need_kind(c, r, text_keys, fmt::format("{} ({})", c.node.op_type(), keys_attr));
    if (missing_test) {
      if (!key_text[0].empty())
        unsupported(c.where,
                    fmt::format("the missing marker '{}' (only empty cells are read as missing)", key_text[0]));
      r.kind = Ref::Kind::IsMissing;
      continue;
    }
    // Codes 0..K-1: the column's categories in code order.
    std::vector<std::string> labels(values.size());
    std::vector<bool> seen(values.size(), false);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const std::int64_t v = values[i];
      if (v < 0 || v >= static_cast<std::int64_t>(values.size()) || seen[static_cast<std::size_t>(v)])
        unsupported(c.where, "codes other than 0..K-1, each once");
      seen[static_cast<std::size_t>(v)] = true;
      labels[static_cast<std::size_t>(v)] = key_text[i];
    }
    set_categories(c, column_of(r), std::move(labels), false);
    r.kind = Ref::Kind::Code;
  }
  set(c, 0, std::move(out));
}

void ColumnLifter::imputer(const Ctx& c) {
  const LValue& x = refs(c, 0);
  std::vector<double> fill = h_.attr_finite(c, "imputed_value_floats");
  const std::vector<std::int64_t> ints = h_.attr_ints(c, "imputed_value_int64s");
  const bool on_ints = fill.empty() && !ints.empty();
  if (!fill.empty() && !ints.empty())
    fail(c.where, "an Imputer has imputed_value_floats or imputed_value_int64s, not both");
  for (const std::int64_t v : ints) fill.push_back(static_cast<double>(v));
  if (fill.empty()) fail(c.where, "an Imputer without imputed values");
  for (const Ref& r : x.refs) {
    need_kind(c, r, false, on_ints ? "Imputer (imputed_value_int64s)" : "Imputer (imputed_value_floats)");
    if (r.kind == Ref::Kind::Value && column_of(r).integer != on_ints) {
      fail(c.where,
           fmt::format("column '{}' is declared {}, but the Imputer's {} are for {} columns", column_of(r).name,
                       type_name(column_of(r).type), on_ints ? "imputed_value_int64s" : "imputed_value_floats",
                       on_ints ? "integer" : "float"));
    }
  }
  const std::size_t last = x.dims.empty() ? 1 : static_cast<std::size_t>(x.dims.back());
  if (fill.size() != 1 && fill.size() != last) fail(c.where, "imputed values do not match the columns");
  if (on_ints) {
    // An integer input cannot hold NaN; skl2onnx's replaced value is INT64_MIN, which never occurs.
    if (h_.attr_int(c, "replaced_value_int64", 0) != std::numeric_limits<std::int64_t>::min())
      unsupported(c.where, "an integer Imputer with a replaced value other than the never-used INT64_MIN");
    set(c, 0, x);
    return;
  }
  if (!std::isnan(h_.attr_float(c, "replaced_value_float", 0.0)))
    unsupported(c.where, "an Imputer that replaces a number other than NaN");
  for (std::size_t i = 0; i < x.refs.size(); ++i) {
    const Ref& r = x.refs[i];
    if (r.kind != Ref::Kind::Value || r.norm.form != Normalisation::Form::None)
      unsupported(c.where, fmt::format("imputes column '{}' after it was encoded", column_of(r).name));
    ColumnState& col = column_of(r);
    set_missing(c, col, number_label(fill.size() == 1 ? fill[0] : fill[i % last]));
  }
  set(c, 0, x);
}

void ColumnLifter::where_missing(const Ctx& c) {
  const LValue& cond = refs(c, 0);
  const LValue& fill = need(c, 1, "the fill value");
  const LValue& x = refs(c, 2);
  if (fill.kind != LValue::Kind::Strings && fill.kind != LValue::Kind::Numbers)
    unsupported(c.where, "Where over preprocessed columns other than an imputer's (test, fill value, column)");
  const std::size_t n = x.refs.size();
  const std::size_t count = fill.kind == LValue::Kind::Strings ? fill.strings.size() : fill.numbers.size();
  if (cond.refs.size() != n || (count != 1 && count != n)) unsupported(c.where, "Where of differently shaped operands");
  for (std::size_t i = 0; i < n; ++i) {
    const Ref& t = cond.refs[i];
    const Ref& r = x.refs[i];
    if (t.kind != Ref::Kind::IsMissing || r.kind != Ref::Kind::Value || t.column != r.column)
      unsupported(c.where, "Where other than an imputer's (a missing-value test, the fill value, the same column)");
    const std::size_t k = count == 1 ? 0 : i;
    need_kind(c, r, fill.kind == LValue::Kind::Strings, "Where (an imputer's fill value)");
    if (fill.kind == LValue::Kind::Numbers && !std::isfinite(fill.numbers[k]))
      fail(c.where, fmt::format("fills '{}' with {}; expected a finite number", column_of(r).name, fill.numbers[k]));
    set_missing(c, column_of(r), fill.kind == LValue::Kind::Strings ? fill.strings[k] : number_label(fill.numbers[k]));
  }
  set(c, 0, x);
}

void ColumnLifter::one_hot(const Ctx& c) {
  const LValue& x = refs(c, 0);
  std::vector<std::string> labels = h_.attr_strings(c, "cats_strings");
  const std::vector<std::int64_t> ints = h_.attr_ints(c, "cats_int64s");
  if (labels.empty() == ints.empty()) fail(c.where, "a OneHotEncoder needs cats_strings or cats_int64s (one of them)");
  // zeros=1 gives all zeros for an unknown category, zeros=0 fails on one; witness's domain holds
  // known categories only and its data readers refuse others, so both read the same.
  (void)h_.attr_flag(c, "zeros", 1);
  for (const std::int64_t v : ints) labels.push_back(number_label(static_cast<double>(v)));
  LValue out;
  out.dims = x.dims;
  out.dims.push_back(static_cast<std::int64_t>(labels.size()));
  for (const Ref& r : x.refs) {
    if (r.kind != Ref::Kind::Value || r.norm.form != Normalisation::Form::None)
      unsupported(c.where, fmt::format("encodes column '{}' after it was encoded or scaled", column_of(r).name));
    need_kind(c, r, ints.empty(), ints.empty() ? "OneHotEncoder (cats_strings)" : "OneHotEncoder (cats_int64s)");
    set_categories(c, column_of(r), labels, true);
    for (const std::string& l : labels)
      out.refs.push_back(Ref{.column = r.column, .kind = Ref::Kind::Indicator, .labels = {l}, .norm = {}});
  }
  set(c, 0, std::move(out));
}

void ColumnLifter::scaler(const Ctx& c) {
  const LValue& x = refs(c, 0);
  const std::vector<double> offset = h_.attr_finite(c, "offset");
  const std::vector<double> scale = h_.attr_finite(c, "scale");
  const std::size_t last = x.dims.empty() ? 1 : static_cast<std::size_t>(x.dims.back());
  auto at = [&](const std::vector<double>& v, std::size_t i, double dflt) {
    if (v.empty()) return dflt;
    if (v.size() == 1) return v[0];
    if (v.size() != last) fail(c.where, fmt::format("{} values for {} columns", v.size(), last));
    return v[i % last];
  };
  LValue out = x;
  for (std::size_t i = 0; i < out.refs.size(); ++i) {
    Ref& r = out.refs[i];
    if ((r.kind != Ref::Kind::Value && r.kind != Ref::Kind::Code) || r.norm.form != Normalisation::Form::None)
      unsupported(c.where, fmt::format("scales column '{}' after it was one-hot encoded or scaled", column_of(r).name));
    need_kind(c, r, false, "Scaler");
    r.norm = {Normalisation::Form::CenterScale, at(offset, i, 0.0), at(scale, i, 1.0)};
    if (r.norm.b == 0.0) unsupported(c.where, fmt::format("scale 0 for '{}' is not invertible", column_of(r).name));
    column_of(r).norm_step = fmt::format("Scaler {}", c.where);
  }
  set(c, 0, std::move(out));
}

void ColumnLifter::reduce_sum(const Ctx& c) {
  const LValue& x = refs(c, 0);
  std::vector<std::int64_t> axes = h_.attr_ints(c, "axes");
  if (c.node.input_size() > 1 && !c.node.input(1).empty()) {
    for (const double v : numbers(c, 1, "axes")) axes.push_back(h_.to_int(v, c.where, "axes"));
  }
  if (axes.size() != 1 || axis_of(c, axes[0], x.dims.size()) != static_cast<std::int64_t>(x.dims.size()) - 1)
    unsupported(c.where, "ReduceSum other than over the last axis (infrequent categories)");
  const std::int64_t last = x.dims.back();
  LValue out;
  out.dims = x.dims;
  out.dims.back() = 1;
  if (h_.attr_flag(c, "keepdims", 1) == 0) out.dims.pop_back();
  for (std::size_t o = 0; o < x.refs.size(); o += static_cast<std::size_t>(last)) {
    Ref sum{.column = x.refs[o].column, .kind = Ref::Kind::Indicator, .labels = {}, .norm = {}};
    for (std::size_t i = o; i < o + static_cast<std::size_t>(last); ++i) {
      const Ref& r = x.refs[i];
      if (r.kind != Ref::Kind::Indicator || r.column != sum.column)
        unsupported(c.where, "ReduceSum of other than one column's one-hot indicators");
      sum.labels.insert(sum.labels.end(), r.labels.begin(), r.labels.end());
    }
    out.refs.push_back(std::move(sum));
  }
  set(c, 0, std::move(out));
}

void ColumnLifter::convert(const Ctx& c) {
  const std::string& op = c.node.op_type();
  if (op == "Identity" || op == "Cast") {
    const LValue& x = need(c, 0, "input");
    if (op == "Cast" && x.kind == LValue::Kind::Refs) {
      const std::int64_t to = h_.attr_int(c, "to", 1);
      for (const Ref& r : x.refs) {
        if (column_of(r).text && r.kind == Ref::Kind::Value && to != Proto::STRING)
          unsupported(c.where, fmt::format("casts the text of '{}' to numbers", column_of(r).name));
        // Numbers as text depend on the runtime's formatting, which witness does not reproduce.
        if (!column_of(r).text && to == Proto::STRING)
          unsupported(c.where, fmt::format("casts the numbers of '{}' to text", column_of(r).name));
      }
    }
    set(c, 0, x);
  } else if (op == "Reshape") {
    const LValue& x = refs(c, 0);
    std::vector<std::int64_t> shape;
    for (const double v : numbers(c, 1, "shape")) shape.push_back(h_.to_int(v, c.where, "the shape"));
    if (shape.empty()) fail(c.where, "reshapes a batch into a scalar");
    // The first dim is the batch; a -1 elsewhere takes what is left.
    Dims dims(shape.begin() + 1, shape.end());
    std::int64_t known = 1, unknown = -1;
    for (std::size_t k = 0; k < dims.size(); ++k) {
      if (dims[k] == -1) {
        unknown = static_cast<std::int64_t>(k);
      } else {
        known *= std::max<std::int64_t>(dims[k], 1);
      }
    }
    if (unknown >= 0) dims[static_cast<std::size_t>(unknown)] = static_cast<std::int64_t>(x.refs.size()) / known;
    reshape(c, x, dims);
  } else if (op == "Flatten") {
    const LValue& x = refs(c, 0);
    if (h_.attr_int(c, "axis", 1) != 1) unsupported(c.where, "Flatten with an axis other than 1");
    reshape(c, x, {static_cast<std::int64_t>(x.refs.size())});
  } else if (op == "Squeeze" || op == "Unsqueeze") {
    const LValue& x = refs(c, 0);
    std::vector<std::int64_t> axes = h_.attr_ints(c, "axes");
    if (c.node.input_size() > 1 && !c.node.input(1).empty()) {
      for (const double v : numbers(c, 1, "axes")) axes.push_back(h_.to_int(v, c.where, "axes"));
    }
    Dims dims = x.dims;
    if (op == "Squeeze") {
      if (axes.empty()) {
        std::erase(dims, 1);
      } else {
        std::vector<std::int64_t> at;
        at.reserve(axes.size());
        for (const std::int64_t a : axes) at.push_back(axis_of(c, a, dims.size()));
        std::sort(at.rbegin(), at.rend());
        for (const std::int64_t a : at) dims.erase(dims.begin() + a);
      }
    } else {
      std::sort(axes.begin(), axes.end());
      for (std::int64_t a : axes) {
        if (a < 0) a += static_cast<std::int64_t>(dims.size()) + 2;
        if (a <= 0 || a > static_cast<std::int64_t>(dims.size()) + 1) fail(c.where, "axis out of range");
        dims.insert(dims.begin() + (a - 1), 1);
      }
    }
    reshape(c, x, dims);
  } else if (op == "Concat" || op == "FeatureVectorizer") {
    std::vector<const LValue*> parts;
    for (int i = 0; i < c.node.input_size(); ++i) {
      parts.push_back(&refs(c, i));
      if (op == "FeatureVectorizer" && parts.back()->dims.empty()) {
        LValue scalar = *parts.back();
        scalar.dims = {1};
        values_[c.node.input(i) + "#vector"] = scalar;
        parts.back() = &values_[c.node.input(i) + "#vector"];
      }
    }
    concat(c, parts, op == "Concat" ? h_.attr_int(c, "axis", 1) : -1);
  } else if (op == "Gather") {
    const LValue& x = refs(c, 0);
    const LValue& idx = need(c, 1, "indices");
    if (idx.kind != LValue::Kind::Numbers) unsupported(c.where, "Gather with indices that are not a constant");
    std::vector<std::int64_t> sel;
    for (const double v : idx.numbers) sel.push_back(h_.to_int(v, c.where, "indices"));
    gather(c, x, sel, idx.dims, axis_of(c, h_.attr_int(c, "axis", 0), x.dims.size()));
  } else if (op == "ArrayFeatureExtractor") {
    const LValue& x = refs(c, 0);
    const LValue& idx = need(c, 1, "Y (indices)");
    if (idx.kind != LValue::Kind::Numbers)
      unsupported(c.where, "ArrayFeatureExtractor with indices that are not a constant");
    std::vector<std::int64_t> sel;
    for (const double v : idx.numbers) sel.push_back(h_.to_int(v, c.where, "indices"));
    const Dims count{static_cast<std::int64_t>(sel.size())};
    if (x.dims.empty()) unsupported(c.where, "ArrayFeatureExtractor of one value a row");
    gather(c, x, sel, count, static_cast<std::int64_t>(x.dims.size()) - 1);
  } else if (op == "Split") {
    split(c);
  } else if (op == "ReduceSum") {
    reduce_sum(c);
  } else if (op == "Where") {
    where_missing(c);
  } else if (op == "Mul" || op == "Add" || op == "Sub" || op == "Div") {
    affine(c);
  } else if (op == "LabelEncoder" || op == "CategoryMapper") {
    label_encoder(c, op == "CategoryMapper");
  } else if (op == "Imputer") {
    imputer(c);
  } else if (op == "OneHotEncoder") {
    one_hot(c);
  } else if (op == "Scaler") {
    scaler(c);
  } else {
    unsupported(c.where, fmt::format("op '{}' in the preprocessing", op));
  }
}

LiftedColumns ColumnLifter::lift() {
  const onnx::GraphProto& g = mp_.graph();
  if (g.node_size() > kMaxNodes) fail("graph", fmt::format("{} nodes is too many", g.node_size()));
  for (const auto& t : g.initializer()) initializers_.emplace(t.name(), &t);
  add_inputs();
  std::vector<bool> lifted(static_cast<std::size_t>(g.node_size()), false);
  std::unordered_set<std::string> boundary_seen;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    const std::string where =
        n.name().empty() ? fmt::format("node #{} ({})", i, n.op_type()) : fmt::format("node '{}'", n.name());
    bool reads_refs = false, reads_dynamic = false, reads_strings = false;
    for (const auto& in : n.input()) {
      if (in.empty()) continue;
      const LValue* v = value(in);
      if (v == nullptr) {
        reads_dynamic = true;
      } else if (v->kind == LValue::Kind::Refs) {
        reads_refs = true;
      } else if (v->kind == LValue::Kind::Strings) {
        reads_strings = true;
      }
    }
    const bool liftable = lifted_ops().count({domain_of(n), n.op_type()}) != 0;
    // A LabelEncoder of a constant into strings (the imputer's fill value) is read here too.
    const bool const_strings = liftable && !reads_dynamic && n.op_type() == "LabelEncoder";
    if ((reads_refs || reads_strings || const_strings) && liftable && !reads_dynamic) {
      convert(Ctx{n, where});
      lifted[static_cast<std::size_t>(i)] = true;
      continue;
    }
    if (reads_strings && !reads_refs && !liftable) continue;  // e.g. the class names of a label output
    for (const auto& in : n.input()) {
      const LValue* v = in.empty() ? nullptr : value(in);
      if (v != nullptr && v->kind == LValue::Kind::Refs && boundary_seen.insert(in).second) boundary_.push_back(in);
    }
  }
  if (boundary_.empty()) fail("graph", "no preprocessed column reaches a classifier");

  // The columns the classifier reads, in the order of the graph's inputs.
  std::vector<bool> used(columns_.size(), false);
  std::map<int, std::optional<Normalisation>> norm_of;
  std::map<int, bool> value_read;
  for (const std::string& b : boundary_) {
    for (const Ref& r : values_.at(b).refs) {
      const ColumnState& col = columns_[static_cast<std::size_t>(r.column)];
      used[static_cast<std::size_t>(r.column)] = true;
      if (r.kind == Ref::Kind::IsMissing)
        unsupported("graph", fmt::format("the classifier reads whether '{}' is missing", col.name));
      if (r.kind == Ref::Kind::Indicator) {
        if (!col.one_hot) unsupported("graph", fmt::format("column '{}' is read one-hot and as a code", col.name));
        continue;
      }
      if (col.one_hot) unsupported("graph", fmt::format("column '{}' is read one-hot and as a value", col.name));
      if (col.text && r.kind == Ref::Kind::Value)
        unsupported("graph",
                    fmt::format("the text of column '{}' reaches the classifier without an encoder", col.name));
      if (value_read[r.column])
        unsupported("graph", fmt::format("column '{}' is read twice; witness reads one encoding per column", col.name));
      value_read[r.column] = true;
      norm_of[r.column] = r.norm;
    }
  }
  LiftedColumns out;
  std::vector<int> offset(columns_.size(), -1);
  int at = 0;
  for (std::size_t k = 0; k < columns_.size(); ++k) {
    if (!used[k]) continue;
    const ColumnState& col = columns_[k];
    RawColumn rc;
    rc.name = col.name;
    rc.categorical = col.categories.has_value();
    if (col.categories) rc.categories = *col.categories;
    rc.one_hot = col.one_hot;
    if (const auto it = norm_of.find(static_cast<int>(k)); it != norm_of.end() && it->second) rc.norm = *it->second;
    rc.missing = col.missing;
    rc.step = col.step.empty() ? (rc.norm.form == Normalisation::Form::None ? std::string() : col.norm_step) : col.step;
    offset[k] = at;
    at += rc.width();
    out.columns.push_back(std::move(rc));
  }
  for (const std::string& b : boundary_) {
    for (const Ref& r : values_.at(b).refs) {
      const auto k = static_cast<std::size_t>(r.column);
      if (r.kind != Ref::Kind::Indicator) {
        out.sources.push_back({offset[k]});
        continue;
      }
      std::vector<int> src;
      const auto& cats = *columns_[k].categories;
      for (const std::string& l : r.labels)
        src.push_back(offset[k] + static_cast<int>(std::find(cats.begin(), cats.end(), l) - cats.begin()));
      out.sources.push_back(std::move(src));
    }
  }
  out.classifier = rewrite(lifted);
  return out;
}

// The graph from the preprocessed features on: they are its inputs (float), the preprocessing
// nodes are gone, and label outputs (strings or integers) are left out when another output remains.
onnx::ModelProto ColumnLifter::rewrite(const std::vector<bool>& lifted) const {
  onnx::ModelProto out = mp_;
  onnx::GraphProto* g = out.mutable_graph();
  g->clear_input();
  for (const std::string& b : boundary_) {
    onnx::ValueInfoProto* in = g->add_input();
    in->set_name(b);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(Proto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_param("N");
    for (const std::int64_t d : values_.at(b).dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  g->clear_node();
  for (int i = 0; i < mp_.graph().node_size(); ++i) {
    if (!lifted[static_cast<std::size_t>(i)]) *g->add_node() = mp_.graph().node(i);
  }
  auto is_label = [](const onnx::ValueInfoProto& o) {
    return o.type().has_tensor_type() &&
           (o.type().tensor_type().elem_type() == Proto::STRING || integer_type(o.type().tensor_type().elem_type()));
  };
  const bool other = std::any_of(g->output().begin(), g->output().end(), [&](const auto& o) { return !is_label(o); });
  if (other) {
    auto* outputs = g->mutable_output();
    outputs->erase(std::remove_if(outputs->begin(), outputs->end(), is_label), outputs->end());
  }
  return out;
}

}  // namespace

bool reads_raw_columns(const onnx::ModelProto& mp) {
  for (const auto& in : mp.graph().input()) {
    if (in.type().has_tensor_type() && in.type().tensor_type().elem_type() == Proto::STRING) return true;
  }
  static const std::set<std::string> encoders = {"OneHotEncoder", "LabelEncoder", "CategoryMapper", "Imputer"};
  return std::any_of(mp.graph().node().begin(), mp.graph().node().end(), [](const onnx::NodeProto& n) {
    return domain_of(n) == "ai.onnx.ml" && encoders.count(n.op_type()) != 0;
  });
}

LiftedColumns lift_columns(const onnx::ModelProto& mp, const std::string& path) {
  return ColumnLifter(mp, path).lift();
}

}  // namespace witness::onnx_detail
