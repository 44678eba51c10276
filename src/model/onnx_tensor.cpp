// ONNX loader: constant tensors (initializers, Constant values, tensor attributes) decoded into
// doubles, and node attributes. See onnx_internal.h.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "model/onnx_internal.h"

namespace witness::onnx_detail {
namespace {

static_assert(std::endian::native == std::endian::little, "raw ONNX tensor data is little-endian");

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

std::string number_word(double v) {
  if (std::isnan(v)) return "NaN";
  return v > 0 ? "inf" : "-inf";
}

template <typename T>
void read_raw(const std::string& raw, std::vector<double>& out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    T v{};
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    out[i] = static_cast<double>(v);
  }
}

}  // namespace

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

std::vector<std::string> Loader::parse_strings(const onnx::TensorProto& t, const std::string& where) const {
  if (t.data_type() != Proto::STRING) fail(where, "expected a string tensor");
  Dims dims(t.dims().begin(), t.dims().end());
  const std::int64_t n = count_of(dims, kMaxElements);
  if (n < 0 || n != t.string_data_size())
    fail(where, fmt::format("a string tensor of dims {} has {} values", dims_str(dims), t.string_data_size()));
  return {t.string_data().begin(), t.string_data().end()};
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
    if (ml_opset_ < 3) {
      fail(c.where, fmt::format("attribute {} needs ai.onnx.ml opset 3; the model imports {}", tname, ml_opset_));
    }
    if (attr(c, name) != nullptr) fail(c.where, fmt::format("attributes {} and {} are both given", name, tname));
    if (a->type() != onnx::AttributeProto::TENSOR && !(a->type() == onnx::AttributeProto::UNDEFINED && a->has_t())) {
      fail(c.where, fmt::format("attribute '{}' must be a tensor", tname));
    }
    return parse_tensor(a->t(), c.where + " attribute '" + tname + "'").data;
  }
  return attr_floats(c, name);
}

void Loader::check_finite(const Ctx& c, const std::string& name, const std::vector<double>& v, bool allow_inf) const {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i]) || (!allow_inf && std::isinf(v[i]))) {
      fail(c.where, fmt::format("attribute {}[{}] is {}{}", name, i, number_word(v[i]),
                                allow_inf ? "" : "; expected a finite number"));
    }
  }
}

std::vector<double> Loader::attr_finite(const Ctx& c, const char* name, bool allow_inf) const {
  std::vector<double> v = attr_floats(c, name);
  check_finite(c, name, v, allow_inf);
  return v;
}

std::vector<double> Loader::attr_finite_or_tensor(const Ctx& c, const char* name, bool allow_inf) const {
  const std::string tname = std::string(name) + "_as_tensor";
  std::vector<double> v = attr_floats_or_tensor(c, name);
  check_finite(c, attr(c, tname.c_str()) != nullptr ? tname : std::string(name), v, allow_inf);
  return v;
}

double Loader::attr_finite_float(const Ctx& c, const char* name, double dflt) const {
  const double v = attr_float(c, name, dflt);
  if (!std::isfinite(v))
    fail(c.where, fmt::format("attribute {} is {}; expected a finite number", name, number_word(v)));
  return v;
}

std::int64_t Loader::attr_int_in(const Ctx& c, const char* name, std::int64_t dflt, std::int64_t lo,
                                 std::int64_t hi) const {
  const std::int64_t v = attr_int(c, name, dflt);
  if (v < lo || v > hi) fail(c.where, fmt::format("attribute {} is {} (expected {} to {})", name, v, lo, hi));
  return v;
}

std::int64_t Loader::attr_flag(const Ctx& c, const char* name, std::int64_t dflt) const {
  const std::int64_t v = attr_int(c, name, dflt);
  if (v != 0 && v != 1) fail(c.where, fmt::format("attribute {} is {} (expected 0 or 1)", name, v));
  return v;
}

std::vector<std::int64_t> Loader::attr_flags(const Ctx& c, const char* name) const {
  std::vector<std::int64_t> v = attr_ints(c, name);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] != 0 && v[i] != 1) fail(c.where, fmt::format("attribute {}[{}] is {} (expected 0 or 1)", name, i, v[i]));
  }
  return v;
}

std::string Loader::attr_enum(const Ctx& c, const char* name, const std::string& dflt,
                              const std::vector<std::string>& known) const {
  std::string v = attr_string(c, name, dflt);
  if (std::find(known.begin(), known.end(), v) == known.end()) {
    fail(c.where, fmt::format("attribute {} is '{}' (expected {})", name, v.substr(0, 60), fmt::join(known, ", ")));
  }
  return v;
}

std::string Loader::post_transform_name(const Ctx& c) const {
  return attr_enum(c, "post_transform", "NONE", {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"});
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

}  // namespace witness::onnx_detail
