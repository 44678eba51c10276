#include "domain/dependencies.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <tuple>
#include <unordered_map>

namespace witness {
namespace {

constexpr std::size_t kMaxSourceValues = 1000;  // more: a near-identifier, not a rule
constexpr std::size_t kMaxMapValues = 64;       // a longer map is unreadable
constexpr std::size_t kMaxBuckets = 16;
constexpr std::size_t kMaxColumns = 200;        // pairs are checked row by row: quadratic in columns
constexpr std::size_t kRowsPerSourceValue = 5;  // fewer rows per value: too likely by chance

// A column's values as small integers (first-seen order) and its distinct values.
struct Coded {
  std::vector<int> codes;
  std::vector<std::string_view> distinct;
};

Coded code(const std::vector<std::string_view>& values) {
  Coded c;
  c.codes.reserve(values.size());
  std::unordered_map<std::string_view, int> index;
  for (const std::string_view v : values) {
    const auto [it, fresh] = index.emplace(v, static_cast<int>(c.distinct.size()));
    if (fresh) c.distinct.push_back(v);
    c.codes.push_back(it->second);
  }
  return c;
}

// The target code of each source code when the source determines the target on every row.
std::optional<std::vector<int>> determines(const Coded& source, const Coded& target) {
  std::vector<int> to(source.distinct.size(), -1);
  for (std::size_t i = 0; i < source.codes.size(); ++i) {
    int& t = to[static_cast<std::size_t>(source.codes[i])];
    if (t < 0) {
      t = target.codes[i];
    } else if (t != target.codes[i]) {
      return std::nullopt;
    }
  }
  return to;
}

bool plain_text(std::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char c) {
    return c == '"' || c == '\'' || c == '`' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
  });
}

// A value as the rule language reads it: numbers bare, labels in double quotes; "" if it cannot be
// written inside a TOML literal string.
std::string literal(std::string_view v, bool numeric) {
  if (!plain_text(v)) return {};
  return numeric ? std::string(v) : fmt::format("\"{}\"", v);
}

std::string name_of(const std::string& name) {
  const bool bare =
      !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) != 0 || name[0] == '_') &&
      std::all_of(name.begin(), name.end(),
                  [](char c) {
                    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '-';
                  }) &&
      name.back() != '-';
  if (bare) return name;
  return plain_text(name) ? fmt::format("`{}`", name) : std::string();
}

double number(std::string_view v) { return std::strtod(std::string(v).c_str(), nullptr); }

// bucket(S, edges, values) when S's sorted values fall into contiguous runs of target values.
std::string bucket_rule(const std::string& target_name, const DataColumn& s, const Coded& source, const Coded& target,
                        const std::vector<int>& to, bool target_numeric) {
  std::vector<int> order(source.distinct.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return number(source.distinct[static_cast<std::size_t>(a)]) < number(source.distinct[static_cast<std::size_t>(b)]);
  });
  std::vector<int> runs;  // target code per run
  std::vector<std::string_view> edges;
  for (const int a : order) {
    const int t = to[static_cast<std::size_t>(a)];
    if (!runs.empty() && runs.back() == t) continue;
    if (std::find(runs.begin(), runs.end(), t) != runs.end()) return {};  // a value comes back: no bucket
    if (!runs.empty()) edges.push_back(source.distinct[static_cast<std::size_t>(a)]);
    runs.push_back(t);
  }
  if (runs.size() > kMaxBuckets || runs.size() == source.distinct.size()) return {};
  std::vector<std::string> values;
  for (const int t : runs) {
    values.push_back(literal(target.distinct[static_cast<std::size_t>(t)], target_numeric));
    if (values.back().empty()) return {};
  }
  std::vector<std::string> edge_text(edges.begin(), edges.end());
  return fmt::format("{} = bucket({}, [{}], [{}])", target_name, name_of(s.name), fmt::join(edge_text, ", "),
                     fmt::join(values, ", "));
}

std::string map_rule(const std::string& target_name, const DataColumn& s, const Coded& source, const Coded& target,
                     const std::vector<int>& to, bool target_numeric) {
  if (source.distinct.size() > kMaxMapValues) return {};
  std::vector<int> order(source.distinct.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const std::string_view x = source.distinct[static_cast<std::size_t>(a)];
    const std::string_view y = source.distinct[static_cast<std::size_t>(b)];
    return s.numeric ? number(x) < number(y) : x < y;
  });
  std::vector<std::string> pairs;
  for (const int a : order) {
    const std::string k = literal(source.distinct[static_cast<std::size_t>(a)], s.numeric);
    const std::string v =
        literal(target.distinct[static_cast<std::size_t>(to[static_cast<std::size_t>(a)])], target_numeric);
    if (k.empty() || v.empty()) return {};
    pairs.push_back(fmt::format("{}: {}", k, v));
  }
  return fmt::format("{} = map({}, {{{}}})", target_name, name_of(s.name), fmt::join(pairs, ", "));
}

}  // namespace

std::vector<ProposedRule> dependency_rules(const std::vector<DataColumn>& columns) {
  std::vector<ProposedRule> out;
  if (columns.empty() || columns.size() > kMaxColumns) return out;
  const std::size_t rows = columns.front().values->size();
  std::vector<Coded> coded;
  coded.reserve(columns.size());
  for (const DataColumn& c : columns) coded.push_back(code(*c.values));
  struct Candidate {
    int rank;
    std::size_t values;
    ProposedRule rule;
  };
  std::vector<std::optional<Candidate>> by_target(columns.size());
  const auto usable_source = [&](std::size_t i) {
    const std::size_t n = coded[i].distinct.size();
    return n >= 2 && n <= kMaxSourceValues && kRowsPerSourceValue * n <= rows;
  };
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (!usable_source(i)) continue;
    for (std::size_t j = 0; j < columns.size(); ++j) {
      if (i == j || coded[j].distinct.size() < 2) continue;
      const std::optional<std::vector<int>> to = determines(coded[i], coded[j]);
      if (!to) continue;
      const bool one_to_one = usable_source(j) && determines(coded[j], coded[i]).has_value();
      // Once per one-to-one pair: towards the numeric side, else from the earlier column.
      if (one_to_one && (columns[i].numeric != columns[j].numeric ? columns[i].numeric : i > j)) continue;
      const std::string target = name_of(columns[j].name);
      if (target.empty() || name_of(columns[i].name).empty()) continue;
      std::string text;
      int rank = 0;
      if (columns[i].numeric) text = bucket_rule(target, columns[i], coded[i], coded[j], *to, columns[j].numeric);
      if (text.empty()) {
        text = map_rule(target, columns[i], coded[i], coded[j], *to, columns[j].numeric);
        rank = one_to_one ? 1 : 2;
      }
      if (text.empty()) continue;
      // One rule per target (a feature is derived once): a bucket, else a one-to-one map, else the
      // map from the fewest values.
      const Candidate c{rank, coded[i].distinct.size(), {std::move(text), one_to_one}};
      auto& best = by_target[j];
      if (!best || std::tie(c.rank, c.values) < std::tie(best->rank, best->values)) best = c;
    }
  }
  for (auto& best : by_target) {
    if (best) out.push_back(std::move(best->rule));
  }
  return out;
}

std::vector<ProposedRule> order_rules(const std::vector<DataColumn>& columns) {
  constexpr std::size_t kMaxNumeric = 64;
  constexpr double kMostlyShare = 0.01;  // the share of rows a proposed order may break
  std::vector<std::size_t> numeric;
  for (std::size_t c = 0; c < columns.size(); ++c)
    if (columns[c].numeric) numeric.push_back(c);
  std::vector<ProposedRule> out;
  if (numeric.size() < 2 || numeric.size() > kMaxNumeric) return out;
  const std::size_t rows = columns[numeric[0]].values->size();
  constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::vector<double>> v(numeric.size(), std::vector<double>(rows, kMissing));
  std::vector<double> lo(numeric.size(), std::numeric_limits<double>::infinity()), hi(numeric.size(), -lo[0]);
  for (std::size_t k = 0; k < numeric.size(); ++k) {
    const std::vector<std::string_view>& values = *columns[numeric[k]].values;
    for (std::size_t r = 0; r < rows; ++r) {
      if (values[r].empty()) continue;
      v[k][r] = number(values[r]);
      lo[k] = std::min(lo[k], v[k][r]);
      hi[k] = std::max(hi[k], v[k][r]);
    }
  }
  for (std::size_t a = 0; a < numeric.size(); ++a) {
    for (std::size_t b = 0; b < numeric.size(); ++b) {
      if (a == b || !(lo[a] < hi[a]) || !(lo[b] < hi[b]) || hi[a] <= lo[b]) continue;  // one value, or implied
      std::size_t both = 0, broken = 0, equal = 0;
      for (std::size_t r = 0; r < rows; ++r) {
        if (std::isnan(v[a][r]) || std::isnan(v[b][r])) continue;
        ++both;
        broken += v[a][r] > v[b][r] ? 1 : 0;
        equal += v[a][r] == v[b][r] ? 1 : 0;
      }
      // Equal on every row is a dependency (proposed as such), not an order; and the pair is
      // proposed once when both orders hold (a == b then, mostly).
      if (both == 0 || equal == both || static_cast<double>(broken) > kMostlyShare * static_cast<double>(both))
        continue;
      const std::string x = name_of(columns[numeric[a]].name), y = name_of(columns[numeric[b]].name);
      if (x.empty() || y.empty()) continue;
      out.push_back({.text = fmt::format("{} <= {}", x, y), .one_to_one = false, .broken = broken, .rows = both});
    }
  }
  return out;
}

}  // namespace witness
