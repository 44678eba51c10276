// The complete engine for tree ensembles (forests, boosting, single trees): branch and bound over
// boxes of the non-protected raw features, cut at the trees' own thresholds, each protected value
// its own copy of the model. A box is closed when every copy's label is the same everywhere in it
// (certified), or two copies' labels differ everywhere in it (falsified: every point is a witness);
// integer points are counted exactly. complete_search and auto_search call it for tree models.
//
//   witness::Model model = witness::load_model("tests/fixtures/onnx/tree_binary.onnx");
//   witness::Schema schema = witness::load_schema_for(model, "people.toml", "");
//   witness::CompleteSearchOptions o;
//   o.protected_features = {schema.feature_index("sex")};
//   o.quantify = true;
//   witness::Env env;
//   env.start();
//   witness::FairnessResult r = witness::tree_search(model, schema, o, env);  // r.share: exact counts
#pragma once

#include <memory>
#include <string>

#include "core/env.h"
#include "domain/schema.h"
#include "fairness/complete_search.h"
#include "fairness/search_region.h"
#include "fairness/verdict.h"
#include "model/model.h"

namespace witness {

// Whether the model decides through one tree-ensemble node (the tree engine's models).
[[nodiscard]] bool is_tree_model(const Model& model);
// Whether the tree engine can read this tree model on this schema (else *why says what stops it).
[[nodiscard]] bool tree_engine_reads(const Model& model, const Schema& schema, std::string* why);

// The tree engine's regions, for a scheduler of one's own (tree_search runs them on
// RegionScheduler); the model, schema, options and signals must outlive them. UnsupportedError as
// tree_search.
[[nodiscard]] std::unique_ptr<RegionEvaluator> tree_regions(const Model& model, const Schema& schema,
                                                            const CompleteSearchOptions& options,
                                                            const SearchSignals& signals);

// UnsupportedError when the trees read their inputs through something the engine cannot follow
// (see RawTrees::compile).
FairnessResult tree_search(const Model& model, const Schema& schema, const CompleteSearchOptions& options, Env& env);

}  // namespace witness
