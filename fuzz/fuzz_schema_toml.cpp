// libFuzzer target: any text must give parse_schema a Schema or a witness::Error, never a crash.
// A schema that loads is also used: every box selected, the lowest and highest corners mapped to
// model inputs and back and shown, the protected features and the domain size computed.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "domain/schema.h"
#include "fuzz_common.h"

namespace {

void exercise(const witness::Schema& s) {
  (void)s.model_input_names();
  (void)s.domain_size();
  (void)s.protected_indices();
  Eigen::VectorXd lo(s.size());
  Eigen::VectorXd hi(s.size());
  for (int i = 0; i < s.size(); ++i) {
    lo[i] = s.feature(i).min;
    hi[i] = s.feature(i).max;
  }
  for (const Eigen::VectorXd* raw : {&lo, &hi}) {
    witness::fuzz::run_one([&] {
      const Eigen::VectorXd x = s.to_model(*raw);
      (void)s.display_row(s.from_model(x));
    });
  }
  if (s.size() > 0) {
    // A value read back as the schema shows it.
    witness::fuzz::run_one([&] { (void)s.parse_value(0, s.display(0, s.feature(0).max)); });
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  witness::fuzz::run_one([&] {
    const witness::Schema s = witness::parse_schema(witness::fuzz::text_of(data, size), "fuzz.toml");
    exercise(s);
    for (const std::string& box : s.box_names()) exercise(s.with_box(box));
  });
  return 0;
}
