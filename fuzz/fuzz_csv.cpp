// libFuzzer target: any text, read as a CSV file, must give a Dataset or a witness::Error, never a
// crash, (1) through a fixed schema with every feature kind, a label, an ignored column and imputed
// values (parse_csv), and (2) when a schema is inferred from it (infer_schema_toml_text). What
// docs/schema.md promises of (2) is checked too: the inferred schema reads back with parse_schema,
// and the CSV it came from loads with it; a failure there aborts as a bug.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/error.h"
#include "domain/dataset.h"
#include "domain/infer.h"
#include "domain/schema.h"
#include "fuzz_common.h"

namespace {

constexpr const char* kSchema = R"(name = "fuzz"
label = "y"
label_classes = ["no", "yes"]
ignore = ["id"]

[[features]]
name = "age"
kind = "integer"
min = 0
max = 120
mean = 40
std = 12
missing = "35"

[[features]]
name = "income"
kind = "real"
min = -1e6
max = 1e6
scale = 1e-3
offset = 0.5

[[features]]
name = "sex"
kind = "categorical"
categories = ["F", "M", "1"]
missing = "F"

[[features]]
name = "purpose"
kind = "categorical"
categories = ["car", "new car", "a \"b\""]
encoding = "one-hot"

[[features]]
name = "phone"
kind = "boolean"

[boxes.narrow]
age = [18, 65]
sex = [0, 4]
)";

const witness::Schema& fixed_schema() {
  static const witness::Schema schema = witness::parse_schema(kSchema, "fuzz_csv.toml");
  return schema;
}

const witness::Schema& narrow_schema() {
  static const witness::Schema schema = fixed_schema().with_box("narrow");
  return schema;
}

void load_fixed(const std::string& text) {
  for (const witness::Schema* s : {&fixed_schema(), &narrow_schema()}) {
    witness::fuzz::run_one([&] {
      const witness::Dataset d = witness::parse_csv(text, *s, "fuzz.csv");
      const Eigen::MatrixXd x = d.model_inputs(*s);
      if (d.rows() > 0) (void)s->display_row(d.raw.col(0));
    });
  }
}

void infer_and_read_back(const std::string& text) {
  std::string toml;
  witness::fuzz::run_one([&] { toml = witness::infer_schema_toml_text(text, "fuzz.csv", std::nullopt); });
  if (toml.empty()) return;
  try {
    const witness::Schema s = witness::parse_schema(toml, "inferred.toml");
    const witness::Dataset d = witness::parse_csv(text, s, "fuzz.csv");
    (void)d.model_inputs(s);
  } catch (const witness::Error& e) {
    std::fprintf(stderr, "fuzz: inferred schema:\n%s\n", toml.c_str());
    witness::fuzz::bug("the inferred schema or its CSV does not read back", e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = witness::fuzz::text_of(data, size);
  load_fixed(text);
  infer_and_read_back(text);
  return 0;
}
