// SymbGen (Aggarwal et al., "Automated Test Generation to Detect Individual Discrimination in AI
// Models", Algorithm 5): seeds from clustered data, local explanations as symbolic paths, directed
// search around discriminatory inputs and undirected search elsewhere.
#include <fmt/format.h>

#include <algorithm>
#include <queue>
#include <string>
#include <unordered_set>

#include "core/parallel.h"
#include "domain/sampler.h"
#include "fairness/local_explanation.h"
#include "fairness/test_ledger.h"

namespace witness {
namespace {

// Relative priorities (section 4): directed search first, then seed inputs, then undirected.
enum Rank : std::uint8_t { kDirected = 0, kSeed = 1, kUndirected = 2 };
// Phase indices of TestResult::phases for symbgen.
enum SymbgenPhase : std::uint8_t { kSeedPhase = 0, kDirectedPhase = 1, kUndirectedPhase = 2 };

struct Candidate {
  Rank rank = kSeed;
  double score = 0;  // average confidence of the toggled prefix: higher first
  std::int64_t order = 0;
  Eigen::VectorXd x;
};

struct Later {
  bool operator()(const Candidate& a, const Candidate& b) const {
    if (a.rank != b.rank) return a.rank > b.rank;
    if (a.score != b.score) return a.score < b.score;
    return a.order > b.order;
  }
};

std::string signature(const std::vector<PathPredicate>& path) {
  std::string s;
  for (const PathPredicate& p : path) s += fmt::format("{}{}{:.9g};", p.feature, p.greater ? '>' : '<', p.threshold);
  return s;
}

double prefix_confidence(const std::vector<PathPredicate>& path, std::size_t upto) {
  double sum = 0;
  for (std::size_t i = 0; i <= upto; ++i) sum += path[i].confidence;
  return sum / static_cast<double>(upto + 1);
}

}  // namespace

void run_symbgen(TestLedger& ledger, const TestOptions& o) {
  const Schema& schema = ledger.schema();
  std::mt19937_64& rng = ledger.rng();
  const std::vector<bool>& prot = ledger.is_protected();
  const unsigned threads = ledger.threads();
  // Without data, seeds and the perturbation distribution come from uniform random inputs
  // (the paper's "Random" experiment, Table 5).
  const Eigen::Index fallback = std::clamp<std::int64_t>(ledger.remaining(), 1000, 100000);
  const Eigen::MatrixXd seeds = ordered_seeds(schema, o, fallback, rng());
  Sampler more_seeds(schema, rng());
  const Eigen::MatrixXd uniform = o.seeds == nullptr ? Sampler(schema, rng()).points(4000) : Eigen::MatrixXd();
  const LocalExplainer lime(schema, o.seeds != nullptr ? *o.seeds : uniform, o.explanation_samples);

  std::priority_queue<Candidate, std::vector<Candidate>, Later> queue;
  std::unordered_set<std::string> visited;
  Eigen::Index next_seed = 0;
  std::int64_t order = 0;
  // Small batches keep the priorities nearly strict; each input's explanation still labels
  // explanation_samples rows, so the oracle sees large batches.
  constexpr std::size_t kBatch = 16;
  std::vector<Candidate> batch;
  std::vector<std::int8_t> verdict;
  std::vector<bool> fresh;
  std::vector<int> labels;
  while (!ledger.done()) {
    batch.clear();
    const auto want = static_cast<std::size_t>(std::min<std::int64_t>(kBatch, ledger.remaining()));
    while (batch.size() < want) {
      if (!queue.empty() && (queue.top().rank == kDirected || next_seed >= seeds.cols())) {
        batch.push_back(queue.top());
        queue.pop();
      } else if (next_seed < seeds.cols()) {
        batch.push_back(Candidate{kSeed, 0, order++, seeds.col(next_seed++)});
      } else {
        batch.push_back(Candidate{kSeed, 0, order++, more_seeds.point()});  // everything else is used up
      }
    }
    Eigen::MatrixXd x(schema.size(), static_cast<Eigen::Index>(batch.size()));
    std::vector<int> phases;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      x.col(static_cast<Eigen::Index>(i)) = batch[i].x;
      phases.push_back(batch[i].rank == kDirected ? kDirectedPhase
                       : batch[i].rank == kSeed   ? kSeedPhase
                                                  : kUndirectedPhase);
    }
    ledger.test(x, phases, verdict, &fresh);

    // Explain the new inputs: their perturbations go to the oracle as one batch.
    std::vector<std::size_t> todo;
    for (std::size_t i = 0; i < batch.size(); ++i)
      if (fresh[i]) todo.push_back(i);
    if (todo.empty()) continue;
    const Eigen::Index s = o.explanation_samples;
    Eigen::MatrixXd around(schema.size(), static_cast<Eigen::Index>(todo.size()) * s);
    // Each input's perturbations have their own generator, seeded in order, and the explanations
    // are spread over the threads: the same paths for any thread count.
    std::vector<std::uint64_t> seeds_of(todo.size());
    for (std::uint64_t& v : seeds_of) v = rng();
    std::vector<std::vector<PathPredicate>> paths(todo.size());
    parallel_for(threads, todo.size(), [&](std::size_t k, unsigned /*worker*/) {
      std::mt19937_64 own_rng(seeds_of[k]);
      around.middleCols(static_cast<Eigen::Index>(k) * s, s) = lime.perturb(batch[todo[k]].x, own_rng);
    });
    ledger.oracle().labels(around, labels);
    parallel_for(threads, todo.size(), [&](std::size_t k, unsigned /*worker*/) {
      const std::vector<int> own(labels.begin() + static_cast<std::ptrdiff_t>(k) * s,
                                 labels.begin() + static_cast<std::ptrdiff_t>(k + 1) * s);
      paths[k] = lime.explain(around.middleCols(static_cast<Eigen::Index>(k) * s, s), own, o.tree_depth);
    });
    for (std::size_t k = 0; k < todo.size(); ++k) {
      const Candidate& c = batch[todo[k]];
      const std::vector<PathPredicate>& path = paths[k];
      if (!visited.insert(signature(path)).second) continue;  // this path was explored already
      const bool discriminatory = verdict[todo[k]] == 1;
      for (std::size_t i = 0; i < path.size(); ++i) {
        if (prot[static_cast<std::size_t>(path[i].feature)]) continue;  // all protected values are tested anyway
        if (discriminatory && path[i].confidence < o.t1) {
          // Directed: toggle a low-confidence predicate and keep the rest of the path, so the new
          // input stays next to the discriminatory one.
          std::vector<PathPredicate> p = path;
          p[i].greater = !p[i].greater;
          if (auto y = solve_path(schema, p, c.x, nullptr))
            queue.push(Candidate{kDirected, prefix_confidence(path, i), order++, *y});
        } else if (!discriminatory && path[i].confidence > o.t2) {
          // Undirected: toggle a high-confidence predicate and drop the suffix; features the
          // prefix leaves free take new values from the data distribution.
          std::vector<PathPredicate> p(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(i) + 1);
          p[i].greater = !p[i].greater;
          Eigen::VectorXd near = c.x;
          for (int f = 0; f < schema.size(); ++f) {
            const bool bounded =
                std::any_of(p.begin(), p.end(), [f](const PathPredicate& q) { return q.feature == f; });
            if (!bounded && !prot[static_cast<std::size_t>(f)]) near(f) = lime.draw(f, rng);
          }
          if (auto y = solve_path(schema, p, near, &rng))
            queue.push(Candidate{kUndirected, prefix_confidence(path, i), order++, *y});
        }
      }
    }
  }
}

}  // namespace witness
