// The complete engine for tree ensembles (forests, boosting, single trees): branch and bound over
// boxes of the non-protected raw features, cut at the trees' own thresholds, each protected value
// its own copy of the model. A box is closed when every copy's label is the same everywhere in it
// (certified), or two copies' labels differ everywhere in it (falsified: every point is a witness);
// integer points are counted exactly. The driver (complete_search.h) runs these regions on a
// scheduler for tree models.
//
//   witness::Model model = witness::load_model("tests/fixtures/onnx/tree_binary.onnx");
//   witness::Schema schema = witness::load_schema_for(model, "people.toml", "");
//   const witness::FairnessProblem problem(model, schema, {"sex"});
//   witness::CompleteSearchOptions o;
//   witness::SearchSignals signals(o.max_witnesses);
//   std::unique_ptr<witness::RegionEvaluator> regions = witness::tree_regions(problem, o, signals);
//   witness::RegionOutcome first = regions->begin(regions->whole(), nullptr);  // closed boxes, open ones
#pragma once

#include <memory>
#include <string>

#include "core/env.h"
#include "domain/schema.h"
#include "fairness/complete/options.h"
#include "fairness/complete/region.h"
#include "fairness/verdict.h"
#include "model/model.h"

namespace witness {

// Whether the model decides through one tree-ensemble node (the tree engine's models).
[[nodiscard]] bool is_tree_model(const Model& model);
// Whether the tree engine can read this tree model on this schema (else *why says what stops it).
[[nodiscard]] bool tree_engine_reads(const Model& model, const Schema& schema, std::string* why);

// The tree engine's regions, for a scheduler (complete_search runs them on RegionScheduler); the
// problem, options and signals must outlive them. UnsupportedError when the trees read their
// inputs through something the engine cannot follow (see RawTrees::compile).
[[nodiscard]] std::unique_ptr<RegionEvaluator> tree_regions(const FairnessProblem& problem,
                                                            const CompleteSearchOptions& options,
                                                            const SearchSignals& signals);

}  // namespace witness
