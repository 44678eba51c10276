// ONNX loader: the arithmetic ops: elementwise ops (Add, Sub, Mul, Div, comparisons, Where),
// activations, Softmax, ArgMax and the linear layers Gemm and MatMul. See onnx_internal.h.
#include <fmt/format.h>

#include <cmath>
#include <cstddef>

#include "model/onnx_internal.h"

namespace witness::onnx_detail {
namespace {

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

}  // namespace

// ---------------------------------------------------------------------------------------------
// Elementwise ops

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
  if (attr_flag(c, "select_last_index", 0) != 0) unsupported(c.where, "ArgMax with select_last_index=1");
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
  if (attr_flag(c, "keepdims", 1) != 0) {
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
  if (attr_flag(c, "transA", 0) != 0) unsupported(c.where, "Gemm with transA=1 is not supported");
  const std::int64_t trans_b = attr_flag(c, "transB", 0);
  const double alpha = attr_finite_float(c, "alpha", 1.0);
  const double beta = attr_finite_float(c, "beta", 1.0);
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

}  // namespace witness::onnx_detail
