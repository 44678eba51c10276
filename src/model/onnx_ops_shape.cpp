// ONNX loader: the ops that move, select or relabel elements without arithmetic: Identity,
// Constant, Flatten, Reshape, (Un)Squeeze, Cast, Gather, Slice and Concat. See onnx_internal.h.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <set>

#include "model/onnx_internal.h"

namespace witness::onnx_detail {

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
  const bool allow_zero = attr_flag(c, "allowzero", 0) != 0;
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
  if (to <= 0 || to > std::numeric_limits<int>::max() || !onnx::TensorProto_DataType_IsValid(static_cast<int>(to))) {
    fail(c.where, fmt::format("attribute to is {}, which is no ONNX element type", to));
  }
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
    // The IR cannot truncate. A float cast to an index that only Gather reads is fine: Lookup
    // truncates its index toward zero, as the Cast does.
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

}  // namespace witness::onnx_detail
