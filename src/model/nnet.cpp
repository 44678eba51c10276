// .nnet: the text format of Reluplex, ReluVal, Marabou, NeuroDiff and FairQuant networks.
//
//   // header comments (any number of lines starting with //)
//   numLayers, inputSize, outputSize, maxLayerSize,
//   layerSizes (numLayers + 1 integers, input first, output last),
//   symmetric (deprecated flag, ignored),
//   input minimums (inputSize numbers),
//   input maximums (inputSize numbers),
//   means (inputSize + 1 numbers; the last is the output's),
//   ranges (inputSize + 1 numbers; the last is the output's),
//   then per layer k: layerSizes[k+1] weight rows of layerSizes[k] numbers, then layerSizes[k+1] biases.
//
// Semantics of the format's reference evaluator: hidden layers are Dense + ReLU, the last Dense has
// no activation; inputs are normalised (x - mean) / range and outputs de-normalised
// y * range + mean. The reference also clips inputs to [min, max]; witness does not (it records
// the bounds in Model::input_bounds), so inputs outside them are evaluated unclipped.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "model/loaders.h"

namespace witness {
namespace {

constexpr long long kMaxLayerSize = 1'000'000;
constexpr long long kMaxLayers = 1'000'000;
constexpr long long kMaxParameters = 1LL << 31;

// Up to 24 characters of a token for a message, non-printable bytes as \xNN.
std::string quoted(std::string_view token) {
  std::string out = "'";
  for (std::size_t i = 0; i < token.size() && i < 24; ++i) {
    const auto c = static_cast<unsigned char>(token[i]);
    out += (c >= 0x20 && c < 0x7f) ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
  }
  if (token.size() > 24) out += "...";
  return out + "'";
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\v\f");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\v\f");
  return s.substr(first, last - first + 1);
}

class Reader {
 public:
  Reader(const std::string& text, const std::string& path) : path_(path) {
    std::string_view rest(text);
    if (rest.substr(0, 3) == "\xEF\xBB\xBF") rest.remove_prefix(3);  // UTF-8 byte order mark
    while (!rest.empty()) {
      const auto nl = rest.find('\n');
      lines_.push_back(trim(rest.substr(0, nl)));
      if (nl == std::string_view::npos) break;
      rest.remove_prefix(nl + 1);
    }
    bytes_ = text.size();
  }

  [[nodiscard]] std::size_t bytes() const { return bytes_; }

  [[noreturn]] void fail(std::size_t line, const std::string& what) const {
    throw InputError(path_, fmt::format("line {}", line), what);
  }

  // The next data line's fields (blank lines skipped; `//` comments only before the first data
  // line). `what` describes the line for messages.
  std::vector<std::string_view> fields(const std::string& what) {
    while (next_ < lines_.size()) {
      const std::string_view line = lines_[next_++];
      if (line.empty()) continue;
      if (line.substr(0, 2) == "//") {
        if (seen_data_) fail(next_, "comment after the first data line; `//` comments belong in the header");
        seen_comment_ = true;
        continue;
      }
      seen_data_ = true;
      line_ = next_;
      std::vector<std::string_view> out;
      std::string_view rest = line;
      while (true) {
        const auto comma = rest.find(',');
        out.push_back(trim(rest.substr(0, comma)));
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
      }
      if (out.size() > 1 && out.back().empty()) out.pop_back();  // the usual trailing comma
      for (std::size_t i = 0; i < out.size(); ++i) {
        if (out[i].empty()) fail(line_, fmt::format("empty field {} in {}", i + 1, what));
      }
      return out;
    }
    if (!seen_data_) {
      fail(lines_.size() + 1, seen_comment_ ? "no data after the header comments; expected a .nnet network"
                                            : "empty file; expected a .nnet network");
    }
    fail(lines_.size() + 1, "unexpected end of file; expected " + what);
  }

  // The next data line, holding exactly `count` numbers.
  std::vector<double> numbers(std::size_t count, const std::string& what) {
    const std::vector<std::string_view> f = fields(what);
    if (f.size() != count) {
      fail(line_, fmt::format("expected {} number{} ({}), got {}", count, count == 1 ? "" : "s", what, f.size()));
    }
    std::vector<double> out(count);
    for (std::size_t i = 0; i < count; ++i) out[i] = number(f[i], what);
    return out;
  }

  // The next data line, holding exactly `count` integers.
  std::vector<long long> integers(std::size_t count, const std::string& what) {
    const std::vector<double> v = numbers(count, what);
    std::vector<long long> out(count);
    for (std::size_t i = 0; i < count; ++i) {
      if (v[i] != std::trunc(v[i]) || std::abs(v[i]) > 1e15) {
        fail(line_, fmt::format("expected an integer in {}, got {}", what, v[i]));
      }
      out[i] = static_cast<long long>(v[i]);
    }
    return out;
  }

  // Fails unless only blank lines remain.
  void expect_end() {
    while (next_ < lines_.size()) {
      if (!lines_[next_++].empty()) {
        fail(next_, "unexpected data after the last layer's biases; expected the end of the file");
      }
    }
  }

  [[nodiscard]] std::size_t line() const { return line_; }

 private:
  double number(std::string_view token, const std::string& what) const {
    std::string_view t = token;
    if (!t.empty() && t.front() == '+') t.remove_prefix(1);  // from_chars takes no leading '+'
    double v = 0.0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec == std::errc::result_out_of_range && end == t.data() + t.size()) {
      // Underflow: take strtod's correctly rounded value (0 or a subnormal), as the writer meant.
      // Overflow has no double near it.
      v = std::strtod(std::string(t).c_str(), nullptr);
      if (std::isinf(v)) fail(line_, fmt::format("number {} out of the range of a double in {}", quoted(token), what));
      return v;
    }
    if (ec != std::errc() || end != t.data() + t.size() || t.empty()) {
      fail(line_, fmt::format("expected a number in {}, got {}", what, quoted(token)));
    }
    if (!std::isfinite(v)) fail(line_, fmt::format("non-finite number {} in {}", quoted(token), what));
    return v;
  }

  const std::string& path_;
  std::vector<std::string_view> lines_;  // trimmed, without the newline
  std::size_t bytes_ = 0;
  std::size_t next_ = 0;  // index of the next line to read
  std::size_t line_ = 0;  // 1-based number of the last data line read
  bool seen_data_ = false;
  bool seen_comment_ = false;
};

bool all_equal(const std::vector<double>& v, std::size_t n, double value) {
  return std::all_of(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n), [&](double x) { return x == value; });
}

Eigen::VectorXd vector_of(const std::vector<double>& v, std::size_t n) {
  Eigen::VectorXd out(static_cast<Eigen::Index>(n));
  for (std::size_t i = 0; i < n; ++i) out(static_cast<Eigen::Index>(i)) = v[i];
  return out;
}

}  // namespace

Model parse_nnet(const std::string& text, const std::string& path, bool apply_normalisation) {
  Reader r(text, path);
  const std::vector<long long> head =
      r.integers(4, "the header: number of layers, input size, output size, largest layer size");
  const long long n_layers = head[0];
  const long long n_in = head[1];
  const long long n_out = head[2];
  const long long max_size = head[3];
  const char* names[] = {"number of layers", "input size", "output size", "largest layer size"};
  for (std::size_t i = 0; i < 4; ++i) {
    if (head[i] <= 0) r.fail(r.line(), fmt::format("{} is {}; expected a positive integer", names[i], head[i]));
    const long long cap = i == 0 ? kMaxLayers : kMaxLayerSize;
    if (head[i] > cap) r.fail(r.line(), fmt::format("{} is {}; witness reads at most {}", names[i], head[i], cap));
  }
  const auto n_layers_u = static_cast<std::size_t>(n_layers);
  const auto n_in_u = static_cast<std::size_t>(n_in);

  const std::vector<long long> sizes =
      r.integers(n_layers_u + 1, fmt::format("layer sizes: {} integers, input first, output last", n_layers + 1));
  long long params = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k] <= 0) r.fail(r.line(), fmt::format("layer size {} is {}; expected a positive integer", k, sizes[k]));
    if (sizes[k] > kMaxLayerSize) {
      r.fail(r.line(), fmt::format("layer size {} is {}; witness reads at most {}", k, sizes[k], kMaxLayerSize));
    }
    if (k > 0) params += sizes[k - 1] * sizes[k] + sizes[k];  // each term < 2^41: no overflow
    if (params > kMaxParameters) {
      r.fail(r.line(), fmt::format("the layer sizes make more than {} parameters; witness reads at most that many",
                                   kMaxParameters));
    }
  }
  if (sizes.front() != n_in) {
    r.fail(r.line(), fmt::format("the first layer size is {} but the header's input size is {}", sizes.front(), n_in));
  }
  if (sizes.back() != n_out) {
    r.fail(r.line(), fmt::format("the last layer size is {} but the header's output size is {}", sizes.back(), n_out));
  }
  const long long largest = *std::max_element(sizes.begin(), sizes.end());
  if (largest > max_size) {
    r.fail(r.line(),
           fmt::format("a layer has {} neurons but the header's largest layer size is {}", largest, max_size));
  }
  // Every parameter takes at least one character of the file: refuse sizes the file cannot back
  // before allocating for them.
  if (static_cast<unsigned long long>(params) > r.bytes()) {
    r.fail(r.line(), fmt::format("the layer sizes need {} parameters but the file has only {} bytes (truncated?)",
                                 params, r.bytes()));
  }

  (void)r.integers(1, "the (deprecated, ignored) symmetric flag: one integer");
  const std::vector<double> mins = r.numbers(n_in_u, fmt::format("input minimums: {} numbers", n_in));
  const std::vector<double> maxs = r.numbers(n_in_u, fmt::format("input maximums: {} numbers", n_in));
  const std::vector<double> means =
      r.numbers(n_in_u + 1, fmt::format("means: {} numbers, the inputs' then the output's", n_in + 1));
  const std::vector<double> ranges =
      r.numbers(n_in_u + 1, fmt::format("ranges: {} numbers, the inputs' then the output's", n_in + 1));
  const std::size_t ranges_line = r.line();

  std::vector<std::string> input_names;
  for (long long i = 0; i < n_in; ++i) input_names.push_back(fmt::format("x{}", i));
  ModelBuilder b(std::filesystem::path(path).stem().string(), input_names);
  b.set_source(path, "nnet");
  int x = b.input();
  if (apply_normalisation) {
    for (std::size_t i = 0; i < n_in_u; ++i) {
      if (ranges[i] == 0.0) {
        r.fail(ranges_line, fmt::format("the range of input {} (x{}) is 0: normalising it would divide by zero "
                                        "(witness convert --nnet-raw reads the file without normalisation)",
                                        i, i));
      }
    }
    // Exact elementwise nodes, left out where they would be the identity (x - 0, x / 1).
    if (!all_equal(means, n_in_u, 0.0)) {
      x = b.binary(OpKind::Sub, x, b.constant(vector_of(means, n_in_u), "normalise/means"), "normalise/sub");
    }
    if (!all_equal(ranges, n_in_u, 1.0)) {
      x = b.binary(OpKind::Div, x, b.constant(vector_of(ranges, n_in_u), "normalise/ranges"), "normalise/div");
    }
  }

  for (std::size_t k = 0; k < n_layers_u; ++k) {
    const auto in = static_cast<Eigen::Index>(sizes[k]);
    const auto out = static_cast<Eigen::Index>(sizes[k + 1]);
    Eigen::MatrixXd w(out, in);
    for (Eigen::Index row = 0; row < out; ++row) {
      const std::vector<double> v =
          r.numbers(static_cast<std::size_t>(in),
                    fmt::format("layer {} weights, row {} of {}: {} numbers", k + 1, row + 1, out, in));
      for (Eigen::Index c = 0; c < in; ++c) w(row, c) = v[static_cast<std::size_t>(c)];
    }
    Eigen::VectorXd bias(out);
    for (Eigen::Index row = 0; row < out; ++row) {
      bias(row) = r.numbers(1, fmt::format("layer {} bias {} of {}: one number", k + 1, row + 1, out))[0];
    }
    const std::string where = fmt::format("layer{}", k + 1);
    x = b.dense(x, std::move(w), std::move(bias), where);
    if (k + 1 < n_layers_u) x = b.relu(x, where + "/relu");
  }
  r.expect_end();

  if (apply_normalisation) {
    const double range = ranges[n_in_u];
    const double mean = means[n_in_u];
    if (range != 1.0) {
      x = b.binary(OpKind::Mul, x, b.constant(Eigen::VectorXd::Constant(1, range), "denormalise/range"),
                   "denormalise/mul");
    }
    if (mean != 0.0) {
      x = b.binary(OpKind::Add, x, b.constant(Eigen::VectorXd::Constant(1, mean), "denormalise/mean"),
                   "denormalise/add");
    }
  }
  Model m = b.finish(x, DecisionRule{});
  m.input_bounds.resize(n_in_u);
  for (std::size_t i = 0; i < n_in_u; ++i) m.input_bounds[i] = {mins[i], maxs[i]};
  return m;
}

Model load_nnet(const std::string& path, bool apply_normalisation) {
  return parse_nnet(read_file(path), path, apply_normalisation);
}

}  // namespace witness
