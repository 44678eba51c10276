// One query answered: QueryRun tries its strategies in turn, each in a file of its own: every
// case of few-valued inputs (query_enumerate.cpp), boxes of a tree model (query_tree_boxes.cpp),
// a float scenario from the real one (query_nearest.cpp), then Z3 over the model's or the
// program's encoding (query_solve.cpp, query_program.cpp), with the nearest scenario
// (query_nearest.cpp); every scenario is replayed (query_replay.cpp). Internal to the query layer.
//
//   witness::Model model = witness::load_model("examples/soid/diabetes/diabetes_agent.onnx");
//   witness::Query q;  // inputs, behavior, ... (query.h)
//   const auto s = witness::query_internal::subject_of(model);
//   const auto p = witness::query_internal::prepare(s, q);
//   witness::QueryAnswer a = witness::query_internal::QueryRun(s, q, witness::QueryOptions{}, p).run();
#pragma once

#include <z3++.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/interpreter.h"
#include "program/program.h"
#include "query/prepared.h"
#include "query/query.h"
#include "solver/z3_check.h"
#include "solver/z3_domain.h"

namespace witness::query_internal {

// An answer's notes, joined by "; ": what qualifies the answer goes before the notes it has, how it
// was found after them.
inline void note_before(QueryAnswer& a, const std::string& note) {
  a.note = a.note.empty() ? note : note + "; " + a.note;
}
inline void note_after(QueryAnswer& a, const std::string& note) {
  a.note = a.note.empty() ? note : a.note + "; " + note;
}

class QueryRun {
 public:
  QueryRun(const Subject& subject, const Query& q, const QueryOptions& options, const Prepared& p)
      : subject_(subject), q_(q), options_(options), p_(p) {}

  QueryAnswer run();

 private:
  // When every free input of a model takes few values (categories, bools, short int ranges, value
  // lists) and their combinations are few, the answer comes from evaluating each case in the query's
  // semantics, as a handful of predictions answers "had she been of another race": exact, and
  // without a solver over the whole network. False when the query is not of that kind.
  template <typename C>
  bool enumerate(QueryAnswer& a);

  // A tree model's query over a union of boxes, about the label: branch and bound over boxes cut
  // at the trees' thresholds (query/tree_query.h), exact in the query's semantics and much faster
  // than the solver over a large forest. False when it does not apply or runs out of boxes.
  template <typename C>
  bool tree_boxes(QueryAnswer& a);

  [[nodiscard]] bool stopped() const {
    return (options_.cancel != nullptr && options_.cancel->load()) ||
           (options_.time_limit > 0 &&
            std::chrono::duration<double>(Clock::now() - start_).count() > options_.time_limit);
  }

  template <typename S>
  S make_domain(z3::context& ctx) const;

  // The finite values an input may take in float semantics, when few: bools, `values`, and int
  // ranges of at most max_cases integers. Empty otherwise.
  static std::vector<double> finite_values(const PreparedInput& pi, bool single, std::size_t max_cases);

  template <typename S>
  typename S::Num symbol(S& d, const PreparedInput& pi, z3::context& ctx) const;

  template <typename S, typename C>
  void solve(QueryAnswer& a);

  template <typename S>
  ModelValues<S> encode_model(S& d, z3::context& ctx, std::vector<typename S::Num>& x);

  // A program input's term of its own type, seen as a number of the query's domain S.
  template <typename S>
  typename S::Num query_view(S& d, const ProgramInput& in, const z3::expr& t) const;

  // A fixed input value as a term of the program input's type.
  z3::expr program_literal(z3::context& ctx, const ProgramInput& in, const std::string& text, bool real) const;

  template <typename S>
  ModelValues<S> encode_program(S& d, z3::context& ctx, std::vector<typename S::Num>& x);

  // Without a scenario, an answer covers only the finished paths: say which cut paths the premise
  // reaches (s holds the side conditions and the premise).
  void report_cuts(z3::solver& s, QueryAnswer& a) const;

  // The program ran symbolically to `label` on the scenario: check the query on it, then run the
  // compiled program natively on the same inputs and compare.
  template <typename C>
  void replay_program(QueryAnswer& a, const std::vector<typename C::Num>& xc, const typename C::Num& label,
                      const z3::model& m);

  // The scenario meets the declarations, the premise and the behavior in concrete semantics C.
  // Float semantics, first try: the same query over the reals (linear, fast), then the float
  // points at and around its scenario, each checked exactly in the float semantics. A point that
  // passes is a scenario of the float query; bit-blasting the network's float arithmetic (minutes
  // and gigabytes for a free input into a network) is then not needed. False: no luck, solve.
  template <typename C>
  bool scenario_from_real(QueryAnswer& a);

  // The scenario nearest the logged facts, from a first one (m): fewer changed inputs while the
  // solver finds them, then a smaller total change |x - logged|, each step a check for a strictly
  // better scenario. The solver holds the query (premise and behavior).
  template <typename S>
  z3::model nearest(S& d, z3::solver& s, const std::vector<typename S::Num>& x, z3::model m, QueryAnswer& a);

  [[nodiscard]] double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  // The inputs meet their declarations (range, values, integrality).
  template <typename C>
  bool inputs_declared(C& c, const std::vector<typename C::Num>& xc) const;

  // A model's scenario in concrete semantics C: finite inputs (as the solver's are) meeting the
  // declarations, the premise and the behavior.
  template <typename C>
  bool scenario_holds(C& c, const std::vector<typename C::Num>& xc, const ModelValues<C>& mv) const;

  template <typename C>
  void check_scenario(C& c, const std::vector<typename C::Num>& xc, const ModelValues<C>& mv) const;

  // Checks the scenario on the concrete semantics (the same rounding as the encoding), then asks
  // the library evaluator (separate code) for its label.
  template <typename C>
  void replay(QueryAnswer& a, const std::vector<typename C::Num>& xc);

  static void record_stats(const z3::solver& s, QueryAnswer& a);

  // Runs one check within what is left of the time limit; Unknown once it has passed.
  z3::check_result check(z3::solver& s, std::string& reason) const;

  const Subject& subject_;
  const Query& q_;
  const QueryOptions& options_;
  const Prepared& p_;
  Clock::time_point start_;

  // Programs: the input terms of the program's own types, the returned value, and the inputs on
  // which no finished path decides (with why).
  std::vector<z3::expr> program_terms_;
  std::optional<z3::expr> program_result_;
  std::optional<z3::expr> program_defined_;
  std::vector<std::pair<z3::expr, std::string>> program_cuts_;
  bool program_timed_out_ = false;
  RetiringContext* retiring_ = nullptr;  // the context of the query being solved (solve())
};

}  // namespace witness::query_internal
