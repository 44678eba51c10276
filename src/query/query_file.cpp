// Query files (TOML). Top-level keys are one query, or defaults for the [[query]] tables that
// follow; an [[query]]'s own [query.inputs] entries replace the defaults of the same name.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/file.h"
#include "core/toml_limits.h"
#include "domain/schema.h"
#include "query/query.h"

namespace witness {
namespace {

constexpr std::string_view kQueryKeys[] = {"name",        "description", "model",    "program",   "function",
                                           "loop_bound",  "nearest",     "kind",     "semantics", "inputs",
                                           "environment", "state",       "behavior", "factual",   "schema"};
constexpr std::size_t kMaxValues = 10000;  // entries of one input's `values`
constexpr std::string_view kInputKeys[] = {"role", "type", "value", "min", "max", "values", "logged", "description"};

class QueryFileReader {
 public:
  QueryFileReader(const std::string& path, bool agent_given) : QueryFileReader(path, read_file(path), agent_given) {}
  QueryFileReader(std::string path, std::string text, bool agent_given)
      : path_(std::move(path)), text_(std::move(text)), agent_given_(agent_given) {
    std::istringstream in(text_);
    for (std::string line; std::getline(in, line);) lines_.push_back(line);
  }

  std::vector<Query> read() {
    check_toml_limits(text_, path_);
    toml::table root;
    try {
      root = toml::parse(text_, path_);
    } catch (const toml::parse_error& e) {
      throw InputError(path_, at(e.source()), fmt::format("TOML syntax error: {}", e.description()));
    }
    std::vector<std::string_view> allowed(std::begin(kQueryKeys), std::end(kQueryKeys));
    allowed.emplace_back("query");
    check_keys(root, allowed, "");
    std::vector<Query> out;
    if (const toml::node* list = root.get("query")) {
      const auto* arr = list->as_array();
      if (arr == nullptr || !arr->is_array_of_tables()) fail(list, "'query' must be a list of tables: [[query]]");
      std::set<std::string> names;
      for (const toml::node& n : *arr) {
        const toml::table& t = *n.as_table();
        check_keys(t, kQueryKeys, "[[query]]: ");
        Query q = query(t, &root, fmt::format("{}#{}", std::filesystem::path(path_).stem().string(), out.size() + 1));
        if (!names.insert(q.name).second) fail(t.get("name"), fmt::format("a second query named '{}'", q.name));
        out.push_back(std::move(q));
      }
      if (out.empty()) fail(list, "no queries in [[query]]");
    } else {
      if (root.empty()) throw InputError(path_, "", "no query: expected top-level keys or [[query]] tables");
      out.push_back(query(root, nullptr, std::filesystem::path(path_).stem().string()));
    }
    return out;
  }

 private:
  [[nodiscard]] static std::string at(const toml::source_region& r) {
    if (r.begin.line == 0) return {};
    return fmt::format("line {}, column {}", r.begin.line, r.begin.column);
  }
  [[noreturn]] void fail(const toml::node* n, const std::string& what) const {
    throw InputError(path_, n != nullptr ? at(n->source()) : std::string(), what);
  }
  void check_keys(const toml::table& t, const auto& allowed, const std::string& context) const {
    for (auto&& [key, value] : t) {
      if (std::find(std::begin(allowed), std::end(allowed), key.str()) != std::end(allowed)) continue;
      const std::string place = key.source().begin.line != 0 ? at(key.source()) : at(value.source());
      throw InputError(path_, place,
                       fmt::format("{}unknown key '{}' (allowed: {})", context, key.str(), fmt::join(allowed, ", ")));
    }
  }

  // The key in the query table, or else in the defaults.
  static const toml::node* get(const toml::table& t, const toml::table* defaults, std::string_view key) {
    if (const toml::node* n = t.get(key)) return n;
    return defaults != nullptr ? defaults->get(key) : nullptr;
  }

  std::string string_of(const toml::node* n, const std::string& what) const {
    if (const auto* s = n->as_string()) return s->get();
    fail(n, fmt::format("{} must be a string", what));
  }

  // Numbers become exact decimal text: integers as written, floats as their shortest round-trip
  // form (what a reader of the file sees), strings as given (for values no double holds).
  std::string scalar(const toml::node& n, const std::string& what) const {
    if (const auto* i = n.as_integer()) return std::to_string(i->get());
    if (const auto* f = n.as_floating_point()) {
      if (!std::isfinite(f->get())) fail(&n, fmt::format("{} must be finite", what));
      return fmt::format("{}", f->get());
    }
    if (const auto* b = n.as_boolean()) return b->get() ? "true" : "false";
    if (const auto* s = n.as_string()) return s->get();
    fail(&n, fmt::format("{} must be a number or a bool", what));
  }

  QueryText expression(const toml::table& t, const toml::table* defaults, std::string_view key) const {
    QueryText out;
    const toml::node* n = get(t, defaults, key);
    if (n == nullptr) return out;
    out.text = string_of(n, fmt::format("'{}'", key));
    const auto& r = n->source();
    out.where = fmt::format("{}: line {}", path_, r.begin.line);
    // Single-line strings without escapes: expression column c is file column (quote + c).
    if (r.begin.line == r.end.line && r.begin.line >= 1 && r.begin.line <= lines_.size()) {
      const std::string& line = lines_[r.begin.line - 1];
      const std::size_t q = r.begin.column - 1;
      if (q < line.size() && (line[q] == '"' || line[q] == '\'') &&
          line.compare(q + 1, out.text.size(), out.text) == 0 && q + 1 + out.text.size() < line.size() &&
          line[q + 1 + out.text.size()] == line[q]) {
        out.column_shift = static_cast<int>(r.begin.column);
      }
    }
    return out;
  }

  // schema = "S.toml", resolved against this file's folder; its constraints join the premise.
  void schema(const toml::node& n, Query& q) const {
    const std::string rel = string_of(&n, "'schema'");
    const std::filesystem::path resolved = std::filesystem::path(path_).parent_path() / rel;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(resolved, ec))
      fail(&n, fmt::format("schema '{}' not found (looked for {})", rel, resolved.string()));
    // Loaded when the query is answered: a server checks first that the path lies inside its root.
    q.schema_path = resolved.lexically_normal().string();
    q.schema_where = fmt::format("{}: {} (the constraints of {})", path_, at(n.source()), rel);
  }

  QueryInput input(const std::string& name, const toml::node& n) const {
    const auto* t = n.as_table();
    if (t == nullptr) {
      fail(&n, fmt::format("input '{}' must be a table: {{ role = \"state\", type = \"real\", value = ... }}", name));
    }
    check_keys(*t, kInputKeys, fmt::format("input '{}': ", name));
    QueryInput in;
    in.name = name;
    in.where = fmt::format("{}: {}", path_, at(n.source()));
    const toml::node* role = t->get("role");
    if (role == nullptr) fail(&n, fmt::format("input '{}' needs role = \"environment\" or \"state\"", name));
    const std::string r = string_of(role, "'role'");
    if (r != "environment" && r != "state") fail(role, fmt::format("role must be environment or state, not '{}'", r));
    in.role = r == "environment" ? InputRole::Environment : InputRole::State;
    const toml::node* type = t->get("type");
    if (type == nullptr)
      fail(&n, fmt::format("input '{}' needs type = \"bool\", \"int\", \"real\" or \"category\"", name));
    const std::string ty = string_of(type, "'type'");
    if (ty != "bool" && ty != "int" && ty != "real" && ty != "category")
      fail(type, fmt::format("type must be bool, int, real or category, not '{}'", ty));
    in.type = ty == "bool" ? InputType::Bool : ty == "real" ? InputType::Real : InputType::Int;
    in.category = ty == "category";
    if (const toml::node* v = t->get("value")) in.value = scalar(*v, "'value'");
    if (const toml::node* v = t->get("logged")) in.logged = scalar(*v, "'logged'");
    if (const toml::node* v = t->get("min")) in.min = scalar(*v, "'min'");
    if (const toml::node* v = t->get("max")) in.max = scalar(*v, "'max'");
    if (const toml::node* v = t->get("values")) {
      const auto* arr = v->as_array();
      if (arr == nullptr || arr->empty()) fail(v, "'values' must be a non-empty array");
      // Each value is a case of a disjunction the solver reads: a range is min/max.
      if (arr->size() > kMaxValues)
        fail(v, fmt::format("'values' has {} entries, more than {}; give a range with min and max instead", arr->size(),
                            kMaxValues));
      for (const toml::node& e : *arr) in.values.push_back(scalar(e, "every entry of 'values'"));
    }
    return in;
  }

  void inputs(const toml::node* n, std::vector<QueryInput>& out) const {
    if (n == nullptr) return;
    const auto* t = n->as_table();
    if (t == nullptr) fail(n, "'inputs' must be a table of input declarations");
    for (auto&& [key, value] : *t) {
      QueryInput in = input(std::string(key.str()), value);
      auto it = std::find_if(out.begin(), out.end(), [&](const QueryInput& o) { return o.name == in.name; });
      if (it != out.end()) {
        // A query that frees a logged fact keeps it as the point `nearest` measures from.
        if (!in.logged) in.logged = it->value ? it->value : it->logged;
        *it = std::move(in);
      } else {
        out.push_back(std::move(in));
      }
    }
  }

  Query query(const toml::table& t, const toml::table* defaults, const std::string& fallback_name) const {
    Query q;
    const toml::node* name = t.get("name");
    q.name = name != nullptr ? string_of(name, "'name'") : fallback_name;
    q.where = fmt::format("{}: query '{}'", path_, q.name);
    if (const toml::node* d = t.get("description")) q.description = string_of(d, "'description'");

    // The agent: a model file, or a program and its decision function. A query's own key wins
    // over the file's default of the other kind.
    const toml::node* model = t.get("model");
    const toml::node* program = t.get("program");
    if (model == nullptr && program == nullptr) {
      model = get(t, defaults, "model");
      program = get(t, defaults, "program");
    }
    if (model != nullptr && program != nullptr) {
      fail(program, fmt::format("query '{}' names both a model and a program; give one", q.name));
    }
    if (model == nullptr && program == nullptr && !agent_given_) {
      fail(&t, fmt::format("query '{}' has no 'model' or 'program' (a path relative to this file)", q.name));
    }
    const toml::node* function = get(t, defaults, "function");
    if (model == nullptr && program == nullptr) {
      // The caller's --model or --program (Python's model=) answers it.
      q.model_where = fmt::format("{}: query '{}'", path_, q.name);
      if (function != nullptr) q.function = string_of(function, "'function'");
    } else {
      const toml::node* agent = model != nullptr ? model : program;
      const char* key = model != nullptr ? "model" : "program";
      const std::string rel = string_of(agent, fmt::format("'{}'", key));
      const std::filesystem::path resolved = std::filesystem::path(path_).parent_path() / rel;
      std::error_code ec;
      if (!std::filesystem::is_regular_file(resolved, ec)) {
        fail(agent, fmt::format("{} '{}' not found (looked for {})", key, rel, resolved.string()));
      }
      (model != nullptr ? q.model_path : q.program_path) = resolved.lexically_normal().string();
      q.model_where = fmt::format("{}: {}", path_, at(agent->source()));
      if (program != nullptr) {
        if (function == nullptr) {
          fail(program,
               fmt::format("query '{}' names a program but no function = \"...\" (the decision function)", q.name));
        }
        q.function = string_of(function, "'function'");
      }
    }
    if (const toml::node* n = get(t, defaults, "nearest")) {
      const auto v = n->value<bool>();
      if (!v) fail(n, "nearest must be true or false");
      q.nearest = *v;
    }
    if (const toml::node* b = get(t, defaults, "loop_bound")) {
      const auto v = b->value<std::int64_t>();
      if (!v || *v < 1 || *v > 1000000) fail(b, "loop_bound must be an integer from 1 to 1000000");
      q.loop_bound = static_cast<int>(*v);
    }

    const toml::node* kind = get(t, defaults, "kind");
    if (kind == nullptr) fail(&t, fmt::format("query '{}' needs kind = \"might\" or \"would\"", q.name));
    const std::string k = string_of(kind, "'kind'");
    if (k != "might" && k != "would") fail(kind, fmt::format("kind must be might or would, not '{}'", k));
    q.kind = k == "might" ? QueryKind::Might : QueryKind::Would;

    if (const toml::node* s = get(t, defaults, "semantics")) {
      const std::string v = string_of(s, "'semantics'");
      if (v == "real") {
        q.semantics = Semantics::Real;
      } else if (v == "float64") {
        q.semantics = Semantics::Float64;
      } else if (v == "float32") {
        q.semantics = Semantics::Float32;
      } else {
        fail(s, fmt::format("semantics must be real, float64 or float32, not '{}'", v));
      }
    }
    if (defaults != nullptr) inputs(defaults->get("inputs"), q.inputs);
    inputs(t.get("inputs"), q.inputs);
    const toml::node* declared = t.get("inputs");
    if (declared == nullptr && defaults != nullptr) declared = defaults->get("inputs");
    const toml::source_region& r =
        declared != nullptr && declared->source().begin.line != 0 ? declared->source() : t.source();
    if (r.begin.line != 0)
      q.inputs_where = fmt::format("{}: line {} ([inputs] of query '{}')", path_, r.begin.line, q.name);
    q.environment = expression(t, defaults, "environment");
    q.state = expression(t, defaults, "state");
    q.behavior = expression(t, defaults, "behavior");
    q.factual = expression(t, defaults, "factual");
    if (const toml::node* s = get(t, defaults, "schema")) schema(*s, q);
    if (q.behavior.text.empty()) fail(&t, fmt::format("query '{}' has no 'behavior'", q.name));
    return q;
  }

  std::string path_;
  std::string text_;
  bool agent_given_ = false;  // queries without a model or program are answered by the caller's
  std::vector<std::string> lines_;
};

}  // namespace

std::vector<Query> load_query_file(const std::string& path, bool agent_given) {
  return QueryFileReader(path, agent_given).read();
}

std::vector<Query> load_query_text(const std::string& text, const std::string& path, bool agent_given) {
  return QueryFileReader(path, text, agent_given).read();
}

}  // namespace witness
