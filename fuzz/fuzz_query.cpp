// libFuzzer target for the query language: any text must give load_query_text queries or a
// witness::Error, and parse_expression an Expr or an ExprError (its own error, which query files
// wrap in an InputError), never a crash. The first byte picks the parser: 0 sends the rest of the
// input to parse_expression over a fixed scope, anything else sends the whole input to
// load_query_text. Queries that load have their expressions parsed over their own inputs, as
// answering them would (answering needs a model and a solver, and is not fuzzed here).
//
// Query files name a model or program by a path that must exist, resolved against the file's
// folder: the text is named as a file in a private temp folder holding empty files m.onnx and p.c,
// the names the seed corpus uses.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "fuzz_common.h"
#include "query/expression.h"
#include "query/query.h"

namespace {

void parse(std::string_view text, const witness::ExprScope& scope) {
  witness::fuzz::run_one([&] {
    try {
      (void)witness::parse_expression(text, scope);
    } catch (const witness::ExprError&) {
      // Rejected: the expected outcome for most inputs.
    }
  });
}

void fuzz_expression(std::string_view text) {
  witness::ExprScope scope;
  scope.inputs = {{"age", witness::ExprType::Number},
                  {"urgent", witness::ExprType::Bool},
                  {"hours-per-week", witness::ExprType::Number},
                  {"x", witness::ExprType::Number}};
  scope.outputs = {"p_low", "p_high"};
  parse(text, scope);
  // As for an environment constraint: no decision, and only some inputs.
  scope.allow_decision = false;
  scope.allowed_inputs = {true, false, true, false};
  scope.allowed_reason = "is not an environment input";
  parse(text, scope);
}

void fuzz_query_file(const std::string& text) {
  static const std::string path = [] {
    for (const char* name : {"m.onnx", "p.c"}) std::ofstream(witness::fuzz::temp_dir() + "/" + name);
    return witness::fuzz::temp_dir() + "/fuzz.toml";
  }();
  std::vector<witness::Query> queries;
  witness::fuzz::run_one([&] { queries = witness::load_query_text(text, path); });
  for (const witness::Query& q : queries) {
    witness::ExprScope scope;
    for (const witness::QueryInput& in : q.inputs) {
      scope.inputs.push_back(
          {in.name, in.type == witness::InputType::Bool ? witness::ExprType::Bool : witness::ExprType::Number});
    }
    scope.outputs = {"p0", "p1"};
    scope.allow_decision = false;
    for (const witness::QueryText* t : {&q.environment, &q.state, &q.factual}) {
      if (!t->text.empty()) parse(t->text, scope);
    }
    scope.allow_decision = true;
    parse(q.behavior.text, scope);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 0 && data[0] == 0) {
    fuzz_expression(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  } else {
    fuzz_query_file(witness::fuzz::text_of(data, size));
  }
  return 0;
}
