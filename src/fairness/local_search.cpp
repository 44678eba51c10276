// The two search-based baselines, which share one shape: a global phase that finds discriminatory
// inputs, and local walks that move one non-protected feature at a time from each of them and
// keep moving while the inputs stay discriminatory.
//   AEQUITAS (Udeshi et al., ASE 2018), fully directed: uniform random global inputs; the local
//     step picks a feature and a direction with learned probabilities.
//   ADF (Zhang et al., ICSE 2020), white-box: global inputs climb from clustered seeds along the
//     gradient directions that both sides of the most different protected pair agree on; the local
//     step prefers features with small gradients (they keep the decision as it is).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "bounds/relu_network.h"
#include "core/error.h"
#include "domain/sampler.h"
#include "fairness/test_ledger.h"

namespace witness {
namespace {

enum AdfPhase : std::uint8_t { kGlobal = 0, kLocal = 1 };

constexpr int kLocalSteps = 1000;          // both tools' default local iteration limit
constexpr std::size_t kMaxWalkers = 4096;  // walks advanced together (one oracle batch)
constexpr double kGlobalShare = 0.1;       // global tests kept to about this share once walks run

struct Walk {
  Eigen::VectorXd x;  // the current discriminatory input
  int steps = kLocalSteps;
  int feature = 0;  // the feature and direction of the pending step
  double direction = 0;
  int idle = 0;  // steps in a row that proposed an input tested before
};

// A walk that keeps proposing inputs that were tested before has explored its neighbourhood.
constexpr int kIdleSteps = 50;

// Whether the next round should draw global inputs, and how many.
Eigen::Index global_round(TestLedger& ledger, const TestResult& r, std::size_t walks) {
  const bool few =
      walks == 0 || static_cast<double>(r.phases[kGlobal].generated) < kGlobalShare * static_cast<double>(r.generated);
  if (!few || walks >= kMaxWalkers) return 0;
  return std::clamp<std::int64_t>(ledger.remaining() / 20, 16, 1024);
}

// One local step for every walk: `choose` sets each walk's feature and direction; the moved
// inputs are tested together and `learn(walk, discriminatory)` sees each outcome. Walks move on
// discriminatory inputs only, and end after kLocalSteps steps or kIdleSteps steps without a new input.
template <typename Choose, typename Learn>
void step_walks(TestLedger& ledger, std::vector<Walk>& walks, Choose choose, Learn learn) {
  if (walks.empty()) return;
  Eigen::MatrixXd moved(ledger.schema().size(), static_cast<Eigen::Index>(walks.size()));
  for (std::size_t i = 0; i < walks.size(); ++i) {
    Walk& w = walks[i];
    choose(w);
    Eigen::VectorXd y = w.x;
    const Feature& feat = ledger.schema().feature(w.feature);
    y(w.feature) += w.direction * ledger.step(w.feature);
    if (y(w.feature) > feat.max || y(w.feature) < feat.min) {  // at a bound: go the other way
      w.direction = -w.direction;
      y(w.feature) = w.x(w.feature) + w.direction * ledger.step(w.feature);
    }
    ledger.clamp(y);
    moved.col(static_cast<Eigen::Index>(i)) = y;
  }
  std::vector<std::int8_t> verdict;
  std::vector<bool> fresh;
  ledger.test(moved, kLocal, verdict, &fresh);
  std::size_t kept = 0;
  std::vector<Walk> born;
  const std::size_t n = walks.size();
  for (std::size_t i = 0; i < n; ++i) {
    Walk& w = walks[i];
    if (verdict[i] == TestLedger::kUntested) continue;
    learn(w, verdict[i] == 1);
    if (verdict[i] == 1) {
      w.x = moved.col(static_cast<Eigen::Index>(i));
      // A new discriminatory input also starts a walk of its own while there is room: the pool
      // fills up within a few rounds, so the oracle sees large batches.
      if (fresh[i] && n + born.size() < kMaxWalkers) born.push_back(Walk{w.x});
    }
    w.idle = fresh[i] ? 0 : w.idle + 1;
    if (--w.steps > 0 && w.idle < kIdleSteps) walks[kept++] = std::move(w);
  }
  walks.resize(kept);
  for (Walk& w : born) walks.push_back(std::move(w));
}

std::vector<int> free_features(const TestLedger& ledger) {
  std::vector<int> out;
  for (int f = 0; f < ledger.schema().size(); ++f)
    if (!ledger.is_protected()[static_cast<std::size_t>(f)]) out.push_back(f);
  if (out.empty()) throw InputError(ledger.schema().source(), "", "every feature is protected: nothing to vary");
  return out;
}

// Logit z and, if asked, its gradient with respect to the raw features: the network's input
// gradient through the schema's normalisation (one-hot features get 0: they have no direction).
class RawGradient {
 public:
  RawGradient(const ReluNetwork& net, const Schema& schema) : net_(net), schema_(schema) {}

  double operator()(const Eigen::VectorXd& raw, Eigen::VectorXd* grad) const {
    const Eigen::VectorXd x = schema_.to_model(raw);
    if (grad == nullptr) return net_.logit(x);
    Eigen::VectorXd g;
    const double z = net_.logit(x, g);
    grad->setZero(schema_.size());
    for (int f = 0; f < schema_.size(); ++f) {
      const Feature& feat = schema_.feature(f);
      if (feat.one_hot) continue;
      (*grad)(f) = g(feat.model_offset) * feat.norm.slope();
    }
    return z;
  }

 private:
  const ReluNetwork& net_;
  const Schema& schema_;
};

}  // namespace

void run_aequitas(TestLedger& ledger, const TestOptions& /*options*/) {
  const std::vector<int> free = free_features(ledger);
  std::mt19937_64& rng = ledger.rng();
  Sampler sampler(ledger.schema(), rng());
  // AEQUITAS's fully directed update: each success raises the feature's probability and the
  // probability of the direction that worked; each failure lowers them.
  constexpr double kChange = 0.001;  // AEQUITAS's param/direction probability change sizes
  std::vector<double> p(free.size(), 1.0 / static_cast<double>(free.size()));
  std::vector<double> up(free.size(), 0.5);
  std::vector<std::size_t> slot(static_cast<std::size_t>(ledger.schema().size()), 0);
  for (std::size_t i = 0; i < free.size(); ++i) slot[static_cast<std::size_t>(free[i])] = i;
  std::vector<Walk> walks;
  std::vector<std::int8_t> verdict;
  while (!ledger.done()) {
    if (const Eigen::Index n = global_round(ledger, ledger.result(), walks.size()); n > 0) {
      const Eigen::MatrixXd x = sampler.points(n);
      ledger.test(x, kGlobal, verdict);
      for (Eigen::Index j = 0; j < n; ++j)
        if (verdict[static_cast<std::size_t>(j)] == 1 && walks.size() < kMaxWalkers) walks.push_back(Walk{x.col(j)});
    }
    std::discrete_distribution<std::size_t> pick(p.begin(), p.end());
    step_walks(
        ledger, walks,
        [&](Walk& w) {
          const std::size_t i = pick(rng);
          w.feature = free[i];
          w.direction = std::uniform_real_distribution<double>(0, 1)(rng) < up[i] ? 1.0 : -1.0;
        },
        [&](const Walk& w, bool success) {
          const std::size_t i = slot[static_cast<std::size_t>(w.feature)];
          const double toward = (w.direction > 0) == success ? kChange : -kChange;
          up[i] = std::clamp(up[i] + toward, 0.0, 1.0);
          p[i] = std::max(0.0, p[i] + (success ? kChange : -kChange));
          const double sum = std::accumulate(p.begin(), p.end(), 0.0);
          if (sum <= 0) {
            std::fill(p.begin(), p.end(), 1.0 / static_cast<double>(p.size()));
          } else {
            for (double& q : p) q /= sum;
          }
        });
  }
}

void run_adf(TestLedger& ledger, const TestOptions& options) {
  const Model* model = ledger.oracle().model();
  if (model == nullptr)
    throw InputError("--method adf is white-box: it needs the model's weights, not --cmd (use symbgen or aequitas)");
  std::string why;
  const std::optional<ReluNetwork> net = relu_network_of(*model, &why);
  if (!net) throw UnsupportedError(model->source, "", "adf needs a ReLU network with one logit: " + why);
  const Schema& schema = ledger.schema();
  const RawGradient gradient(*net, schema);
  const std::vector<int> free = free_features(ledger);
  const std::vector<Eigen::VectorXd>& combos = ledger.combinations();
  const std::vector<int>& prot = options.protected_features;
  std::mt19937_64& rng = ledger.rng();

  // The protected variant of x whose logit is furthest from x's: the pair most likely to split.
  auto partner = [&](const Eigen::VectorXd& x, double z) {
    Eigen::VectorXd best = x;
    double gap = -1;
    for (const Eigen::VectorXd& c : combos) {
      Eigen::VectorXd y = x;
      for (std::size_t k = 0; k < prot.size(); ++k) y(prot[k]) = c(static_cast<Eigen::Index>(k));
      const double d = std::abs(gradient(y, nullptr) - z);
      if (d > gap) {
        gap = d;
        best = y;
      }
    }
    return best;
  };

  constexpr int kGlobalSteps = 10;  // ADF's max_global iterations per seed
  constexpr double kTiny = 1e-12;
  struct Climb {
    Eigen::VectorXd x;
    int steps = kGlobalSteps;
  };
  const Eigen::MatrixXd seeds =
      ordered_seeds(schema, options, std::clamp<std::int64_t>(ledger.remaining(), 1000, 100000), rng());
  Sampler more_seeds(schema, rng());
  Eigen::Index next_seed = 0;
  std::vector<Climb> climbs;
  std::vector<Walk> walks;
  std::vector<std::int8_t> verdict;
  Eigen::VectorXd g(schema.size());
  Eigen::VectorXd g2(schema.size());
  while (!ledger.done()) {
    const Eigen::Index want = global_round(ledger, ledger.result(), walks.size());
    while (static_cast<Eigen::Index>(climbs.size()) < want) {
      climbs.push_back(Climb{next_seed < seeds.cols() ? Eigen::VectorXd(seeds.col(next_seed++)) : more_seeds.point()});
    }
    if (!climbs.empty() && want > 0) {
      Eigen::MatrixXd x(schema.size(), static_cast<Eigen::Index>(climbs.size()));
      for (std::size_t i = 0; i < climbs.size(); ++i) x.col(static_cast<Eigen::Index>(i)) = climbs[i].x;
      ledger.test(x, kGlobal, verdict);
      std::size_t kept = 0;
      for (std::size_t i = 0; i < climbs.size(); ++i) {
        Climb& c = climbs[i];
        if (verdict[i] == TestLedger::kUntested) continue;
        ledger.check_time();  // a few gradients each: long on a wide network
        if (verdict[i] == 1) {
          if (walks.size() < kMaxWalkers) walks.push_back(Walk{c.x});
          continue;
        }
        // Move both sides of the most different pair toward the decision boundary, along the
        // features where their gradients agree in sign.
        const double z = gradient(c.x, &g);
        const Eigen::VectorXd y = partner(c.x, z);
        (void)gradient(y, &g2);
        const double toward = z > net->threshold ? -1.0 : 1.0;
        bool moved = false;
        for (int f : free) {
          if (std::abs(g(f)) <= kTiny || (g(f) > 0) != (g2(f) > 0)) continue;
          c.x(f) += toward * (g(f) > 0 ? 1.0 : -1.0) * ledger.step(f);
          moved = true;
        }
        ledger.clamp(c.x);
        if (moved && --c.steps > 0) climbs[kept++] = std::move(c);
      }
      climbs.resize(kept);
    }
    step_walks(
        ledger, walks,
        [&](Walk& w) {
          // Probability inversely proportional to the pair's gradient size: small-gradient
          // features change the decision least, so the input likely stays discriminatory.
          ledger.check_time();
          const double z = gradient(w.x, &g);
          (void)gradient(partner(w.x, z), &g2);
          std::vector<double> weight(free.size());
          for (std::size_t i = 0; i < free.size(); ++i)
            weight[i] = 1.0 / (std::abs(g(free[i])) + std::abs(g2(free[i])) + 1e-6);
          w.feature = free[std::discrete_distribution<std::size_t>(weight.begin(), weight.end())(rng)];
          w.direction = std::bernoulli_distribution(0.5)(rng) ? 1.0 : -1.0;
        },
        [](const Walk&, bool) {});
    if (walks.empty() && climbs.empty() && want == 0) ledger.stop("exhausted");
  }
}

}  // namespace witness
