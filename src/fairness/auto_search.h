// The default engine: the complete verifier with falsification beside it (auto_search.cpp).
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   const witness::FairnessProblem problem(model, schema, {"age"});
//   witness::Env env;  env.options.set("time-limit", "10");  env.start();
//   witness::FairnessResult a = witness::auto_search(problem, witness::CompleteSearchOptions{}, env);
#pragma once

#include "core/env.h"
#include "domain/schema.h"
#include "fairness/complete/options.h"
#include "fairness/problem.h"
#include "fairness/verdict.h"
#include "model/model.h"

namespace witness {

// The default engine: complete_search with falsify() beside it on one more thread, for
// falsify_tests tests. Which answer is shown depends on outcomes, not on which thread ends first:
// falsification's pairs when its budget finds as many as asked, else the complete engine's (with
// falsification's added), and the complete engine's threads hunt in rounds for the witnesses one
// thread finds first, so a command shows the same person every time, for any --threads. Models that
// the complete engine does not handle get falsify() and then dual_search (engine "auto(dual)").
FairnessResult auto_search(const FairnessProblem& problem, const CompleteSearchOptions& options, Env& env);

}  // namespace witness
