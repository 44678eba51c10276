// Model transforms on first-layer weights: PyFair's "artificially fair" models (RQ4) zero the
// weights the network gives the protected inputs, so no label can depend on them.
//
//   witness::Model m = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   witness::Schema s = witness::load_schema("benchmarks/fairify/german.toml");
//   const witness::Feature& age = s.feature(s.feature_index("age"));
//   witness::Model fair = witness::zero_input_weights(m, {age.model_offset});
//   witness::Model near_fair = witness::scale_input_weights(m, {age.model_offset}, 1e-3);
#pragma once

#include <vector>

#include "model/model.h"

namespace witness {

// A copy of m in which every Dense node that reads the input node directly has zero weights for
// the named model inputs (indices into m's input vector); all other weights are untouched. Throws
// InputError for an index outside the input, and UnsupportedError when another kind of node reads
// those inputs directly (a Select or tree ensemble that never reads them is fine).
[[nodiscard]] Model zero_input_weights(const Model& m, const std::vector<int>& model_inputs);

// The same with the weights multiplied by `factor` (finite) instead of zeroed.
[[nodiscard]] Model scale_input_weights(const Model& m, const std::vector<int>& model_inputs, double factor);

}  // namespace witness
