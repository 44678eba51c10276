// libFuzzer target for schema constraints (docs/schema.md, "Constraints"): each line of the input is
// one constraint, a derived feature or a validity rule, read by parse_constraint over a fixed schema
// with a feature of every kind (names with '-', labels with spaces and digits, a one-hot feature).
// Each line must parse or throw a witness::Error, never crash. What parses is then used as the
// engines use it: derived features ordered (a cycle stops there, as the schema parser refuses it),
// set on a few rows (each bound, the middle), satisfied and first_violation on those rows, and
// over_box and narrow over the whole domain and over each half of it along every feature.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "domain/constraint_parser.h"
#include "domain/constraints.h"
#include "domain/schema.h"
#include "fuzz_common.h"

namespace {

constexpr std::size_t kMaxLines = 32;

const char* const kSchema = R"(
[[features]]
name = "age"
kind = "integer"
min = 17
max = 90
[[features]]
name = "hours-per-week"
kind = "real"
min = 0.5
max = 99.5
[[features]]
name = "sex"
kind = "categorical"
categories = ["Female", "Male"]
[[features]]
name = "relationship"
kind = "categorical"
categories = ["Husband", "Wife", "Own-child", "Other"]
encoding = "one-hot"
[[features]]
name = "age_cat"
kind = "categorical"
categories = ["Less than 25", "25 - 45", "Greater than 45"]
[[features]]
name = "education"
kind = "categorical"
categories = ["HS-grad", "Some-college", "Bachelors", "10th"]
[[features]]
name = "education-num"
kind = "integer"
min = 1
max = 16
[[features]]
name = "urgent"
kind = "boolean"
[[features]]
name = "code"
kind = "categorical"
categories = ["1", "2", "10"]
)";

const witness::Schema& schema() {
  static const witness::Schema s = witness::parse_schema(kSchema, "fuzz.toml");
  return s;
}

// The middle of a feature's range, a value it can take.
double middle(const witness::Feature& f) {
  const double m = (f.min + f.max) / 2;
  return f.kind == witness::FeatureKind::Real ? m : std::floor(m);
}

void evaluate(const witness::Constraints& c) {
  const witness::Schema& s = schema();
  const auto n = static_cast<Eigen::Index>(s.size());
  Eigen::VectorXd lo(n), hi(n), mid(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const witness::Feature& f = s.feature(static_cast<int>(i));
    lo[i] = f.min;
    hi[i] = f.max;
    mid[i] = middle(f);
  }
  for (Eigen::VectorXd row : {lo, hi, mid}) {
    (void)c.satisfied(row);
    c.derive(row);
    (void)c.satisfied(row);
    (void)c.first_violation(row);
  }
  const std::vector<bool> skip(static_cast<std::size_t>(n), false);
  auto boxes = [&](const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    (void)c.over_box(a, b);
    Eigen::VectorXd na = a, nb = b;
    (void)c.narrow(na, nb, skip);
  };
  boxes(lo, hi);
  for (Eigen::Index i = 0; i < n; ++i) {
    Eigen::VectorXd upper = hi, lower = lo;
    upper[i] = mid[i];
    lower[i] = mid[i];
    boxes(lo, upper);
    boxes(lower, hi);
  }
  (void)c.features();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  witness::Constraints c;
  std::size_t lines = 0;
  for (std::size_t at = 0; at < text.size() && lines < kMaxLines; ++lines) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string line(text.substr(at, end - at));
    at = end + 1;
    witness::fuzz::run_one(
        [&] { witness::parse_constraint(line, schema(), "fuzz.toml", "line " + std::to_string(lines + 1), c); });
  }
  if (!c.order_derived().empty()) return 0;  // a cycle: the schema parser refuses these
  witness::fuzz::run_one([&] { evaluate(c); });
  return 0;
}
