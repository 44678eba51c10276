// How the complete engine reaches other processes. A front end started under a launcher installs
// the search that spans them (the CLI under mpirun: distributed/mpi_search.h); until one is
// installed every search runs in this process, so the engine itself links no MPI.
//
//   witness::install_distributed_search(nullptr);  // alone: the scheduler searches in this process
//   if (witness::DistributedSearch spanning = witness::installed_distributed_search())
//     (void)spanning;  // region_scheduler.cpp hands it the whole search instead
#pragma once

#include "core/env.h"
#include "domain/schema.h"
#include "fairness/complete/options.h"
#include "fairness/complete/region.h"
#include "fairness/verdict.h"
#include "model/model.h"

namespace witness {

// The search of `regions` shared by every process (all call it with the same question); processes
// other than the first return an empty inconclusive result.
using DistributedSearch = FairnessResult (*)(const RegionEvaluator& regions, SearchSignals& signals,
                                             const CompleteSearchOptions& options, Env& env);

// nullptr: alone again.
void install_distributed_search(DistributedSearch search);
[[nodiscard]] DistributedSearch installed_distributed_search();

}  // namespace witness
