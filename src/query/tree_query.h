// Tree ensembles in counterfactual queries without a solver: when the premise is a union of boxes
// over the model's inputs (declared ranges and value lists; comparisons of one input with a constant
// joined by && || !; the factual scenario taken out) and the behavior reads only the label, branch
// and bound over boxes cut at the trees' thresholds answers the query exactly, in its semantics.
// answer_query (query.h) tries it on tree models and asks Z3 where it refuses.
//
//   witness::Model model = witness::load_model("tests/fixtures/trees/xgb_binary.json");
//   const witness::Expr behavior = witness::parse_expression("label == 1", witness::ExprScope{});
//   witness::TreeBoxInput x;  // a real input, at least 0
//   x.min = "0";
//   witness::TreeBoxQuery q;   // might: a scenario with label 1
//   q.behavior = &behavior;
//   q.inputs.assign(static_cast<std::size_t>(model.input_width()), x);
//   auto r = witness::tree_box_query<witness::ExactDomain>(model, q);
//   // r.status: Found (r.point, to replay), None (r.premise_empty: vacuous), Refused (r.why), Stopped
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/interpreter.h"
#include "model/model.h"
#include "query/expression.h"
#include "query/query.h"
#include "solver/exact_domain.h"

namespace witness {

// One model input as the query declares it (decimal text, bools as "1"/"0"; query.cpp's checks done).
struct TreeBoxInput {
  InputType type = InputType::Real;
  std::optional<std::string> value;
  std::optional<std::string> min, max;
  std::vector<std::string> values;
  std::optional<std::string> logged;  // a free input's preferred value in the reported point
};

struct TreeBoxQuery {
  bool might = true;                     // might: find a point where the behavior holds; would: where it fails
  std::vector<TreeBoxInput> inputs;      // every model input, in model order
  std::vector<const Expr*> premise;      // conditions over the inputs (environment, state, a schema's)
  const Expr* factual = nullptr;         // excluded from the premise; may be null
  const Expr* behavior = nullptr;        // reads the label (and constants) only
  std::size_t max_premise_boxes = 4096;  // beyond, the premise is refused as not box-shaped
  std::size_t max_boxes = 1000000;       // boxes searched before giving up (Stopped)
  std::function<bool()> stop;            // polled now and then: time limit, cancel
};

template <typename C>
struct TreeBoxResult {
  enum class Status : std::uint8_t { Refused, Found, None, Stopped } status = Status::Refused;
  std::string why;                     // Refused: what is not box-shaped; Stopped: "boxes" or "stopped"
  std::vector<typename C::Num> point;  // Found: one value per input, meeting the premise
  bool premise_empty = false;          // None: no point meets the premise at all
  std::size_t premise_boxes = 0;
  std::size_t boxes = 0;  // boxes searched
};

// Exact in C's arithmetic (ExactDomain, FloatDomain<double>, FloatDomain<float>): thresholds and
// constants are compared as the interpreter compares them; a box is given up only when bounds on
// the ensemble's outputs, with a margin above any rounding of C, exclude every wanted label.
template <typename C>
TreeBoxResult<C> tree_box_query(const Model& model, const TreeBoxQuery& q);

extern template TreeBoxResult<ExactDomain> tree_box_query<ExactDomain>(const Model&, const TreeBoxQuery&);
extern template TreeBoxResult<FloatDomain<double>> tree_box_query<FloatDomain<double>>(const Model&,
                                                                                       const TreeBoxQuery&);
extern template TreeBoxResult<FloatDomain<float>> tree_box_query<FloatDomain<float>>(const Model&, const TreeBoxQuery&);

}  // namespace witness
