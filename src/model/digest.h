// The content hash of a model as witness reads it: every node, weight, tree, decision rule and
// carried preprocessing step, whatever file format it came from (the file's name is left out).
// Saved searches name the model by it, so that a state is never continued on another model.
//
//   witness::Model m = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   std::string h = witness::model_digest(m);   // 64 hex digits of SHA-256
//   m.nodes.back().name = "renamed";            // names and the file path are not content:
//   bool same = witness::model_digest(m) == h;  // true
#pragma once

#include <string>

#include "model/model.h"

namespace witness {

[[nodiscard]] std::string model_digest(const Model& model);

}  // namespace witness
