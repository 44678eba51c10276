#include "fairness/complete/complete_search.h"

#include <fmt/format.h>

#include <optional>

#include "bounds/relu_network.h"
#include "core/error.h"
#include "fairness/complete/network/network_regions.h"
#include "fairness/complete/search/region_scheduler.h"
#include "fairness/complete/search/search_state.h"
#include "fairness/complete/trees/tree_search.h"

namespace witness {

namespace {

// The complete engine's regions for this model: a network's or a tree ensemble's.
std::unique_ptr<RegionEvaluator> complete_regions(const FairnessProblem& problem, const CompleteSearchOptions& options,
                                                  const SearchSignals& signals, const Env& env) {
  const Model& model = problem.model();
  const Schema& schema = problem.schema();
  if (is_tree_model(model)) return tree_regions(problem, options, signals);
  std::string why;
  std::optional<ReluNetwork> net = relu_network_of(model, &why);
  if (!net)
    throw UnsupportedError(
        fmt::format("the complete engine handles Dense/ReLU networks with one logit and tree ensembles: {}", why));
  if (net->input_width != schema.model_width())
    throw InputError(schema.source(), "",
                     fmt::format("the schema describes {} model inputs, the model reads {}", schema.model_width(),
                                 net->input_width));
  auto regions = std::make_unique<NetworkRegions>(problem, options, std::move(*net), signals);
  regions->set_count_threads(env.threads());
  return regions;
}

}  // namespace

FairnessResult complete_search(const FairnessProblem& problem, const CompleteSearchOptions& options, Env& env) {
  SearchSignals signals(options.max_witnesses);
  const std::unique_ptr<RegionEvaluator> regions = complete_regions(problem, options, signals, env);
  return schedule_search(*regions, signals, options, env);
}

std::vector<SearchState> split_complete_search(const FairnessProblem& problem, const CompleteSearchOptions& options,
                                               int parts, Env& env) {
  SearchSignals signals(options.max_witnesses);
  const std::unique_ptr<RegionEvaluator> regions = complete_regions(problem, options, signals, env);
  return split_search(*regions, signals, options, parts, env);
}

}  // namespace witness
