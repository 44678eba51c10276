// ONNX loader: the value table (constants and IR nodes with their per-row shapes), shape helpers,
// index maps and elementwise broadcasting. See onnx_internal.h.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "model/onnx_internal.h"

namespace witness::onnx_detail {

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

std::int64_t span_count(const Dims& d, std::size_t from, std::size_t to) {
  std::int64_t n = 1;
  for (std::size_t i = from; i < to; ++i) n *= d[i];
  return n;
}

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

std::vector<int> broadcast_map(Dims from, const Dims& to) {
  std::vector<int> map = iota_map(count_of(from, kMaxElements));
  for (std::size_t k = 0; k < to.size(); ++k) {
    if (from[k] == to[k]) continue;
    map = take(map, from, k, std::vector<std::int64_t>(static_cast<std::size_t>(to[k]), 0));
    from[k] = to[k];
  }
  return map;
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
// Broadcasting

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

}  // namespace witness::onnx_detail
