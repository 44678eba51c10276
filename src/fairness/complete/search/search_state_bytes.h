// Search states as MPI messages: the file format (JSON) for everything but the open regions, which
// follow as raw numbers of this build, written and read in one pass (a frontier of 60,000 regions
// took 0.9 s to print as JSON and longer to parse; mpirun moves whole frontiers at the end of a run).
// Only for processes of the same executable; every region is checked against the question as a
// file's would be.
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   const witness::FairnessProblem problem(model, schema, {"age"});
//   witness::SearchQuestion q{problem, true};
//   witness::SearchState state = witness::read_search_state("run.ckpt.json", q);
//   std::string bytes = witness::search_state_bytes(std::move(state), q);  // MPI_Send(bytes.data(), ...)
//   witness::SearchState back = witness::parse_search_state_bytes(bytes, "rank 1's result", q);
#pragma once

#include <string>
#include <string_view>

#include "fairness/complete/search/search_state.h"

namespace witness {

[[nodiscard]] std::string search_state_bytes(SearchState state, const SearchQuestion& question);
// InputError naming `source` when the bytes are not a whole state of this question.
[[nodiscard]] SearchState parse_search_state_bytes(std::string_view bytes, const std::string& source,
                                                   const SearchQuestion& question);

}  // namespace witness
