#include "fairness/complete/search/state_reader.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "core/error.h"

namespace witness {

using json = nlohmann::json;

namespace {

constexpr std::size_t kMaxKnownRows = 4096;  // replayed witness rows in one region
constexpr std::int64_t kMaxRegionDepth = 1 << 20;

}  // namespace

StateReader::StateReader(std::string source, const SearchQuestion& q)
    : source_(std::move(source)),
      q_(q),
      is_protected_(q.problem.protected_mask()),
      combos_(static_cast<int>(q.problem.combinations().size())) {}

void StateReader::fail(const std::string& where, const std::string& what) const {
  throw InputError(source_, "", fmt::format("{}: {}", where, what));
}

const json& StateReader::field(const json& j, const char* name, const std::string& where) const {
  if (!j.is_object()) fail(where, "expected an object");
  const auto it = j.find(name);
  if (it == j.end()) fail(where, fmt::format("missing field '{}'", name));
  return *it;
}

long double StateReader::amount(const json& j, const char* name, const std::string& where) const {
  const json& v = field(j, name, where);
  if (!v.is_string()) fail(where + "." + name, "expected a hexadecimal number in a string");
  const std::string& s = v.get_ref<const std::string&>();
  char* end = nullptr;
  const long double x = std::strtold(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(x) || x < 0.0L)
    fail(where + "." + name, fmt::format("'{}' is not a finite number >= 0", s.substr(0, 40)));
  return x;
}

std::int64_t StateReader::count(const json& j, const char* name, const std::string& where) const {
  const json& v = field(j, name, where);
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0) fail(where + "." + name, "expected an integer >= 0");
  return v.get<std::int64_t>();
}

double StateReader::number(const json& j, const char* name, const std::string& where) const {
  const json& v = field(j, name, where);
  if (!v.is_number() || !std::isfinite(v.get<double>())) fail(where + "." + name, "expected a finite number");
  return v.get<double>();
}

bool StateReader::flag(const json& j, const char* name, const std::string& where) const {
  const json& v = field(j, name, where);
  if (!v.is_boolean()) fail(where + "." + name, "expected true or false");
  return v.get<bool>();
}

Eigen::VectorXd StateReader::row(const json& v, const std::string& where) const {
  const Schema& s = q_.schema;
  if (!v.is_array() || static_cast<int>(v.size()) != s.size())
    fail(where, fmt::format("expected an array of {} numbers (one per feature)", s.size()));
  Eigen::VectorXd out(s.size());
  for (int f = 0; f < s.size(); ++f) {
    const json& x = v[static_cast<std::size_t>(f)];
    if (!x.is_number()) fail(where, fmt::format("{}: not a finite number", s.feature(f).name));
    out(f) = x.get<double>();
  }
  return checked_row(std::move(out), where);
}

Eigen::VectorXd StateReader::checked_row(Eigen::VectorXd row, const std::string& where) const {
  const Schema& s = q_.schema;
  if (row.size() != s.size()) fail(where, fmt::format("expected {} numbers (one per feature)", s.size()));
  for (int f = 0; f < s.size(); ++f) {
    const Feature& feat = s.feature(f);
    if (!std::isfinite(row(f))) fail(where, fmt::format("{}: not a finite number", feat.name));
    if (row(f) < feat.min || row(f) > feat.max || (feat.integral() && row(f) != std::floor(row(f))))
      fail(where, fmt::format("{} = {} is outside its domain", feat.name, row(f)));
  }
  return row;
}

SearchRegion StateReader::region(const json& j, const std::string& where) const {
  SearchRegion r;
  r.lo = row(field(j, "lo", where), where + ".lo");
  r.hi = row(field(j, "hi", where), where + ".hi");
  const json& pairs = field(j, "pairs", where);
  if (!pairs.is_array() || pairs.size() > static_cast<std::size_t>(combos_) * static_cast<std::size_t>(combos_))
    fail(where + ".pairs", "expected an array of protected-value pairs");
  for (const json& p : pairs) {
    if (!p.is_number_integer() || p.get<std::int64_t>() < 0 ||
        p.get<std::int64_t>() >= static_cast<std::int64_t>(combos_) * combos_)
      fail(where + ".pairs", "not a pair of two different protected values");
    r.open.push_back(p.get<int>());
  }
  const json& known = field(j, "known", where);
  if (!known.is_array() || known.size() > kMaxKnownRows) fail(where + ".known", "expected an array of rows");
  for (const json& k : known) r.known.push_back(row(k, where + ".known"));
  r.depth = static_cast<int>(std::min<std::int64_t>(count(j, "depth", where), kMaxRegionDepth));
  const json& split = field(j, "split", where);
  if (!split.is_number_integer() || split.get<std::int64_t>() < -1 || split.get<std::int64_t>() >= q_.schema.size())
    fail(where + ".split", "expected a feature index or -1");
  r.split = split.get<int>();
  r.fair = amount(j, "fair", where);
  r.unfair = amount(j, "unfair", where);
  r.key = number(j, "key", where);
  r.recount = flag(j, "recount", where);
  return checked_region(std::move(r), where);
}

SearchRegion StateReader::checked_region(SearchRegion r, const std::string& where) const {
  r.lo = checked_row(std::move(r.lo), where + ".lo");
  r.hi = checked_row(std::move(r.hi), where + ".hi");
  for (int f = 0; f < q_.schema.size(); ++f)
    if (r.lo(f) > r.hi(f)) fail(where, fmt::format("{}: lo > hi", q_.schema.feature(f).name));
  if (r.open.size() > static_cast<std::size_t>(combos_) * static_cast<std::size_t>(combos_))
    fail(where + ".pairs", "more protected-value pairs than there are");
  for (const int p : r.open)
    if (p < 0 || p >= combos_ * combos_ || p / combos_ == p % combos_)
      fail(where + ".pairs", "not a pair of two different protected values");
  if (r.known.size() > kMaxKnownRows) fail(where + ".known", "too many rows");
  for (Eigen::VectorXd& k : r.known) k = checked_row(std::move(k), where + ".known");
  if (r.depth < 0) fail(where + ".depth", "expected an integer >= 0");
  r.depth = static_cast<int>(std::min<std::int64_t>(r.depth, kMaxRegionDepth));
  if (r.split < -1 || r.split >= q_.schema.size()) fail(where + ".split", "expected a feature index or -1");
  if (!std::isfinite(r.fair) || !std::isfinite(r.unfair) || r.fair < 0.0L || r.unfair < 0.0L)
    fail(where, "fair and unfair must be finite numbers >= 0");
  if (!std::isfinite(r.key)) fail(where + ".key", "expected a finite number");
  // The measure follows from the box; what counting found inside may not exceed it.
  r.measure = box_measure(q_.schema, is_protected_, r.lo, r.hi);
  if (r.fair + r.unfair > r.measure * (1.0L + 1e-12L)) fail(where, "fair + unfair exceed the box's measure");
  return r;
}

RegionReport StateReader::report(const json& j, const std::string& where) const {
  RegionReport r;
  r.lo = row(field(j, "lo", where), where + ".lo");
  r.hi = row(field(j, "hi", where), where + ".hi");
  r.share = number(j, "share", where);
  r.falsified = number(j, "falsified", where);
  r.undecided = number(j, "undecided", where);
  r.points = amount(j, "points", where);
  r.all_falsified = flag(j, "all", where);
  if (r.share < 0.0 || r.share > 1.0 || r.falsified < 0.0 || r.falsified > r.share || r.undecided < 0.0)
    fail(where, "shares outside [0, 1]");
  return r;
}

}  // namespace witness
