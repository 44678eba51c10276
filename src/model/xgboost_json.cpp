// XGBoost models as Booster.save_model writes them (format of XGBoost 1.7): JSON, or the same
// document in UBJSON (.ubj). {"learner": {"learner_model_param": {"base_score", "num_class",
// "num_feature"}, "objective": {"name"}, "feature_names", "gradient_booster": {"name": "gbtree",
// "model": {"trees": [...], "tree_info": [class of each tree]}}}, "version": [1, 7, 4]}.
//
// Semantics, as XGBoost's CPU predictor computes them: features are rounded to float32; a numeric
// node sends x left iff float32(x) < split_condition (a float32), written here as the equivalent
// exact test on the double x (tree_build.h below_float32); NaN goes to the default_left child. A
// categorical node (split_type 1) sends x RIGHT iff trunc(float32(x)) is one of its categories,
// and left otherwise (also negative values and those from 2^24 - 1 on). A leaf's value is its
// split_condition. Margin = base margin + the leaves of the class's trees; the base margin is
// base_score through the objective's ProbToMargin (logit for the logistic objectives).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "core/error.h"
#include "core/file.h"
#include "model/loaders.h"
#include "model/tree_build.h"

namespace witness {
namespace xgboost_detail {

using nlohmann::json;
using tree_detail::RawNode;

constexpr int kMaxDepth = 64;
constexpr long long kMaxFeatures = 1'000'000;
constexpr long long kMaxCategory = 16'777'214;  // XGBoost's largest valid category (2^24 - 2)

// Builds the document as nlohmann's DOM parser does, but refuses nesting deeper than kMaxDepth and
// more values than the input has bytes (a UBJSON array of typed empty values could otherwise
// declare billions). Text JSON numbers are read as float32, as XGBoost's own JSON reader does,
// straight from their text (no double rounding through a double).
class BoundedSax : public nlohmann::detail::json_sax_dom_parser<json> {
  using Base = nlohmann::detail::json_sax_dom_parser<json>;

 public:
  BoundedSax(json& doc, std::size_t max_values, std::string path)
      : Base(doc, true), left_(max_values), path_(std::move(path)) {}
  bool null() { return count() && Base::null(); }
  bool boolean(bool v) { return count() && Base::boolean(v); }
  bool number_integer(json::number_integer_t v) { return count() && Base::number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return count() && Base::number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& text) {
    float f = 0.0F;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), f);
    if (!text.empty() && r.ec == std::errc() && r.ptr == text.data() + text.size()) v = f;
    return count() && Base::number_float(v, text);
  }
  bool string(json::string_t& v) { return count() && Base::string(v); }
  bool binary(json::binary_t& v) { return count() && Base::binary(v); }
  bool key(json::string_t& v) { return count() && Base::key(v); }
  bool start_object(std::size_t n) { return enter() && Base::start_object(n); }
  bool start_array(std::size_t n) { return enter() && Base::start_array(n); }
  bool end_object() { return --depth_, Base::end_object(); }
  bool end_array() { return --depth_, Base::end_array(); }

 private:
  bool count() {
    if (left_ == 0) throw InputError(path_, "", "more values than the file has bytes");
    --left_;
    return true;
  }
  bool enter() {
    if (++depth_ > kMaxDepth) throw InputError(path_, "", fmt::format("nested deeper than {} levels", kMaxDepth));
    return count();
  }
  std::size_t left_;
  int depth_ = 0;
  std::string path_;
};

// UBJSON objects start with '{' too, but then a length marker rather than '"' or '}'.
bool is_ubjson(const std::string& bytes) {
  const auto first = bytes.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || bytes[first] != '{' || first + 1 >= bytes.size()) return false;
  const auto next = bytes.find_first_not_of(" \t\r\n", first + 1);
  return next != std::string::npos && std::string_view("iUIlL$#").find(bytes[next]) != std::string_view::npos;
}

// XGBoost writes non-finite floats as the bare words NaN, Infinity and -Infinity (categorical
// splits have NaN conditions): quoted, nlohmann reads them, and `real` parses the strings.
std::string quote_non_finite(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    in_string = c == '"';
    bool quoted = false;
    for (const std::string_view word : {"NaN", "Infinity", "-Infinity"}) {
      if (std::string_view(text).substr(i).starts_with(word)) {
        out += '"';
        out += word;
        out += '"';
        i += word.size() - 1;
        quoted = true;
        break;
      }
    }
    if (!quoted) out += c;
  }
  return out;
}

json parse_document(const std::string& bytes, const std::string& path) {
  json doc;
  BoundedSax sax(doc, bytes.size() + 16, path);
  const bool ubjson = is_ubjson(bytes);
  try {
    if (ubjson) {
      json::sax_parse(bytes, &sax, json::input_format_t::ubjson);
    } else {
      json::sax_parse(quote_non_finite(bytes), &sax, json::input_format_t::json);
    }
  } catch (const json::exception& e) {
    const std::string what = e.what();
    const auto pos = what.find("parse error");
    throw InputError(path, "",
                     fmt::format("not valid {}: {}", ubjson ? "UBJSON" : "JSON",
                                 pos == std::string::npos ? what : what.substr(pos)));
  }
  return doc;
}

std::string word(float v) {
  if (std::isnan(v)) return "NaN";
  return v > 0 ? "inf" : "-inf";
}

struct Reader {
  const std::string& path;

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw InputError(path, where, what);
  }
  const json& field(const json& obj, const char* key, const std::string& where) const {
    if (!obj.is_object()) fail(where, "expected an object");
    const auto it = obj.find(key);
    if (it == obj.end()) fail(where, fmt::format("missing field \"{}\"", key));
    return *it;
  }
  const json& array(const json& obj, const char* key, const std::string& where, std::size_t size) const {
    const json& a = field(obj, key, where);
    if (!a.is_array() || (size != 0 && a.size() != size)) {
      fail(where + "." + key, size == 0 ? std::string("expected an array")
                                        : fmt::format("expected an array of {} entries (one per node)", size));
    }
    return a;
  }
  // XGBoost writes most parameters as strings ("num_class": "3"); accept numbers too.
  long long integer(const json& v, const std::string& where, long long lo, long long hi) const {
    long long out = 0;
    bool ok = false;
    if (v.is_number_integer()) {
      out = v.get<long long>();
      ok = true;
    } else if (v.is_string()) {
      const auto& s = v.get_ref<const std::string&>();
      const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
      ok = !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
    } else if (v.is_boolean()) {
      out = v.get<bool>() ? 1 : 0;
      ok = true;
    }
    if (!ok || out < lo || out > hi) fail(where, fmt::format("expected an integer from {} to {}", lo, hi));
    return out;
  }
  float real(const json& v, const std::string& where) const {
    float out = 0.0F;
    if (v.is_number()) return static_cast<float>(v.get<double>());
    if (v.is_string()) {
      const auto& s = v.get_ref<const std::string&>();
      const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
      if (!s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size()) return out;
    }
    fail(where, "expected a number");
  }

  std::vector<RawNode> tree(const json& t, const std::string& where, int n_features) const {
    const json& lefts = field(t, "left_children", where);
    if (!lefts.is_array() || lefts.empty()) fail(where + ".left_children", "expected a non-empty array");
    const std::size_t n = lefts.size();
    if (n > tree_detail::kMaxTreeNodes) fail(where, fmt::format("{} nodes; witness refuses trees this large", n));
    if (const auto p = t.find("tree_param"); p != t.end() && p->contains("num_nodes")) {
      if (integer((*p)["num_nodes"], where + ".tree_param.num_nodes", 1, 1LL << 40) != static_cast<long long>(n)) {
        fail(where + ".tree_param.num_nodes", fmt::format("does not match the {} entries of left_children", n));
      }
    }
    const json& rights = array(t, "right_children", where, n);
    const json& features = array(t, "split_indices", where, n);
    const json& conds = array(t, "split_conditions", where, n);
    const json& default_left = array(t, "default_left", where, n);
    const json* types = t.contains("split_type") ? &array(t, "split_type", where, n) : nullptr;
    std::vector<std::vector<long long>> cats(n);  // categories of each categorical node
    if (t.contains("categories_nodes")) {
      const json& nodes = array(t, "categories_nodes", where, 0);
      const json& segments = array(t, "categories_segments", where, nodes.size());
      const json& sizes = array(t, "categories_sizes", where, nodes.size());
      const json& all = array(t, "categories", where, 0);
      for (std::size_t k = 0; k < nodes.size(); ++k) {
        const std::string w = fmt::format("{}.categories_nodes[{}]", where, k);
        const auto node = integer(nodes[k], w, 0, static_cast<long long>(n) - 1);
        const auto beg = integer(segments[k], w + " segment", 0, static_cast<long long>(all.size()));
        const auto size = integer(sizes[k], w + " size", 1, static_cast<long long>(all.size()) - beg);
        auto& c = cats[static_cast<std::size_t>(node)];
        for (auto j = beg; j < beg + size; ++j) {
          c.push_back(integer(all[static_cast<std::size_t>(j)], where + ".categories", 0, kMaxCategory));
        }
        std::sort(c.begin(), c.end());
        c.erase(std::unique(c.begin(), c.end()), c.end());
      }
    }
    std::vector<RawNode> raw(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::string w = fmt::format("{} node {}", where, i);
      RawNode& nd = raw[i];
      const float cond = real(conds[i], w + " split_condition");  // NaN for categorical splits
      nd.left = static_cast<int>(integer(lefts[i], w + " left child", -1, std::numeric_limits<int>::max()));
      if (nd.left == -1) {
        if (!std::isfinite(cond)) fail(w, fmt::format("leaf value (split_condition) is {}", word(cond)));
        nd.leaf = true;
        nd.value = static_cast<double>(cond);  // a leaf's split_condition holds its value
        continue;
      }
      nd.right = static_cast<int>(integer(rights[i], w + " right child", 0, std::numeric_limits<int>::max()));
      nd.feature = static_cast<int>(integer(features[i], w + " split index", 0, n_features - 1));
      const bool dl = integer(default_left[i], w + " default_left", 0, 1) != 0;
      const bool categorical = types != nullptr && integer((*types)[i], w + " split_type", 0, 1) == 1;
      if (!categorical) {
        // XGBoost's numeric splits are finite cut values; an infinite one is no split it makes.
        if (!std::isfinite(cond)) fail(w, fmt::format("split_condition is {}; expected a finite number", word(cond)));
        const tree_detail::Cut c = tree_detail::below_float32(cond);
        nd.tests = {{c.mode, c.threshold, dl, tree_detail::kLeft, tree_detail::kRight}};
        continue;
      }
      if (cats[i].empty()) fail(w, "a categorical split without categories (categories_nodes does not name it)");
      auto cut = [](long long v) {
        return std::optional<tree_detail::Cut>(tree_detail::below_float32(static_cast<float>(v)));
      };
      nd.tests = tree_detail::interval_chain(tree_detail::category_runs(cats[i], cut), tree_detail::kRight,
                                             dl ? tree_detail::kLeft : tree_detail::kRight);
    }
    return raw;
  }
};

}  // namespace xgboost_detail

Model parse_xgboost_json(const std::string& bytes, const std::string& path) {
  using namespace xgboost_detail;  // NOLINT(google-build-using-namespace): this file's helpers
  const Reader rd{path};
  const json doc = parse_document(bytes, path);
  const json& learner = rd.field(doc, "learner", "");
  const json& lmp = rd.field(learner, "learner_model_param", "learner");
  const int n_features = static_cast<int>(rd.integer(rd.field(lmp, "num_feature", "learner.learner_model_param"),
                                                     "learner.learner_model_param.num_feature", 1, kMaxFeatures));
  const int num_class = static_cast<int>(rd.integer(rd.field(lmp, "num_class", "learner.learner_model_param"),
                                                    "learner.learner_model_param.num_class", 0, 100'000));
  if (lmp.contains("num_target") &&
      rd.integer(lmp["num_target"], "learner.learner_model_param.num_target", 1, 1'000'000) != 1) {
    throw UnsupportedError(path, "learner.learner_model_param.num_target", "multi-output models");
  }
  const float base_score =
      rd.real(rd.field(lmp, "base_score", "learner.learner_model_param"), "learner.learner_model_param.base_score");
  const json& obj_name = rd.field(rd.field(learner, "objective", "learner"), "name", "learner.objective");
  if (!obj_name.is_string()) rd.fail("learner.objective.name", "expected a string");
  const std::string objective = obj_name.get<std::string>();

  const json& booster = rd.field(learner, "gradient_booster", "learner");
  const json& booster_name = rd.field(booster, "name", "learner.gradient_booster");
  if (booster_name != "gbtree") {
    // UBJSON strings may hold any bytes: dump() would throw on invalid UTF-8 unless told to replace.
    const std::string shown = booster_name.dump(-1, ' ', false, json::error_handler_t::replace);
    throw UnsupportedError(path, "learner.gradient_booster",
                           fmt::format("booster {} (witness reads gbtree models)", shown.substr(0, 80)));
  }
  const json& model = rd.field(booster, "model", "learner.gradient_booster");
  const json& trees = rd.array(model, "trees", "learner.gradient_booster.model", 0);
  const json& tree_info = rd.array(model, "tree_info", "learner.gradient_booster.model", trees.size());
  if (trees.empty()) rd.fail("learner.gradient_booster.model.trees", "no trees");

  // The base margin, in float32 as XGBoost computes it (ProbToMargin).
  const bool multi = objective == "multi:softprob" || objective == "multi:softmax";
  const bool logistic = objective == "binary:logistic" || objective == "reg:logistic";
  if (!multi && !logistic && objective != "binary:logitraw" && objective != "binary:hinge") {
    throw UnsupportedError(path, "learner.objective",
                           fmt::format("objective \"{}\" (witness reads binary:logistic, binary:logitraw, "
                                       "binary:hinge, reg:logistic, multi:softprob and multi:softmax)",
                                       objective));
  }
  if (multi != (num_class > 1)) {
    rd.fail("learner.learner_model_param.num_class", fmt::format("is {} for objective {}", num_class, objective));
  }
  float base_margin = base_score;
  if (logistic) {
    if (!(base_score > 0.0F && base_score < 1.0F)) {
      rd.fail("learner.learner_model_param.base_score", "must lie in (0, 1) for a logistic objective");
    }
    base_margin = -std::log(1.0F / base_score - 1.0F);
  }
  if (!std::isfinite(base_margin)) rd.fail("learner.learner_model_param.base_score", "is not finite");

  std::vector<std::string> names;
  if (const auto it = learner.find("feature_names"); it != learner.end() && it->is_array() && !it->empty()) {
    if (static_cast<int>(it->size()) != n_features) {
      rd.fail("learner.feature_names", fmt::format("expected {} names (num_feature)", n_features));
    }
    for (const json& nm : *it) {
      if (!nm.is_string()) rd.fail("learner.feature_names", "expected strings");
      names.push_back(nm.get<std::string>());
    }
  } else {
    for (int i = 0; i < n_features; ++i) names.push_back("f" + std::to_string(i));
  }

  const int n_classes = multi ? num_class : 1;
  auto te = std::make_shared<TreeEnsemble>();
  te->n_targets = n_classes;
  te->classifier = true;
  // The base margin as a first one-leaf tree: XGBoost starts each sum at it and then adds the trees
  // in order, in float32; so does witness's float32 evaluator with this layout (the double one
  // sums in double: margins differ from XGBoost's by float32 rounding, ~1e-7 relative).
  TreeEnsemble::Tree base;
  base.nodes.resize(1);
  for (int k = 0; k < n_classes; ++k) base.leaves.push_back({0, k, static_cast<double>(base_margin)});
  te->trees.push_back(std::move(base));
  tree_detail::Where where{path, "", n_features, tree_detail::kMaxTreeNodes};
  for (std::size_t t = 0; t < trees.size(); ++t) {
    const std::string w = fmt::format("learner.gradient_booster.model.trees[{}]", t);
    const int cls = static_cast<int>(
        rd.integer(tree_info[t], fmt::format("learner.gradient_booster.model.tree_info[{}]", t), 0, n_classes - 1));
    const std::vector<RawNode> raw = rd.tree(trees[t], w, n_features);
    where.tree = w;
    tree_detail::add_tree(*te, raw, 0, cls, where);
  }

  ModelBuilder b("xgboost", names);
  b.set_source(path, "xgboost-json");
  const int margin = b.tree_ensemble(b.input(), te, "trees");
  if (multi) {
    const int probs = b.unary(OpKind::Softmax, margin, "softmax");
    std::vector<std::string> outs(static_cast<std::size_t>(n_classes));
    for (std::size_t k = 0; k < outs.size(); ++k) outs[k] = fmt::format("p{}", k);
    return b.finish(probs, DecisionRule::argmax_of(margin), outs);
  }
  // Label 1 iff the margin is positive (probability above 0.5 for the logistic objectives).
  if (logistic) return b.finish(b.sigmoid(margin, "logistic"), DecisionRule::threshold_on(margin, 0.0), {"p1"});
  return b.finish(margin, DecisionRule::threshold_on(margin, 0.0), {"margin"});
}

Model load_xgboost_json(const std::string& path) { return parse_xgboost_json(read_file(path, 1ULL << 30), path); }

}  // namespace witness
