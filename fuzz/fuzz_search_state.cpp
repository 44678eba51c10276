// libFuzzer target for saved searches (checkpoints, sub-problems, their results, MPI messages):
// any bytes must give a state or a witness::Error, never a crash. The question is fixed (Fairify's
// GC1 network on german.toml, protected age, --quantify), as every state of the corpus answers it.
// The first byte chooses the reader: 0 the JSON form (parse_search_state: fields, accounts,
// disjoint regions), 1 the binary form of MPI messages (parse_search_state_bytes), 2 several JSON
// states separated by a line "--part--", joined as `witness merge` joins them. What reads is
// checked too: written back and read again it gives the same text (else a bug: abort).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "domain/schema.h"
#include "fairness/complete/search/search_state.h"
#include "fairness/complete/search/search_state_bytes.h"
#include "fuzz_common.h"
#include "model/loaders.h"

namespace {

struct Question {
  witness::Model model = witness::load_model(WITNESS_SOURCE_DIR "/benchmarks/fairify/models/german/GC1.h5");
  witness::Schema schema = witness::load_schema(WITNESS_SOURCE_DIR "/benchmarks/fairify/german.toml");
  witness::FairnessProblem problem{model, schema, {"age"}};
  witness::SearchQuestion question{problem, true};
};

const witness::SearchQuestion& question() {
  static const Question* q = new Question;  // leaked: read until exit
  return q->question;
}

void round_trip(const witness::SearchState& s) {
  const witness::SearchQuestion& q = question();
  const std::string text = witness::search_state_text(s, q);
  try {
    if (witness::search_state_text(witness::parse_search_state(text, "again.json", q), q) != text)
      witness::fuzz::bug("round trip", "a state read back does not write the same text");
  } catch (const witness::InputError& e) {
    witness::fuzz::bug("round trip: a state written is refused when read back", e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const witness::SearchQuestion& q = question();
  const std::string body = witness::fuzz::text_of(data + 1, size - 1);
  witness::fuzz::run_one([&] {
    switch (data[0] % 3) {
      case 0: round_trip(witness::parse_search_state(body, "fuzz.json", q)); break;
      case 1: round_trip(witness::parse_search_state_bytes(body, "fuzz message", q)); break;
      default: {
        std::vector<witness::SearchState> parts;
        std::vector<std::string> names;
        const std::string separator = "\n--part--\n";
        for (std::size_t at = 0; at <= body.size() && parts.size() < 16;) {
          const std::size_t end = std::min(body.find(separator, at), body.size());
          names.push_back("part" + std::to_string(parts.size()) + ".json");
          parts.push_back(witness::parse_search_state(body.substr(at, end - at), names.back(), q));
          at = end + separator.size();
        }
        round_trip(witness::join_search_states(std::move(parts), names, q));
      }
    }
  });
  return 0;
}
