// The complete engine across machines: `mpirun -n N witness fair ...` (or srun) runs one witness
// per rank; rank 0 cuts the search into sub-problems (8 per rank; one per rank, kept until the end,
// for a quantification under a time limit), hands them out on request (its own solver thread takes
// them too), and when a rank runs dry with none left, asks the part held longest back and divides
// its open regions (stealing); it stops every rank at the first witness of a verdict search and
// joins the results into the answer one process gives, which only rank 0 prints. One thread per
// rank talks MPI; parts travel as binary search states. Built when CMake finds MPI; otherwise
// every process is rank 0 of 1. Only the CLI links this layer (the engine reaches it through
// fairness/distribution.h), so Python, the server and the tests link no MPI.
//
//   witness::distributed_start();  // first in main: MPI_Init when started by mpirun or srun, and
//                                  // with more than one rank, installs distributed_search
//   if (witness::distributed_rank() > 0) { /* print nothing */ }
//   witness::distributed_stop();   // last: MPI_Finalize
#pragma once

#include "core/env.h"
#include "domain/schema.h"
#include "fairness/complete/options.h"
#include "fairness/complete/region.h"
#include "fairness/complete/search/distribution.h"
#include "fairness/verdict.h"
#include "model/model.h"

namespace witness {

// MPI_Init_thread (funneled) when this process was started by mpirun/srun with MPI built in; with
// more than one rank, installs distributed_search as the engine's DistributedSearch.
void distributed_start();
void distributed_stop();
[[nodiscard]] int distributed_rank();    // 0 alone
[[nodiscard]] int distributed_size();    // 1 alone
[[nodiscard]] bool distributed_built();  // whether MPI was built in

// The search of `regions` shared by every rank (all ranks call it with the same question). Ranks
// other than 0 return an empty inconclusive result.
FairnessResult distributed_search(const RegionEvaluator& regions, SearchSignals& signals,
                                  const CompleteSearchOptions& o, Env& env);

}  // namespace witness
