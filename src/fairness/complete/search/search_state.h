// A search saved to a file and read back: the closed shares, the replayed witnesses, the quantify
// answer so far and the open frontier. Checkpoints, resumed runs, sub-problems and their results
// are all one format (JSON, long doubles exact in hex), tied to their question by a fingerprint of
// the model, the schema, the protected features and the mode.
//
//   witness::Model model = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   const witness::FairnessProblem problem(model, schema, {"age"});
//   witness::SearchQuestion q{problem, true};
//   witness::SearchState state = witness::read_search_state("run.ckpt.json", q);  // InputError: not this question
//   witness::write_search_state("copy.ckpt.json", state, q);
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "domain/schema.h"
#include "fairness/complete/answer/quantify_answer.h"
#include "fairness/complete/answer/search_tally.h"
#include "fairness/problem.h"
#include "model/model.h"

namespace witness {

// What a saved state answers: the problem the engines searched (its protected features with their
// proxies, as they vary them) and the mode; the model and schema must outlive it.
struct SearchQuestion {
  explicit SearchQuestion(const FairnessProblem& problem_, bool quantify_ = false)
      : problem(problem_),
        model(problem_.model()),
        schema(problem_.schema()),
        protected_features(problem_.protected_features()),
        quantify(quantify_) {}

  const FairnessProblem& problem;
  const Model& model;
  const Schema& schema;
  const std::vector<int>& protected_features;  // problem.protected_features()
  bool quantify = false;
  // SHA-256 of everything the answer depends on: the model's full content, the schema with its
  // bounds and rules, the protected features and the mode. A state of another question is refused.
  [[nodiscard]] std::string fingerprint() const;
  [[nodiscard]] const std::string& model_hash() const;   // model_digest, computed once
  [[nodiscard]] const std::string& schema_hash() const;  // schema_digest, computed once

 private:
  mutable std::string model_hash_, schema_hash_;  // computed on first use
};

struct SearchState {
  SearchTally tally;  // tally.left: the open frontier
  QuantifyAnswer::Parts answer;
  int part = 0, parts = 1;  // a sub-problem's number among its siblings
  std::string header;       // a JSON object the caller keeps with the state ("": none), e.g. how to run it
};

[[nodiscard]] std::string search_state_text(const SearchState& state, const SearchQuestion& question);
// InputError naming `source` for anything malformed or out of the question's domain; every witness
// is replayed on the model. The state must account for its scope (state_checks.h): closed + open +
// evicted measure = scope, exactly on integer domains; open regions inside the domain and disjoint.
[[nodiscard]] SearchState parse_search_state(const std::string& text, const std::string& source,
                                             const SearchQuestion& question);
// The fields of a state, each checked on its own, the accounts not (parse_search_state_bytes adds
// the open regions first).
[[nodiscard]] SearchState parse_search_state_fields(const std::string& text, const std::string& source,
                                                    const SearchQuestion& question);
[[nodiscard]] SearchState read_search_state(const std::string& path, const SearchQuestion& question);
void write_search_state(const std::string& path, const SearchState& state, const SearchQuestion& question);

// An unfinished state's open regions dealt into `pieces` states (snake order by measure, so each
// holds about as much), the first keeping what was closed (and, with `closed_apart`, no open
// region): each can be continued on its own, and joining them all (renumbered as parts
// 0..pieces-1) gives the state's shares back. `domain_points`: what a state of the whole domain
// (scope 0) covers.
[[nodiscard]] std::vector<SearchState> divide_search_state(SearchState state, int pieces, long double domain_points,
                                                           bool closed_apart = false);
// The states of sub-problems of one question joined: shares added, frontiers and answers joined.
// InputError when a part is missing or given twice, or the parts' scopes do not add up to the
// domain or their open regions overlap (`check_overlaps`); `names` names each state's file.
[[nodiscard]] SearchState join_search_states(std::vector<SearchState> states, const std::vector<std::string>& names,
                                             const SearchQuestion& question, bool check_overlaps = true);

}  // namespace witness
