#include "domain/schema.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "core/error.h"
#include "core/file.h"
#include "core/toml_limits.h"
#include "domain/constraint_parser.h"
#include "domain/csv.h"
#include "model/columns.h"
#include "model/model.h"

namespace witness {
namespace {

// Doubles hold integers exactly up to 2^53; beyond that "integer" bounds would silently round.
constexpr double kMaxExactInteger = 9007199254740992.0;

bool is_integer(double v) { return std::isfinite(v) && std::floor(v) == v && std::fabs(v) <= kMaxExactInteger; }

// The first `limit` parts, then how many there are in all.
std::string join_at_most(const std::vector<std::string>& parts, std::size_t limit) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i == limit) {
      out += fmt::format(", ... ({} in all)", parts.size());
      break;
    }
    if (i != 0) out += ", ";
    out += parts[i];
  }
  return out;
}

std::string format_number(double v) {
  if (is_integer(v)) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{}", v);
}

std::string where(const toml::source_region& r) {
  if (r.begin.line == 0) return {};
  return fmt::format("line {}, column {}", r.begin.line, r.begin.column);
}

}  // namespace

namespace detail {

// Reads one schema file; every failure names the file and the TOML node's position.
class SchemaParser {
 public:
  SchemaParser(std::string_view text, std::string source) : text_(text), source_(std::move(source)) {}

  [[noreturn]] void fail(const toml::node* at, const std::string& what) const {
    throw InputError(source_, at != nullptr ? where(at->source()) : std::string(), what);
  }

  void check_keys(const toml::table& t, const std::set<std::string_view>& allowed, const std::string& context) const {
    for (auto&& [key, value] : t) {
      if (allowed.contains(key.str())) continue;
      std::vector<std::string> names(allowed.begin(), allowed.end());
      // TOML puts a key written after a [[features]] table into that table.
      const char* hint = key.str() == "constraints" && context.starts_with("features[")
                             ? ": write a [constraints] table with 'rules' after the features, or constraints = [...] "
                               "before the first [[features]]"
                             : "";
      fail(&value, fmt::format("{}unknown key '{}' (allowed: {}){}", context, key.str(), fmt::join(names, ", "), hint));
    }
  }

  std::string string_of(const toml::node& n, const std::string& what) const {
    if (const auto* s = n.as_string()) return s->get();
    fail(&n, fmt::format("{} must be a string", what));
  }

  double number_of(const toml::node& n, const std::string& what) const {
    if (const auto* i = n.as_integer()) {
      const double v = static_cast<double>(i->get());
      if (std::fabs(v) > kMaxExactInteger) fail(&n, fmt::format("{} is too large to hold exactly", what));
      return v;
    }
    if (const auto* f = n.as_floating_point()) {
      if (!std::isfinite(f->get())) fail(&n, fmt::format("{} must be finite", what));
      return f->get();
    }
    fail(&n, fmt::format("{} must be a number", what));
  }

  std::vector<std::string> strings_of(const toml::node& n, const std::string& what) const {
    const auto* arr = n.as_array();
    if (arr == nullptr) fail(&n, fmt::format("{} must be an array of strings", what));
    std::vector<std::string> out;
    for (const toml::node& e : *arr) out.push_back(string_of(e, fmt::format("every entry of {}", what)));
    return out;
  }

  Feature feature(const toml::table& t, std::size_t i) const {
    Feature f;
    std::string ctx = fmt::format("features[{}]: ", i);
    check_keys(t,
               {"name", "kind", "min", "max", "categories", "encoding", "scale", "offset", "mean", "std", "center",
                "multiply", "missing", "description"},
               ctx);
    const toml::node* name = t.get("name");
    if (name == nullptr) fail(&t, ctx + "missing 'name'");
    f.name = string_of(*name, "'name'");
    if (f.name.empty()) fail(name, ctx + "'name' is empty");
    ctx = fmt::format("feature '{}': ", f.name);

    f.kind = kind_of(t, ctx);
    bounds(t, ctx, f);
    if (const toml::node* enc = t.get("encoding")) {
      const std::string e = string_of(*enc, ctx + "'encoding'");
      if (e == "one-hot") {
        if (f.kind != FeatureKind::Categorical) fail(enc, ctx + "only a categorical feature can be one-hot encoded");
        f.one_hot = true;
        f.model_width = static_cast<int>(f.categories.size());
      } else if (e != "label") {
        fail(enc, fmt::format("{}unknown encoding '{}' (expected \"label\" or \"one-hot\")", ctx, e));
      }
    }

    normalisation(t, ctx, f);
    if (const toml::node* m = t.get("missing")) {
      if (const auto* text = m->as_string()) {
        f.missing = text->get();
      } else {
        const double v = number_of(*m, ctx + "'missing'");
        f.missing = format_number(v);
        if (!is_integer(v)) f.missing = fmt::format("{}", v);
      }
      if (f.missing.empty()) fail(m, ctx + "'missing' is empty");
    }
    return f;
  }

  FeatureKind kind_of(const toml::table& t, const std::string& ctx) const {
    const toml::node* kind = t.get("kind");
    if (kind == nullptr) fail(&t, ctx + "missing 'kind' (integer, real, categorical or boolean)");
    const std::string k = string_of(*kind, ctx + "'kind'");
    if (k == "integer") return FeatureKind::Integer;
    if (k == "real") return FeatureKind::Real;
    if (k == "categorical") return FeatureKind::Categorical;
    if (k != "boolean")
      fail(kind, fmt::format("{}unknown kind '{}' (expected integer, real, categorical or boolean)", ctx, k));
    return FeatureKind::Boolean;
  }

  // min and max, given (integer, real) or from the categories (categorical, boolean).
  void bounds(const toml::table& t, const std::string& ctx, Feature& f) const {
    const toml::node* min = t.get("min");
    const toml::node* max = t.get("max");
    const toml::node* cats = t.get("categories");
    if (f.kind == FeatureKind::Integer || f.kind == FeatureKind::Real) {
      if (min == nullptr || max == nullptr) fail(&t, ctx + "an integer or real feature needs 'min' and 'max'");
      if (cats != nullptr) fail(cats, ctx + "only a categorical feature has 'categories'");
      f.min = number_of(*min, ctx + "'min'");
      f.max = number_of(*max, ctx + "'max'");
      if (f.kind == FeatureKind::Integer) {
        if (!is_integer(f.min)) fail(min, fmt::format("{}'min' = {} is not an integer", ctx, f.min));
        if (!is_integer(f.max)) fail(max, fmt::format("{}'max' = {} is not an integer", ctx, f.max));
      }
      if (f.min > f.max) {
        fail(min,
             fmt::format("{}'min' ({}) is greater than 'max' ({})", ctx, format_number(f.min), format_number(f.max)));
      }
    } else {
      // Bounds of codes come from the categories; a [boxes.*] table restricts or widens them.
      if (min != nullptr) fail(min, ctx + "a categorical or boolean feature takes no 'min' (use a [boxes.*] table)");
      if (max != nullptr) fail(max, ctx + "a categorical or boolean feature takes no 'max' (use a [boxes.*] table)");
      if (f.kind == FeatureKind::Categorical) {
        if (cats == nullptr) fail(&t, ctx + "a categorical feature needs 'categories' (labels; code = index)");
        f.categories = strings_of(*cats, ctx + "'categories'");
        if (f.categories.empty()) fail(cats, ctx + "'categories' is empty");
        std::set<std::string_view> seen;
        for (const std::string& c : f.categories) {
          if (c.empty()) fail(cats, ctx + "a category label is empty");
          if (!seen.insert(c).second) fail(cats, fmt::format("{}category '{}' is listed twice", ctx, c));
        }
        f.min = 0;
        f.max = static_cast<double>(f.categories.size() - 1);
      } else {
        if (cats != nullptr) fail(cats, ctx + "only a categorical feature has 'categories'");
        f.min = 0;
        f.max = 1;
      }
    }
  }

  // At most one of the three normalisations, invertible.
  void normalisation(const toml::table& t, const std::string& ctx, Feature& f) const {
    const toml::node* scale = t.get("scale");
    const toml::node* offset = t.get("offset");
    const toml::node* mean = t.get("mean");
    const toml::node* stdev = t.get("std");
    const toml::node* center = t.get("center");
    const toml::node* multiply = t.get("multiply");
    const bool affine = scale != nullptr || offset != nullptr;
    const bool standard = mean != nullptr || stdev != nullptr;
    const bool centred = center != nullptr || multiply != nullptr;
    const toml::node* first_norm = affine     ? (scale != nullptr ? scale : offset)
                                   : standard ? (mean != nullptr ? mean : stdev)
                                              : (center != nullptr ? center : multiply);
    if (static_cast<int>(affine) + static_cast<int>(standard) + static_cast<int>(centred) > 1) {
      fail(first_norm, ctx + "give one of 'scale'/'offset', 'mean'/'std' or 'center'/'multiply', not two");
    }
    if ((affine || standard || centred) && f.one_hot) fail(first_norm, ctx + "a one-hot feature cannot be normalised");
    if (affine) {
      f.norm.form = Normalisation::Form::ScaleOffset;
      if (scale != nullptr) f.norm.a = number_of(*scale, ctx + "'scale'");
      if (offset != nullptr) f.norm.b = number_of(*offset, ctx + "'offset'");
      if (f.norm.a == 0) fail(scale, ctx + "'scale' must not be 0 (the map must be invertible)");
    } else if (standard) {
      f.norm.form = Normalisation::Form::MeanStd;
      f.norm.a = 0.0;
      f.norm.b = 1.0;
      if (mean != nullptr) f.norm.a = number_of(*mean, ctx + "'mean'");
      if (stdev != nullptr) f.norm.b = number_of(*stdev, ctx + "'std'");
      if (f.norm.b <= 0) fail(stdev, ctx + "'std' must be positive");
    } else if (centred) {
      f.norm.form = Normalisation::Form::CenterScale;
      f.norm.a = 0.0;
      f.norm.b = 1.0;
      if (center != nullptr) f.norm.a = number_of(*center, ctx + "'center'");
      if (multiply != nullptr) f.norm.b = number_of(*multiply, ctx + "'multiply'");
      if (f.norm.b == 0) fail(multiply, ctx + "'multiply' must not be 0 (the map must be invertible)");
    }
  }

  void parse(Schema& s) const {
    check_toml_limits(text_, source_);
    toml::table root;
    try {
      root = toml::parse(text_, source_);
    } catch (const toml::parse_error& e) {
      throw InputError(source_, where(e.source()), fmt::format("TOML syntax error: {}", e.description()));
    }
    check_keys(
        root,
        {"name", "description", "label", "label_classes", "protected", "ignore", "features", "boxes", "constraints"},
        "");
    s.source_ = source_;
    if (const toml::node* n = root.get("name")) {
      s.name_ = string_of(*n, "'name'");
    } else {
      s.name_ = std::filesystem::path(source_).stem().string();
    }

    const toml::node* feats = root.get("features");
    if (feats == nullptr) fail(nullptr, "no features: add one [[features]] table per model input");
    const auto* arr = feats->as_array();
    if (arr == nullptr || arr->empty()) fail(feats, "'features' must be a non-empty array of [[features]] tables");
    std::map<std::string, const toml::node*, std::less<>> seen;
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const toml::node& e = *arr->get(i);
      const auto* t = e.as_table();
      if (t == nullptr) fail(&e, fmt::format("features[{}] must be a table", i));
      Feature f = feature(*t, i);
      if (auto it = seen.find(f.name); it != seen.end()) {
        fail(t->get("name"),
             fmt::format("feature '{}' is defined twice (first at {})", f.name, where(it->second->source())));
      }
      seen.emplace(f.name, t->get("name"));
      s.features_.push_back(std::move(f));
    }
    s.finish();
    for (std::size_t i = 0; i < s.features_.size(); ++i) {
      Feature& f = s.features_[i];
      if (f.missing.empty()) continue;
      const std::string err = s.try_parse_value(static_cast<int>(i), f.missing, f.missing_value);
      if (!err.empty())
        fail(arr->get(i)->as_table()->get("missing"), fmt::format("feature '{}': 'missing': {}", f.name, err));
    }

    if (const toml::node* n = root.get("label")) {
      s.label_ = string_of(*n, "'label'");
      if (seen.contains(s.label_)) {
        fail(n, fmt::format("label column '{}' is also a feature; the label is not a model input", s.label_));
      }
    }
    if (const toml::node* n = root.get("label_classes")) {
      if (s.label_.empty()) fail(n, "'label_classes' needs a 'label' column");
      s.label_classes_ = strings_of(*n, "'label_classes'");
      std::set<std::string_view> dup;
      for (const std::string& c : s.label_classes_) {
        if (!dup.insert(c).second) fail(n, fmt::format("label class '{}' is listed twice", c));
      }
    }
    if (const toml::node* n = root.get("ignore")) {
      s.ignored_ = strings_of(*n, "'ignore'");
      for (const std::string& c : s.ignored_) {
        if (seen.contains(c) || c == s.label_) fail(n, fmt::format("'ignore': '{}' is a feature or the label", c));
      }
    }
    if (const toml::node* n = root.get("protected")) {
      s.protected_ = strings_of(*n, "'protected'");
      try {
        (void)s.protected_indices(s.protected_);
      } catch (const InputError& e) {
        fail(n, fmt::format("'protected': {}", strip_source(e.what())));
      }
    }
    if (const toml::node* n = root.get("boxes")) boxes(*n, s);
    if (const toml::node* n = root.get("constraints")) constraints(*n, s);
  }

  // `constraints = [...]` before the first [[features]], or a [constraints] table with `rules`
  // anywhere after them (a plain key there would belong to the last feature).
  void constraints(const toml::node& n, Schema& s) const {
    const toml::node* list = &n;
    if (const auto* t = n.as_table()) {
      check_keys(*t, {"rules"}, "constraints: ");
      list = t->get("rules");
      if (list == nullptr) fail(&n, "[constraints] needs 'rules', an array of strings, one rule each");
    }
    const auto* arr = list->as_array();
    if (arr == nullptr) fail(list, "'constraints' must be an array of strings, one rule each");
    for (const toml::node& e : *arr) {
      const auto* text = e.as_string();
      if (text == nullptr) fail(&e, "'constraints': every rule is a string");
      parse_constraint(text->get(), s, source_, where(e.source()), s.constraints_);
    }
    if (const std::string cycle = s.constraints_.order_derived(); !cycle.empty())
      fail(&n, fmt::format("derived features form a cycle (through '{}')", cycle));
  }

  void boxes(const toml::node& n, Schema& s) const {
    const auto* t = n.as_table();
    if (t == nullptr) fail(&n, "'boxes' must be a table of [boxes.<name>] tables");
    for (auto&& [box_key, box_node] : *t) {
      const std::string box(box_key.str());
      const auto* bt = box_node.as_table();
      if (bt == nullptr) fail(&box_node, fmt::format("box '{}' must be a table mapping features to [lo, hi]", box));
      auto& entries = s.boxes_[box];
      for (auto&& [feat_key, range] : *bt) {
        const std::string ctx = fmt::format("box '{}', feature '{}': ", box, feat_key.str());
        auto it = s.index_.find(feat_key.str());
        if (it == s.index_.end()) {
          std::vector<std::string> names;
          for (const Feature& f : s.features_) names.push_back(f.name);
          // TOML reads `a.b = [0, 1]` as a table `a`: the usual slip with dotted feature names.
          const char* hint = range.is_table() ? "; quote a name with dots: \"a.b\" = [lo, hi]" : "";
          fail(&range, fmt::format("box '{}': unknown feature '{}' (known: {}){}", box, feat_key.str(),
                                   fmt::join(names, ", "), hint));
        }
        const Feature& f = s.features_[static_cast<std::size_t>(it->second)];
        const auto* pair = range.as_array();
        if (pair == nullptr || pair->size() != 2) fail(&range, ctx + "expected [lo, hi]");
        const double lo = number_of(*pair->get(0), ctx + "lo");
        const double hi = number_of(*pair->get(1), ctx + "hi");
        if (lo > hi) fail(&range, fmt::format("{}lo ({}) is greater than hi ({})", ctx, lo, hi));
        if (f.integral() && (!is_integer(lo) || !is_integer(hi))) {
          fail(&range, fmt::format("{}bounds must be integers for a {} feature", ctx, kind_name(f.kind)));
        }
        if (f.kind == FeatureKind::Categorical && lo < 0) fail(&range, ctx + "category codes start at 0");
        if (f.kind == FeatureKind::Boolean && (lo < 0 || hi > 1)) fail(&range, ctx + "a boolean lies in [0, 1]");
        if (f.one_hot && hi >= static_cast<double>(f.categories.size())) {
          fail(&range,
               fmt::format("{}a one-hot feature has exactly {} codes (its model inputs)", ctx, f.categories.size()));
        }
        entries.emplace_back(it->second, std::make_pair(lo, hi));
      }
    }
  }

 private:
  // protected_indices() names the schema file itself; the parser adds file and position instead.
  std::string strip_source(const std::string& what) const {
    const std::string prefix = source_ + ": ";
    return what.starts_with(prefix) ? what.substr(prefix.size()) : what;
  }

  std::string_view text_;
  std::string source_;
};

}  // namespace detail

const char* kind_name(FeatureKind kind) {
  switch (kind) {
    case FeatureKind::Integer: return "integer";
    case FeatureKind::Real: return "real";
    case FeatureKind::Categorical: return "categorical";
    case FeatureKind::Boolean: return "boolean";
  }
  return "?";
}

Schema parse_schema(std::string_view toml_text, const std::string& source) {
  Schema s;
  detail::SchemaParser(toml_text, source).parse(s);
  return s;
}

Schema load_schema(const std::string& path) { return parse_schema(read_file(path), path); }

void Schema::finish() {
  model_width_ = 0;
  index_.clear();
  codes_.assign(features_.size(), {});
  numeric_labels_.assign(features_.size(), false);
  for (std::size_t i = 0; i < features_.size(); ++i) {
    Feature& f = features_[i];
    f.model_offset = model_width_;
    f.model_width = f.one_hot ? static_cast<int>(f.categories.size()) : 1;
    model_width_ += f.model_width;
    index_.emplace(f.name, static_cast<int>(i));
    for (std::size_t c = 0; c < f.categories.size(); ++c) {
      codes_[i].emplace(f.categories[c], static_cast<int>(c));
      double unused = 0;
      if (detail::parse_number(f.categories[c], unused)) numeric_labels_[i] = true;
    }
  }
}

std::optional<int> Schema::find_feature(std::string_view name) const {
  const auto it = index_.find(name);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

int Schema::feature_index(std::string_view name) const {
  auto it = index_.find(name);
  if (it != index_.end()) return it->second;
  std::vector<std::string> names;
  for (const Feature& f : features_) names.push_back(f.name);
  throw InputError(source_, "", fmt::format("unknown feature '{}' (known: {})", name, fmt::join(names, ", ")));
}

std::vector<bool> Schema::feature_mask(const std::vector<int>& features) const {
  std::vector<bool> mask(static_cast<std::size_t>(size()), false);
  for (const int f : features) mask.at(static_cast<std::size_t>(f)) = true;
  return mask;
}

std::vector<bool> Schema::input_mask(const std::vector<int>& features) const {
  std::vector<bool> mask(static_cast<std::size_t>(model_width()), false);
  for (const int i : inputs_of(features)) mask[static_cast<std::size_t>(i)] = true;
  return mask;
}

std::vector<int> Schema::inputs_of(const std::vector<int>& features) const {
  std::vector<int> inputs;
  for (const int f : features) {
    const Feature& ft = feature(f);
    for (int k = 0; k < ft.model_width; ++k) inputs.push_back(ft.model_offset + k);
  }
  std::sort(inputs.begin(), inputs.end());
  return inputs;
}

std::vector<int> Schema::protected_indices(const std::vector<std::string>& names) const {
  std::vector<int> out;
  for (const std::string& n : names) {
    const int i = feature_index(n);
    if (std::find(out.begin(), out.end(), i) != out.end()) {
      throw InputError(source_, "", fmt::format("protected feature '{}' is listed twice", n));
    }
    if (features_[static_cast<std::size_t>(i)].kind == FeatureKind::Real) {
      throw InputError(source_, "",
                       fmt::format("protected feature '{}' is real; a protected feature must take finitely many "
                                   "values (integer, categorical or boolean)",
                                   n));
    }
    out.push_back(i);
  }
  return out;
}

std::vector<std::string> Schema::box_names() const {
  std::vector<std::string> out;
  for (const auto& [name, entries] : boxes_) out.push_back(name);
  return out;
}

Schema Schema::with_box(const std::string& box) const {
  auto it = boxes_.find(box);
  if (it == boxes_.end()) {
    throw InputError(source_, "",
                     boxes_.empty()
                         ? fmt::format("unknown box '{}' (this schema defines no [boxes.*] tables)", box)
                         : fmt::format("unknown box '{}' (available: {})", box, fmt::join(box_names(), ", ")));
  }
  Schema s = *this;
  for (const auto& [i, bounds] : it->second) {
    s.features_[static_cast<std::size_t>(i)].min = bounds.first;
    s.features_[static_cast<std::size_t>(i)].max = bounds.second;
  }
  s.active_box_ = box;
  return s;
}

Schema Schema::with_bounds(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi, const std::string& name) const {
  Schema s = *this;
  for (std::size_t i = 0; i < s.features_.size(); ++i) {
    Feature& f = s.features_[i];
    const auto k = static_cast<Eigen::Index>(i);
    if (!(f.min <= lo(k) && lo(k) <= hi(k) && hi(k) <= f.max))
      throw InternalError(
          fmt::format("with_bounds: [{}, {}] is not inside '{}' [{}, {}]", lo(k), hi(k), f.name, f.min, f.max));
    f.min = lo(k);
    f.max = hi(k);
  }
  s.active_box_ = name;
  return s;
}

std::vector<std::string> Schema::model_input_names() const {
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(model_width_));
  for (const Feature& f : features_) {
    if (!f.one_hot) {
      out.push_back(f.name);
      continue;
    }
    for (const std::string& c : f.categories) out.push_back(f.name + "=" + c);
  }
  return out;
}

Eigen::VectorXd Schema::to_model(const Eigen::Ref<const Eigen::VectorXd>& raw) const {
  if (raw.size() != size()) {
    throw InputError(source_, "", fmt::format("a raw row has {} values, the schema {} features", raw.size(), size()));
  }
  Eigen::VectorXd x = Eigen::VectorXd::Zero(model_width_);
  for (std::size_t i = 0; i < features_.size(); ++i) {
    const Feature& f = features_[i];
    const double v = raw[static_cast<Eigen::Index>(i)];
    if (!f.one_hot) {
      x[f.model_offset] = f.norm.to_model(v);
      continue;
    }
    if (!is_integer(v) || v < 0 || v >= static_cast<double>(f.categories.size())) {
      throw InputError(source_, fmt::format("feature '{}'", f.name),
                       fmt::format("code {} has no one-hot input (codes 0..{})", v, f.categories.size() - 1));
    }
    x[f.model_offset + static_cast<int>(v)] = 1.0;
  }
  return x;
}

Eigen::MatrixXd Schema::to_model_columns(const Eigen::Ref<const Eigen::MatrixXd>& raw) const {
  if (raw.rows() != size()) {
    throw InputError(source_, "", fmt::format("a raw row has {} values, the schema {} features", raw.rows(), size()));
  }
  // Feature by feature (rows), the hot path of black-box testing; the same per-value operations
  // as to_model, so the doubles are identical.
  Eigen::MatrixXd x(model_width_, raw.cols());
  // No rows (a CSV with a header only): Eigen's row blocks of an empty matrix would offset a null
  // data pointer, which is undefined behaviour.
  if (raw.cols() == 0) return x;
  for (std::size_t i = 0; i < features_.size(); ++i) {
    const Feature& f = features_[i];
    const auto row = static_cast<Eigen::Index>(i);
    if (!f.one_hot) {
      if (f.norm.form == Normalisation::Form::None) {
        x.row(f.model_offset) = raw.row(row);
      } else {
        for (Eigen::Index j = 0; j < raw.cols(); ++j) x(f.model_offset, j) = f.norm.to_model(raw(row, j));
      }
      continue;
    }
    x.middleRows(f.model_offset, f.model_width).setZero();
    for (Eigen::Index j = 0; j < raw.cols(); ++j) {
      const double v = raw(row, j);
      if (!is_integer(v) || v < 0 || v >= static_cast<double>(f.categories.size())) {
        throw InputError(source_, fmt::format("feature '{}'", f.name),
                         fmt::format("code {} has no one-hot input (codes 0..{})", v, f.categories.size() - 1));
      }
      x(f.model_offset + static_cast<Eigen::Index>(v), j) = 1.0;
    }
  }
  return x;
}

Eigen::VectorXd Schema::from_model(const Eigen::Ref<const Eigen::VectorXd>& model) const {
  if (model.size() != model_width_) {
    throw InputError(source_, "",
                     fmt::format("a model input vector has {} values, the schema {}", model.size(), model_width_));
  }
  Eigen::VectorXd raw(size());
  for (std::size_t i = 0; i < features_.size(); ++i) {
    const Feature& f = features_[i];
    double v = 0;
    if (f.one_hot) {
      Eigen::Index hot = 0;
      model.segment(f.model_offset, f.model_width).maxCoeff(&hot);  // first maximum on ties
      v = static_cast<double>(hot);
    } else {
      v = f.norm.to_raw(model[f.model_offset]);
      if (f.integral()) v = std::round(v);
    }
    raw[static_cast<Eigen::Index>(i)] = v;
  }
  return raw;
}

std::string Schema::display(int fi, double raw) const {
  const Feature& f = feature(fi);
  switch (f.kind) {
    case FeatureKind::Categorical:
      if (is_integer(raw) && raw >= 0 && raw < static_cast<double>(f.categories.size())) {
        return f.categories[static_cast<std::size_t>(raw)];
      }
      return format_number(raw);
    case FeatureKind::Boolean:
      if (raw == 0) return "false";
      if (raw == 1) return "true";
      return format_number(raw);
    case FeatureKind::Integer: return format_number(raw);
    case FeatureKind::Real: return fmt::format("{}", raw);
  }
  return format_number(raw);
}

std::string Schema::display_row(const Eigen::Ref<const Eigen::VectorXd>& raw) const {
  std::string out;
  for (int i = 0; i < size() && i < raw.size(); ++i) {
    if (i != 0) out += ", ";
    out += features_[static_cast<std::size_t>(i)].name + "=" + display_quoted(i, raw[i]);
  }
  return out;
}

std::string Schema::display_quoted(int feature, double raw) const { return quoted_value(display(feature, raw)); }

std::string quoted_value(std::string_view text) {
  const auto control = [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; };
  // Quote labels that would make a list ambiguous ("1-4 years", "a,b") or break its line.
  if (text.find_first_of(" ,=\"") == std::string_view::npos && std::none_of(text.begin(), text.end(), control))
    return std::string(text);
  std::string q = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      q += '\\';
      q += c;
    } else if (c == '\n') {
      q += "\\n";
    } else if (c == '\r') {
      q += "\\r";
    } else if (c == '\t') {
      q += "\\t";
    } else if (control(c)) {
      q += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      q += c;
    }
  }
  return q + "\"";
}

std::string Schema::try_parse_value(int fi, std::string_view text, double& value) const {
  const Feature& f = feature(fi);
  const std::string_view t = detail::trim(text);
  // An empty cell, or NaN as numpy prints it, is a missing value (unless a category is so named).
  const bool nan_text = (t == "nan" || t == "NaN") && !f.missing.empty();
  if (t.empty() || (nan_text && !codes_[static_cast<std::size_t>(fi)].contains(t))) {
    if (f.missing.empty())
      return fmt::format("empty value (a missing value: the schema gives no 'missing' value for '{}')", f.name);
    value = f.missing_value;
    return {};
  }
  // Message parts, built only on failure: this is the hot path of load_csv.
  auto in_box = [&] { return active_box_.empty() ? std::string() : fmt::format(" (box '{}')", active_box_); };
  auto bounds = [&] { return fmt::format("[{}, {}]", format_number(f.min), format_number(f.max)); };
  double v = 0;
  switch (f.kind) {
    case FeatureKind::Categorical: {
      const auto& codes = codes_[static_cast<std::size_t>(fi)];
      // Labels win over codes; when no label reads as a number, try the cheaper number first.
      bool found = !numeric_labels_[static_cast<std::size_t>(fi)] && detail::parse_number(t, v);
      bool by_label = false;
      if (!found) {
        if (auto it = codes.find(t); it != codes.end()) {
          v = it->second;
          found = by_label = true;
        } else {
          found = detail::parse_number(t, v);
        }
      }
      if (found && is_integer(v) && v >= f.min && v <= f.max) break;
      if (by_label) {
        return fmt::format("category '{}' (code {}) is outside the allowed codes {}{}", t, format_number(v), bounds(),
                           in_box());
      }
      std::vector<std::string> allowed;
      for (std::size_t c = 0; c < f.categories.size(); ++c) {
        if (static_cast<double>(c) >= f.min && static_cast<double>(c) <= f.max) allowed.push_back(f.categories[c]);
      }
      return fmt::format("expected a category of '{}' ({}) or a code in {}{}, got '{}'", f.name,
                         join_at_most(allowed, 12), bounds(), in_box(), t);
    }
    case FeatureKind::Boolean:
      if (t == "true" || t == "True" || t == "TRUE") {
        v = 1;
      } else if (t == "false" || t == "False" || t == "FALSE") {
        v = 0;
      } else if (!detail::parse_number(t, v) || (v != 0 && v != 1)) {
        return fmt::format("expected true, false, 0 or 1, got '{}'", t);
      }
      if (v < f.min || v > f.max) return fmt::format("expected a value in {}{}, got '{}'", bounds(), in_box(), t);
      break;
    case FeatureKind::Integer:
      if (!detail::parse_number(t, v) || !is_integer(v) || v < f.min || v > f.max) {
        return fmt::format("expected an integer in {}{}, got '{}'", bounds(), in_box(), t);
      }
      break;
    case FeatureKind::Real:
      if (!detail::parse_number(t, v) || v < f.min || v > f.max) {
        return fmt::format("expected a number in [{}, {}]{}, got '{}'", f.min, f.max, in_box(), t);
      }
      break;
  }
  value = v == 0 ? 0.0 : v;  // "-0" reads as 0
  return {};
}

double Schema::parse_value(int fi, std::string_view text) const {
  double v = 0;
  std::string err = try_parse_value(fi, text, v);
  if (!err.empty()) throw InputError(source_, fmt::format("feature '{}'", feature(fi).name), err);
  return v;
}

bool Schema::contains(const Eigen::Ref<const Eigen::VectorXd>& raw) const {
  if (raw.size() != size()) return false;
  for (std::size_t i = 0; i < features_.size(); ++i) {
    const Feature& f = features_[i];
    const double v = raw[static_cast<Eigen::Index>(i)];
    if (!std::isfinite(v) || v < f.min || v > f.max) return false;
    if (f.integral() && !is_integer(v)) return false;
  }
  return true;
}

long double Schema::domain_size() const {
  long double n = 1;
  for (const Feature& f : features_) {
    if (f.kind == FeatureKind::Real) {
      if (f.max > f.min) return std::numeric_limits<long double>::infinity();
      continue;
    }
    n *= static_cast<long double>(f.max) - static_cast<long double>(f.min) + 1;
  }
  return n;
}

namespace {

std::string categories_text(const std::vector<std::string>& c) { return join_at_most(c, 8); }

// What differs between a schema feature and the model's own column, or "".
std::string column_mismatch(const Feature& f, const RawColumn& c) {
  if (c.categorical != (f.kind == FeatureKind::Categorical)) {
    return c.categorical ? fmt::format("the model reads category labels ({}), the schema a {} feature",
                                       categories_text(c.categories), kind_name(f.kind))
                         : "the model reads a number, the schema categories";
  }
  if (c.categorical && f.categories != c.categories) {
    return fmt::format("categories differ: the schema lists [{}], the model's encoder [{}] (codes must match)",
                       categories_text(f.categories), categories_text(c.categories));
  }
  if (c.one_hot != f.one_hot) {
    return fmt::format("the model encodes it {}, the schema {}", c.one_hot ? "one-hot" : "as a code",
                       f.one_hot ? "one-hot" : "as a code");
  }
  if (!(c.norm == f.norm)) {
    const std::string model =
        c.norm.form == Normalisation::Form::None ? "reads it as it is" : "computes " + c.norm.describe(f.name);
    const std::string schema =
        f.norm.form == Normalisation::Form::None ? "gives no normalisation" : "gives " + f.norm.describe(f.name);
    return fmt::format("the model {}{}, but the schema {}", model, c.step.empty() ? "" : " (" + c.step + ")", schema);
  }
  if (!f.missing.empty() && !c.missing.empty() && f.missing != c.missing) {
    double a = 0, b = 1;
    if (!(detail::parse_number(f.missing, a) && detail::parse_number(c.missing, b) && a == b))
      return fmt::format("a missing value is '{}' for the model's imputer, '{}' in the schema", c.missing, f.missing);
  }
  return {};
}

}  // namespace

void check_schema_fits_model(const Schema& schema, const Model& model) {
  if (model.columns.empty()) {
    if (schema.model_width() != model.input_width()) {
      throw InputError(schema.source(), "",
                       fmt::format("the schema describes {} model inputs, but {} takes {}", schema.model_width(),
                                   model.source, model.input_width()));
    }
    // Models converted in Python know their feature names: a schema in another order is a silent mistake.
    bool named = model.format == "python";
    for (std::size_t i = 0; named && i < model.input_names.size(); ++i)
      named = model.input_names[i] != fmt::format("x{}", i);
    if (named && model.input_names != schema.model_input_names()) {
      throw InputError(schema.source(), "",
                       fmt::format("the model's inputs ({}) are not the schema's ({})",
                                   join_at_most(model.input_names, 20), join_at_most(schema.model_input_names(), 20)));
    }
    return;
  }
  const std::string fix =
      "; write the schema with `witness schema infer MODEL --data DATA.csv` (or "
      "Schema.from_pipeline) so that it says what the model computes";
  std::vector<std::string> names;
  for (const RawColumn& c : model.columns) names.push_back(c.name);
  std::vector<std::string> features;
  for (const Feature& f : schema.features()) features.push_back(f.name);
  bool same = names.size() == features.size();
  for (std::size_t i = 0; same && i < names.size(); ++i) same = same_column(features[i], names[i]);
  if (!same) {
    throw InputError(schema.source(), "",
                     fmt::format("the model {} reads the columns {} (in this order), the schema has the features {}{}",
                                 model.source, join_at_most(names, 20), join_at_most(features, 20), fix));
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string why = column_mismatch(schema.feature(static_cast<int>(i)), model.columns[i]);
    if (!why.empty())
      throw InputError(schema.source(), fmt::format("feature '{}'", names[i]),
                       fmt::format("does not match the model's preprocessing: {}{}", why, fix));
  }
}

Schema load_schema_for(const Model& model, const std::string& path, const std::string& box) {
  Schema schema = load_schema(path);
  if (!box.empty()) schema = schema.with_box(box);
  check_schema_fits_model(schema, model);
  return schema;
}

}  // namespace witness
