// Counterfactual queries (soid): might / would the model have decided otherwise, answered by Z3
// over an exact encoding of the model (or without a solver: every case of few-valued inputs, or
// boxes of a tree model's inputs, tree_query.h), with a concrete scenario replayed before it is reported.
//
//   witness::Model model = witness::load_model("examples/soid/diabetes/diabetes_agent.onnx");
//   witness::Query q;
//   q.name = "weight";
//   q.kind = witness::QueryKind::Might;                           // or Would
//   q.semantics = witness::Semantics::Float64;                    // Real, Float64, Float32
//   q.inputs = {witness::QueryInput::fixed("height_in", witness::InputRole::State, witness::InputType::Real, "64"),
//               witness::QueryInput::range("weight_lb", witness::InputRole::Environment, witness::InputType::Real,
//                                          "0", "1000")};          // and one entry per other model input
//   q.behavior.text = "label == 1";
//   witness::QueryAnswer a = witness::answer_query(model, q);      // a.answer, a.scenario
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "domain/schema.h"
#include "model/model.h"

namespace witness {

enum class QueryKind : std::uint8_t { Might, Would };
enum class Semantics : std::uint8_t { Real, Float64, Float32 };
enum class InputRole : std::uint8_t { Environment, State };
enum class InputType : std::uint8_t { Bool, Int, Real };

const char* to_string(QueryKind k);
const char* to_string(Semantics s);
const char* to_string(InputRole r);
const char* to_string(InputType t);

// One model input. Numbers are decimal text ("249.97309489152", "1e-3", "-2"), read exactly in
// real semantics and rounded to nearest as a C literal in float semantics; bools are "true" or
// "false" (or 1/0). With `value` the input is a fact; otherwise it ranges over [min, max] (either
// end may be missing) or over `values`.
struct QueryInput {
  std::string name;
  InputRole role = InputRole::State;
  InputType type = InputType::Real;
  std::optional<std::string> value;
  std::optional<std::string> min;
  std::optional<std::string> max;
  std::vector<std::string> values;
  // The logged fact of an input the query leaves free: what `nearest` measures changes from.
  // Query files set it from `logged = ...`, or from the file's own value the query overrides.
  std::optional<std::string> logged;
  // type = "category": a categorical column of a model that carries its preprocessing; values are
  // category labels (free: any of its categories). Answered over the category's code (an int).
  bool category = false;
  std::string where;  // "file: line L" for messages; empty for queries built in code

  static QueryInput fixed(std::string name, InputRole role, InputType type, std::string value);
  static QueryInput range(std::string name, InputRole role, InputType type, std::optional<std::string> min,
                          std::optional<std::string> max);
  static QueryInput one_of(std::string name, InputRole role, InputType type, std::vector<std::string> values);
};

// An expression of the query language (expression.h) and where it came from, for messages.
struct QueryText {
  std::string text;
  std::string where;      // "file: line L" ("" for queries built in code)
  int column_shift = -1;  // add to the expression column for the file column; -1: not known
};

struct Query {
  std::string name;
  std::string description;
  std::string model_path;    // as resolved against the query file (informational once loaded)
  std::string model_where;   // "file: line L, column C" of the model (or program) key, for load errors
  std::string program_path;  // instead of a model: a C/C++ program (program/program.h) ...
  std::string function;      // ... and its decision function
  int loop_bound = 64;       // programs: times one block may run per call; more is cut and reported
  // Ask for the scenario nearest the logged facts: fewest inputs changed from their logged value,
  // then the smallest total change |x - logged| (computed in the query's semantics).
  bool nearest = false;
  QueryKind kind = QueryKind::Might;
  Semantics semantics = Semantics::Real;
  std::vector<QueryInput> inputs;  // every model input, by name, in any order
  std::string inputs_where;        // "file: line L" of the [inputs] table (else the query's), for messages
  QueryText environment;           // over environment inputs; empty: true
  QueryText state;                 // over state inputs; empty: true
  QueryText behavior;              // over the decision (label, outputs) and inputs; required
  QueryText factual;               // the logged scenario, excluded from answers; empty: none
  // A schema (schema = "S.toml" in the file) whose constraints join the premise over every input:
  // only scenarios of people who can exist. Each feature the constraints name is read from the
  // input of its name, or else from the model input at its position (x0, x1, ... of a network that
  // reads the schema's features in order); those inputs must hold its raw values.
  std::string schema_path;               // as resolved against the query file; loaded when answered...
  std::shared_ptr<const Schema> schema;  // ...unless given here (queries built in code)
  std::string schema_where;              // "file: line L, column C (the constraints of S.toml)"
  std::string where;                     // "file: query 'name'" for messages
};

struct QueryOptions {
  // Seconds per query, encoding and solving together; <= 0: none. The solver stops at the
  // deadline; building the encoding is not interrupted.
  double time_limit = 0.0;
  // Float semantics: a value with at most this many possible values (from bool, int-range or
  // `values` inputs) is kept as guarded constants and computed exactly in C++, so Z3 bit-blasts
  // no arithmetic for it. 0 sends every float op to Z3 (the tests cross-check both ways).
  std::size_t float_cases = 256;
  // A model's query whose free inputs all take few values (categories, bools, short int ranges,
  // value lists), with at most this many combinations, is answered by evaluating every case in the
  // query's semantics instead of by the solver (the same answer, exact, in milliseconds). 0: the
  // solver answers every query (the tests cross-check both ways).
  std::size_t enumerate_cases = 4096;
  // A tree model's query whose premise is a union of boxes over the inputs and whose behavior reads
  // only the label is answered by branch and bound over boxes cut at the trees' thresholds
  // (query/tree_query.h), searching at most this many boxes before the solver takes over. 0: the
  // solver answers every query (the tests cross-check both ways).
  std::size_t tree_boxes = 1000000;
  // Megabytes Z3 may allocate (a float query over a network can take gigabytes); beyond, the
  // answer is unknown ("out of memory"). Z3 has one bound per process; <= 0: none.
  double memory_limit_mb = 4096;
  // Raised by another thread to stop (Ctrl-C in Python, a job's cancel in witness serve): the
  // solver is interrupted, and the answer is unknown ("canceled").
  const std::atomic<bool>* cancel = nullptr;
};

struct ScenarioValue {
  std::string name;
  std::string text;       // as printed: shortest round-trip decimal, "true"/"false" for bools
  double number = 0;      // nearest double
  std::string exact;      // real semantics: "p/q" when the value is not an exact decimal of `text`
  bool free = false;      // the query left this input free (no fixed value)
  bool category = false;  // `text` is a category label (the model's own code is `number`)
};

struct QueryAnswer {
  std::string name;
  QueryKind kind = QueryKind::Might;
  Semantics semantics = Semantics::Real;
  enum class Status : std::uint8_t { Answered, Unknown } status = Status::Answered;
  bool answer = false;  // might: some scenario shows the behavior; would: every scenario does
  std::string reason_unknown;
  // For might-true and would-false: every input, the decision, and the outputs when computed.
  std::vector<ScenarioValue> scenario;
  std::optional<int> label;  // the scenario's decision
  std::string label_name;
  std::vector<ScenarioValue> outputs;
  // The library evaluator's label for the scenario in float64 (and float32 in float32 semantics):
  // in real semantics it can differ from `label` when the scenario sits on a decision boundary.
  std::optional<int> evaluator_label;
  // Without a scenario (might-false, would-true): whether the premise (environment, state, not
  // factual) itself has no solution, so the answer holds vacuously; nullopt if that check gave up.
  std::optional<bool> vacuous;
  bool schema_constraints = false;  // the premise held a schema's constraints (query.schema)
  std::string note;                 // anything the reader must know about the scenario
  // With nearest: inputs changed from their logged value, and whether fewer (then a smaller
  // total change) was proven impossible, or the search stopped (time limit, step cap).
  std::optional<int> changed_inputs;
  bool nearest_proven = false;
  // Programs: why some inputs of the premise ran off the explored paths (loop bound, undefined
  // behaviour). Non-empty means an answer without a scenario is not a proof.
  std::vector<std::string> cut;
  double seconds = 0.0;
  std::map<std::string, double> solver_stats;  // Z3 statistics, plus "assertions"
};

class Program;

// Answers one query over a loaded model. InputError (naming q.where, the line and the column)
// for queries that do not fit the model; UnsupportedError for ops without an exact encoding.
// Throws InternalError if a scenario fails its replay (a bug, never printed as an answer).
QueryAnswer answer_query(const Model& model, const Query& q, const QueryOptions& options = {});
// The same over a program: its parameters (and the globals the query declares) are the inputs, its
// return value is `label`. Scenarios are replayed by running the compiled program natively.
QueryAnswer answer_query(const Program& program, const Query& q, const QueryOptions& options = {});

// Reads a TOML query file: one query at top level, or several in [[query]] tables.
// Model paths are resolved against the file's folder. InputError on anything malformed, and for a
// query that names no model or program unless `agent_given` (the caller's --model or --program
// answers every query: job_queries sets it).
std::vector<Query> load_query_file(const std::string& path, bool agent_given = false);
// The same for text that was never saved (witness serve): `path` names it in messages, and model
// and program paths are resolved against its folder.
std::vector<Query> load_query_text(const std::string& text, const std::string& path, bool agent_given = false);

}  // namespace witness
