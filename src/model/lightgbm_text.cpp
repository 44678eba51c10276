// LightGBM text models (Booster.save_model, `model.txt`): a header of key=value lines after the
// line `tree` (num_class, num_tree_per_iteration, max_feature_idx, objective, feature_names,
// average_output), then blocks `Tree=k` of key=value lines (num_leaves, num_cat, split_feature,
// threshold, decision_type, left_child, right_child, leaf_value, cat_boundaries, cat_threshold),
// then `end of trees` and parameters witness ignores.
//
// Semantics, as LightGBM's predictor computes them on a dense row of doubles: a value with
// |x| <= kZeroThreshold (1e-35f) is read as 0 (the row is stored sparsely). decision_type bit 0:
// categorical, bit 1: default left, bits 2-3: missing type None/Zero/NaN. Numerical: NaN becomes 0
// unless the type is NaN; with type Zero, 0 goes the default way, with type NaN, NaN does; the rest
// go left iff x <= threshold. Categorical: left iff x is not NaN, int(x) >= 0 and bit int(x) of the
// node's bitset is set (int() truncates, so x in (-1, 1) is category 0). Children < 0 are leaves
// ~child. Leaf values already include the shrinkage. The score of class k sums the trees
// k, k + num_tree_per_iteration, ...; average_output divides by the iterations.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string_view>

#include "core/error.h"
#include "core/file.h"
#include "model/loaders.h"
#include "model/tree_build.h"

namespace witness {
namespace lightgbm_detail {

using tree_detail::kLeft;
using tree_detail::kRight;
using tree_detail::RawNode;
using Mode = TreeEnsemble::Mode;

constexpr double kZero = static_cast<double>(1e-35F);  // LightGBM's kZeroThreshold
constexpr long long kMaxFeatures = 1'000'000;
constexpr std::size_t kMaxBitsetWords = 1U << 20;  // 32 Mi categories per split

using Block = std::map<std::string, std::string, std::less<>>;

struct Reader {
  const std::string& path;

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw InputError(path, where, what);
  }
  const std::string& get(const Block& b, std::string_view key, const std::string& where) const {
    const auto it = b.find(key);
    if (it == b.end()) fail(where, fmt::format("missing line {}=", key));
    return it->second;
  }
  template <typename T>
  T number(std::string_view s, const std::string& where, std::string_view key) const {
    T v{};
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) {
      fail(where, fmt::format("{}: cannot read '{}' as a number", key, s.substr(0, 40)));
    }
    return v;
  }
  long long integer(const Block& b, std::string_view key, const std::string& where, long long lo, long long hi) const {
    const auto v = number<long long>(get(b, key, where), where, key);
    if (v < lo || v > hi) fail(where, fmt::format("{}={} (expected {} to {})", key, v, lo, hi));
    return v;
  }
  // A space-separated list of exactly `n` numbers.
  template <typename T>
  std::vector<T> list(const Block& b, std::string_view key, const std::string& where, std::size_t n) const {
    const std::string_view s = get(b, key, where);
    std::vector<T> out;
    out.reserve(std::min<std::size_t>(n, s.size() / 2 + 1));  // n is checked against the text below
    std::size_t i = 0;
    while (i < s.size()) {
      const auto j = std::min(s.find(' ', i), s.size());
      if (j > i) {
        if (out.size() == n) fail(where, fmt::format("{} has more than {} entries", key, n));
        out.push_back(number<T>(s.substr(i, j - i), where, key));
      }
      i = j + 1;
    }
    if (out.size() != n) fail(where, fmt::format("{} has {} entries, expected {}", key, out.size(), n));
    return out;
  }

  std::vector<RawNode> tree(const Block& b, const std::string& w, int n_features) const {
    const auto leaves = static_cast<int>(integer(b, "num_leaves", w, 1, tree_detail::kMaxTreeNodes));
    const auto num_cat = static_cast<int>(integer(b, "num_cat", w, 0, leaves - 1));
    if (const auto it = b.find("is_linear"); it != b.end() && it->second != "0") {
      throw UnsupportedError(path, w, "linear trees (is_linear=1)");
    }
    const auto values = list<double>(b, "leaf_value", w, static_cast<std::size_t>(leaves));
    for (std::size_t j = 0; j < values.size(); ++j) {
      if (!std::isfinite(values[j]))
        fail(w, fmt::format("leaf_value[{}] is {}; expected a finite number", j, values[j]));
    }
    const auto inner = static_cast<std::size_t>(leaves - 1);
    std::vector<RawNode> raw(inner + values.size());
    for (std::size_t j = 0; j < values.size(); ++j) raw[inner + j] = tree_detail::leaf(values[j]);
    if (leaves == 1) return raw;
    const auto features = list<int>(b, "split_feature", w, inner);
    const auto thresholds = list<double>(b, "threshold", w, inner);
    const auto lefts = list<int>(b, "left_child", w, inner);
    const auto rights = list<int>(b, "right_child", w, inner);
    const auto types =
        b.count("decision_type") != 0 ? list<int>(b, "decision_type", w, inner) : std::vector<int>(inner);
    std::vector<int> bounds;
    std::vector<std::uint32_t> bits;
    if (num_cat > 0) {
      bounds = list<int>(b, "cat_boundaries", w, static_cast<std::size_t>(num_cat) + 1);
      if (bounds[0] != 0) fail(w, "cat_boundaries must start at 0");
      for (std::size_t k = 1; k < bounds.size(); ++k) {
        if (bounds[k] < bounds[k - 1] || static_cast<std::size_t>(bounds[k] - bounds[k - 1]) > kMaxBitsetWords) {
          fail(w, fmt::format("cat_boundaries must increase, by at most {} words a split", kMaxBitsetWords));
        }
      }
      bits = list<std::uint32_t>(b, "cat_threshold", w, static_cast<std::size_t>(bounds.back()));
    }
    auto child = [&](int c, std::size_t i) {
      if (c >= 0 && static_cast<std::size_t>(c) < inner) return c;
      if (c < 0 && ~c < leaves) return static_cast<int>(inner) + ~c;
      fail(w, fmt::format("node {} has child {} (internal nodes are 0 to {}, leaves ~0 to ~{})", i, c, inner - 1,
                          leaves - 1));
    };
    for (std::size_t i = 0; i < inner; ++i) {
      const std::string wn = fmt::format("{} node {}", w, i);
      RawNode& nd = raw[i];
      nd.left = child(lefts[i], i);
      nd.right = child(rights[i], i);
      nd.feature = features[i];
      if (nd.feature < 0 || nd.feature >= n_features) {
        fail(wn, fmt::format("split_feature {} (the model has {} features)", nd.feature, n_features));
      }
      const int dt = types[i];
      if (dt < 0 || dt > 15 || ((dt >> 2) & 3) == 3) fail(wn, fmt::format("decision_type {} is not valid", dt));
      const double t = thresholds[i];
      if (std::isnan(t)) fail(wn, "threshold is NaN");
      // LightGBM's thresholds are finite bin bounds (or bitset indices for categorical splits).
      if (std::isinf(t)) fail(wn, fmt::format("threshold is {}; expected a finite number", t));
      if ((dt & 1) != 0) {
        nd.tests = categorical(t, bounds, bits, wn);
        continue;
      }
      const int missing = (dt >> 2) & 3;
      const int dflt = (dt & 2) != 0 ? kLeft : kRight;
      // x <= t on the value as read, where |x| <= kZero reads as 0: the same as a plain test
      // except for thresholds inside that band.
      Mode mode = Mode::Leq;
      double cut = t;
      if (t >= -kZero && t < 0.0) {
        mode = Mode::Lt;
        cut = -kZero;
      } else if (t >= 0.0 && t < kZero) {
        cut = kZero;
      }
      if (missing == 2) {  // NaN: NaN goes the default way
        nd.tests = {{mode, cut, dflt == kLeft, kLeft, kRight}};
      } else if (missing == 0) {  // None: NaN reads as 0
        nd.tests = {{mode, cut, 0.0 <= t, kLeft, kRight}};
      } else {  // Zero: [-kZero, kZero] and NaN go the default way
        nd.tests = {
            {Mode::Lt, -kZero, false, 2, 1}, {Mode::Leq, kZero, true, dflt, 2}, {mode, cut, false, kLeft, kRight}};
      }
    }
    return raw;
  }

  std::vector<tree_detail::Test> categorical(double t, const std::vector<int>& bounds,
                                             const std::vector<std::uint32_t>& bits, const std::string& wn) const {
    if (bounds.empty() || t < 0.0 || t >= static_cast<double>(bounds.size() - 1) || t != std::floor(t)) {
      fail(wn, fmt::format("categorical threshold {} names no bitset (cat_boundaries has {})", t,
                           bounds.empty() ? 0 : bounds.size() - 1));
    }
    const auto k = static_cast<std::size_t>(t);
    std::vector<long long> cats;
    for (auto word = bounds[k]; word < bounds[k + 1]; ++word) {
      const std::uint32_t v = bits[static_cast<std::size_t>(word)];
      for (int bit = 0; bit < 32; ++bit) {
        if (((v >> bit) & 1U) != 0U) cats.push_back(32LL * (word - bounds[k]) + bit);
      }
    }
    // int(x) < v: x < v for v >= 1; for v = 0, x <= -1 (int() truncates toward zero).
    auto cut = [](long long v) {
      return std::optional<tree_detail::Cut>(v == 0 ? tree_detail::Cut{Mode::Leq, -1.0}
                                                    : tree_detail::Cut{Mode::Lt, static_cast<double>(v)});
    };
    return tree_detail::interval_chain(tree_detail::category_runs(cats, cut), kLeft, kRight);
  }
};

// key=value lines from `pos` up to a blank line or a `Tree=` / `end of trees` line.
Block read_block(std::string_view text, std::size_t& pos) {
  Block out;
  while (pos < text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.starts_with("Tree=") || line == "end of trees") break;
    pos = end + 1;
    const auto eq = line.find('=');
    out[std::string(line.substr(0, eq))] = eq == std::string_view::npos ? "" : std::string(line.substr(eq + 1));
  }
  return out;
}

void skip_blank(std::string_view text, std::size_t& pos) {
  while (pos < text.size() && (text[pos] == '\n' || text[pos] == '\r')) ++pos;
}

}  // namespace lightgbm_detail

Model parse_lightgbm_text(const std::string& text, const std::string& path) {
  using namespace lightgbm_detail;  // NOLINT(google-build-using-namespace): this file's helpers
  const Reader rd{path};
  std::size_t pos = text.find_first_not_of(" \t\r\n");
  const std::string_view all(text);
  if (pos == std::string::npos || !(all.substr(pos).starts_with("tree\n") || all.substr(pos).starts_with("tree\r\n"))) {
    rd.fail("line 1", "expected `tree` (a LightGBM text model)");
  }
  pos = all.find('\n', pos) + 1;
  const Block head = read_block(all, pos);
  const auto num_class = static_cast<int>(rd.integer(head, "num_class", "header", 1, 100'000));
  const auto per_iteration = head.count("num_tree_per_iteration") != 0
                                 ? static_cast<int>(rd.integer(head, "num_tree_per_iteration", "header", 1, 100'000))
                                 : num_class;
  const auto n_features = static_cast<int>(rd.integer(head, "max_feature_idx", "header", 0, kMaxFeatures - 1) + 1);
  const auto obj_it = head.find("objective");
  if (obj_it == head.end()) {
    throw UnsupportedError(path, "header", "no objective line (a custom objective): its scores have no known labels");
  }
  // "binary sigmoid:1", "multiclass num_class:3", "multiclassova num_class:3 sigmoid:1".
  std::vector<std::string> words;
  for (std::size_t i = 0; i < obj_it->second.size();) {
    const auto j = std::min(obj_it->second.find(' ', i), obj_it->second.size());
    if (j > i) words.push_back(obj_it->second.substr(i, j - i));
    i = j + 1;
  }
  const std::string objective = words.empty() ? "" : words[0];
  double sigmoid = 1.0;
  for (std::size_t i = 1; i < words.size(); ++i) {
    if (words[i].starts_with("sigmoid:")) sigmoid = rd.number<double>(words[i].substr(8), "objective", "sigmoid");
  }
  const bool binary = objective == "binary" || objective == "cross_entropy" || objective == "xentropy";
  const bool multi = objective == "multiclass" || objective == "softmax";
  const bool ova =
      objective == "multiclassova" || objective == "multiclass_ova" || objective == "ova" || objective == "ovr";
  if (!binary && !multi && !ova) {
    throw UnsupportedError(path, "objective",
                           fmt::format("\"{}\" (witness reads binary, cross_entropy, multiclass and multiclassova)",
                                       obj_it->second.substr(0, 80)));
  }
  if (!(sigmoid > 0.0) || !std::isfinite(sigmoid)) rd.fail("objective", "sigmoid must be positive");
  const int n_classes = binary ? 1 : num_class;
  if ((binary && (num_class != 1 || per_iteration != 1)) ||
      (!binary && (num_class < 2 || per_iteration != num_class))) {
    rd.fail("header", fmt::format("num_class={} and num_tree_per_iteration={} do not fit objective {}", num_class,
                                  per_iteration, objective));
  }
  std::vector<std::string> names;
  if (const auto it = head.find("feature_names"); it != head.end()) {
    for (std::size_t i = 0; i < it->second.size();) {
      const auto j = std::min(it->second.find(' ', i), it->second.size());
      if (j > i) names.push_back(it->second.substr(i, j - i));
      i = j + 1;
    }
    if (static_cast<int>(names.size()) != n_features) {
      rd.fail("feature_names", fmt::format("{} names for {} features (max_feature_idx + 1)", names.size(), n_features));
    }
  } else {
    for (int i = 0; i < n_features; ++i) names.push_back("Column_" + std::to_string(i));
  }

  auto te = std::make_shared<TreeEnsemble>();
  te->n_targets = n_classes;
  te->classifier = true;
  tree_detail::Where where{path, "", n_features, tree_detail::kMaxTreeNodes};
  for (;;) {
    skip_blank(all, pos);
    if (pos >= all.size() || all.substr(pos).starts_with("end of trees")) break;
    const auto eol = std::min(all.find('\n', pos), all.size());
    std::string_view line = all.substr(pos, eol - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string expect = fmt::format("Tree={}", te->trees.size());
    if (line != expect) {
      rd.fail(fmt::format("tree {}", te->trees.size()),
              fmt::format("expected the line {}, found '{}'", expect, line.substr(0, 40)));
    }
    pos = eol + 1;
    where.tree = fmt::format("Tree={}", te->trees.size());
    const Block block = read_block(all, pos);
    const std::vector<RawNode> raw = rd.tree(block, where.tree, n_features);
    tree_detail::add_tree(*te, raw, 0, static_cast<int>(te->trees.size() % static_cast<std::size_t>(n_classes)), where);
  }
  if (te->trees.empty()) rd.fail("", "no trees (no Tree=0 block)");
  if (te->trees.size() % static_cast<std::size_t>(per_iteration) != 0) {
    rd.fail("", fmt::format("{} trees is not a whole number of iterations of {}", te->trees.size(), per_iteration));
  }
  const std::size_t whole_iterations = te->trees.size() / static_cast<std::size_t>(per_iteration);
  const auto iterations = static_cast<double>(whole_iterations);

  ModelBuilder b("lightgbm", names);
  b.set_source(path, "lightgbm-text");
  const int raw_score = b.tree_ensemble(b.input(), te, "trees");
  // The label reads the sums: averaging (average_output) and the positive sigmoid factor keep
  // their signs and their order. The outputs show LightGBM's probabilities.
  int score = raw_score;
  const double scale = (head.count("average_output") != 0 ? 1.0 / iterations : 1.0) * (multi ? 1.0 : sigmoid);
  if (scale != 1.0) {
    score = b.dense(score, Eigen::MatrixXd::Identity(n_classes, n_classes) * scale, Eigen::VectorXd::Zero(n_classes),
                    "scale");
  }
  if (binary) return b.finish(b.sigmoid(score, "sigmoid"), DecisionRule::threshold_on(raw_score, 0.0), {"p1"});
  std::vector<std::string> outs(static_cast<std::size_t>(n_classes));
  for (std::size_t k = 0; k < outs.size(); ++k) outs[k] = fmt::format("p{}", k);
  const int probs = multi ? b.unary(OpKind::Softmax, score, "softmax") : b.sigmoid(score, "sigmoid");
  return b.finish(probs, DecisionRule::argmax_of(raw_score), outs);
}

Model load_lightgbm_text(const std::string& path) { return parse_lightgbm_text(read_file(path, 1ULL << 30), path); }

}  // namespace witness
