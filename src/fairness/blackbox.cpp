#include "fairness/blackbox.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>
#include <set>
#include <unordered_set>

#include "core/error.h"
#include "domain/kmeans.h"
#include "domain/sampler.h"
#include "fairness/falsify.h"
#include "fairness/test_ledger.h"
#include "fairness/verdict.h"

namespace witness {

// ---------------------------------------------------------------------------------------------
// TestLedger

std::size_t TestLedger::KeyHash::operator()(std::int64_t id) const {
  const double* k = ledger->key(id);
  std::uint64_t h = 0x9E3779B97F4A7C15ULL;
  for (std::size_t i = 0; i < ledger->free_features_.size(); ++i) {
    const double v = k[i] == 0.0 ? 0.0 : k[i];  // -0 and +0 are the same input
    h = (h ^ std::bit_cast<std::uint64_t>(v)) * 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 31U;
  }
  return static_cast<std::size_t>(h);
}

bool TestLedger::KeyEqual::operator()(std::int64_t a, std::int64_t b) const {
  const double* ka = ledger->key(a);
  const double* kb = ledger->key(b);
  for (std::size_t i = 0; i < ledger->free_features_.size(); ++i)
    if (ka[i] != kb[i]) return false;
  return true;
}

const double* TestLedger::key(std::int64_t id) const {
  return keys_.data() + static_cast<std::size_t>(id) * free_features_.size();
}

TestLedger::TestLedger(LabelOracle& oracle, const Schema& schema, const TestOptions& options, Env& env,
                       TestResult& result)
    : oracle_(oracle),
      schema_(schema),
      options_(options),
      env_(env),
      result_(result),
      is_protected_(proxy_mask(schema, options.protected_features)),
      combos_(protected_combinations(schema, options.protected_features)),
      rng_(env.seed()),
      seen_(1024, KeyHash{this}, KeyEqual{this}),
      last_progress_(std::chrono::steady_clock::now()) {
  free_points_ = 1;
  for (int f = 0; f < schema.size(); ++f) {
    if (is_protected_[static_cast<std::size_t>(f)]) continue;
    free_features_.push_back(f);
    const Feature& feat = schema.feature(f);
    free_points_ *= feat.integral() ? (feat.max - feat.min + 1) : (feat.max > feat.min ? HUGE_VALL : 1.0L);
  }
  // With constraints only the valid non-protected parts can be tested: counted where the domain is
  // small, so that a method that has tested them all stops at once.
  if (!schema.constraints().empty()) {
    if (const long double valid = valid_free_points(); valid >= 0) free_points_ = valid;
  }
  double stride = 1;
  strides_.assign(options.protected_features.size(), 0);
  for (std::size_t k = options.protected_features.size(); k-- > 0;) {
    strides_[k] = stride;
    const Feature& feat = schema.feature(options.protected_features[k]);
    stride *= feat.max - feat.min + 1;
  }
}

long double TestLedger::valid_free_points() const {
  constexpr long double kMaxPoints = 1 << 18;  // about 0.1 s
  const Constraints& constraints = schema_.constraints();
  std::vector<int> dims;  // the features to enumerate: derived ones follow their sources
  long double points = 1;
  for (int f = 0; f < schema_.size(); ++f) {
    const Feature& feat = schema_.feature(f);
    if (constraints.derivation_of(f) != nullptr) continue;
    if (!feat.integral() && feat.max > feat.min) return -1;
    points *= feat.max - feat.min + 1;
    dims.push_back(f);
  }
  if (points > kMaxPoints) return -1;
  Eigen::VectorXd cur(schema_.size()), raw(schema_.size());
  for (int f = 0; f < schema_.size(); ++f) cur(f) = schema_.feature(f).min;
  std::set<std::vector<double>> parts;
  for (auto n = static_cast<std::int64_t>(points); n-- > 0;) {
    raw = cur;
    constraints.derive(raw);
    if (constraints.satisfied(raw)) {
      std::vector<double> part;
      for (int f : free_features_) part.push_back(raw(f));
      parts.insert(std::move(part));
    }
    for (int f : dims) {  // mixed-radix increment
      if (cur(f) < schema_.feature(f).max) {
        cur(f) += 1;
        break;
      }
      cur(f) = schema_.feature(f).min;
    }
  }
  return static_cast<long double>(parts.size());
}

std::size_t TestLedger::combination_of(const Eigen::Ref<const Eigen::VectorXd>& raw) const {
  double index = 0;
  for (std::size_t k = 0; k < strides_.size(); ++k) {
    const int f = options_.protected_features[k];
    index += (raw(f) - schema_.feature(f).min) * strides_[k];
  }
  return static_cast<std::size_t>(index);
}

void TestLedger::clamp(Eigen::Ref<Eigen::VectorXd> raw) const {
  for (int f = 0; f < schema_.size(); ++f) {
    const Feature& feat = schema_.feature(f);
    double v = feat.integral() ? std::round(raw(f)) : raw(f);
    raw(f) = std::clamp(v, feat.min, feat.max);
  }
}

double TestLedger::step(int feature) const {
  const Feature& feat = schema_.feature(feature);
  return feat.integral() ? 1.0 : std::max((feat.max - feat.min) / 20.0, std::numeric_limits<double>::min());
}

std::int64_t TestLedger::remaining() const {
  if (options_.budget <= 0) return std::numeric_limits<std::int64_t>::max() / 4;
  return std::max<std::int64_t>(0, options_.budget - result_.generated);
}

void TestLedger::stop(const char* reason) {
  if (result_.stopped.empty()) result_.stopped = reason;
}

void TestLedger::check_time() const {
  if (env_.expired()) throw OracleTimeLimit(fmt::format("the {} passed", env_.stop_reason()));
}

bool TestLedger::done() {
  if (!result_.stopped.empty()) return true;
  if (remaining() == 0) stop("budget");
  if (env_.expired()) stop(env_.stop_reason());
  if (static_cast<long double>(result_.generated) >= free_points_) stop("exhausted");
  // A method that keeps proposing inputs it has already tested has run out of new ones.
  if (stale_ > 1000000) stop("exhausted");
  return !result_.stopped.empty();
}

void TestLedger::test(const Eigen::MatrixXd& proposed, const std::vector<int>& phases,
                      std::vector<std::int8_t>& verdict, std::vector<bool>* fresh) {
  const auto began = std::chrono::steady_clock::now();
  const Constraints& constraints = schema_.constraints();
  // Derived features follow their sources; a proposal that still breaks a rule is not a person.
  Eigen::MatrixXd derived;
  if (!constraints.empty()) {
    derived = proposed;
    for (Eigen::Index j = 0; j < derived.cols(); ++j) constraints.derive(derived.col(j));
  }
  const Eigen::MatrixXd& raw = constraints.empty() ? proposed : derived;
  const Eigen::Index n = raw.cols();
  verdict.assign(static_cast<std::size_t>(n), kUntested);
  if (fresh != nullptr) fresh->assign(static_cast<std::size_t>(n), false);
  std::vector<std::int64_t> id(static_cast<std::size_t>(n), -1);
  std::vector<bool> invalid(static_cast<std::size_t>(n), false);
  std::vector<Eigen::Index> tests;  // columns that count as new tests
  const std::size_t width = free_features_.size();
  std::int64_t room = remaining();
  if (const double left = env_.seconds_left(); std::isfinite(left)) {
    constexpr std::int64_t kFirstBatch = 256;  // measures the cost of a test before larger batches
    room = std::min<std::int64_t>(
        room, seconds_per_test_ > 0.0 ? std::max<std::int64_t>(1, static_cast<std::int64_t>(left / seconds_per_test_))
                                      : kFirstBatch);
  }
  for (Eigen::Index j = 0; j < n; ++j) {
    if (!schema_.contains(raw.col(j)))
      throw InternalError(fmt::format("black-box test input out of the domain: {}", schema_.display_row(raw.col(j))));
    if (!constraints.empty() && !constraints.satisfied(raw.col(j))) {
      invalid[static_cast<std::size_t>(j)] = true;
      ++result_.invalid;
      ++stale_;
      continue;
    }
    const auto next = static_cast<std::int64_t>(known_.size());
    for (int f : free_features_) keys_.push_back(raw(f, j));
    auto it = seen_.find(next);
    if (it != seen_.end()) {
      keys_.resize(keys_.size() - width);
      id[static_cast<std::size_t>(j)] = *it;
      ++result_.duplicates;
      ++stale_;
      continue;
    }
    if (room == 0) {
      keys_.resize(keys_.size() - width);
      continue;
    }
    --room;
    known_.push_back(kUntested);
    seen_.insert(next);
    id[static_cast<std::size_t>(j)] = next;
    tests.push_back(j);
    if (fresh != nullptr) (*fresh)[static_cast<std::size_t>(j)] = true;
  }
  if (!tests.empty()) {
    stale_ = 0;
    // Rows to label: every protected combination of each test (one other, for random pairs).
    const auto nc = static_cast<Eigen::Index>(one_pair_ ? 2 : combos_.size());
    Eigen::MatrixXd eval(raw.rows(), static_cast<Eigen::Index>(tests.size()) * nc);
    std::vector<std::size_t> own(tests.size());
    std::unordered_set<Eigen::Index> no_twin;  // columns of eval that break a constraint
    for (std::size_t t = 0; t < tests.size(); ++t) {
      const Eigen::Index j = tests[t];
      own[t] = combination_of(raw.col(j));
      for (Eigen::Index c = 0; c < nc; ++c) {
        std::size_t combo = static_cast<std::size_t>(c);
        if (one_pair_) {
          // c = 0: the test itself; c = 1: a uniformly chosen other combination.
          std::size_t other = std::uniform_int_distribution<std::size_t>(0, combos_.size() - 2)(rng_);
          combo = c == 0 ? own[t] : (other >= own[t] ? other + 1 : other);
        }
        auto col = eval.col(static_cast<Eigen::Index>(t) * nc + c);
        col = raw.col(j);
        for (std::size_t k = 0; k < options_.protected_features.size(); ++k)
          col(options_.protected_features[k]) = combos_[combo](static_cast<Eigen::Index>(k));
        // The twin's proxies follow its protected values; a twin who cannot exist is no comparison.
        if (!constraints.empty()) {
          constraints.derive(col);
          if (!constraints.satisfied(col)) no_twin.insert(static_cast<Eigen::Index>(t) * nc + c);
        }
      }
    }
    std::vector<int> labels;
    oracle_.labels(eval, labels);
    if (labels.size() != static_cast<std::size_t>(eval.cols()))
      throw InternalError(fmt::format("{}: {} labels for {} rows", oracle_.name(), labels.size(), eval.cols()));
    for (std::size_t t = 0; t < tests.size(); ++t) {
      const int phase = phases.at(static_cast<std::size_t>(tests[t]));
      TestPhase& ph = result_.phases.at(static_cast<std::size_t>(phase));
      const Eigen::Index base = static_cast<Eigen::Index>(t) * nc;
      const Eigen::Index self = one_pair_ ? base : base + static_cast<Eigen::Index>(own[t]);
      const int label_x = labels[static_cast<std::size_t>(self)];
      std::int8_t v = 0;
      for (Eigen::Index c = base; c < base + nc && v == 0; ++c) {
        const int l = labels[static_cast<std::size_t>(c)];
        if (l != label_x && !no_twin.contains(c)) report(eval, self, c, label_x, l, phase, v);
      }
      known_[static_cast<std::size_t>(id[static_cast<std::size_t>(tests[t])])] = v;
      ++result_.generated;
      ++ph.generated;
      if (v == 1) {
        ++result_.discriminatory;
        ++ph.discriminatory;
      }
    }
  }
  for (Eigen::Index j = 0; j < n; ++j) {
    const std::int64_t k = id[static_cast<std::size_t>(j)];
    if (k >= 0) verdict[static_cast<std::size_t>(j)] = known_[static_cast<std::size_t>(k)];
    if (invalid[static_cast<std::size_t>(j)]) verdict[static_cast<std::size_t>(j)] = 0;  // no one to test
  }
  // The whole call per new test (labels, and the replay of every discriminatory pair), the larger
  // of the last two estimates: the next batch is cut to what the time left affords.
  if (!tests.empty()) {
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    const double per_test = took / static_cast<double>(tests.size());
    seconds_per_test_ = seconds_per_test_ > 0.0 ? std::max(per_test, 0.5 * (seconds_per_test_ + per_test)) : per_test;
  }
  progress();
}

void TestLedger::report(const Eigen::MatrixXd& eval, Eigen::Index row_x, Eigen::Index row_other, int label_x,
                        int label_other, int phase, std::int8_t& verdict) {
  DiscriminatoryPair p;
  p.x = eval.col(row_x);
  p.x_prime = eval.col(row_other);
  p.label = label_x;
  p.label_prime = label_other;
  p.phase = phase;
  if (const Model* m = oracle_.model()) {
    // The batch evaluation is replayed one pair at a time on the original model: a batched
    // matrix product may round differently from the single-row one.
    if (!replayer_) replayer_ = std::make_unique<WitnessReplayer>(*m, schema_, options_.protected_features);
    const auto w = replayer_->replay(schema_.to_model(p.x), schema_.to_model(p.x_prime));
    if (!w) {
      ++result_.rejected;
      return;
    }
    p.label = w->label;
    p.label_prime = w->label_prime;
  }
  verdict = 1;
  if (options_.on_pair) options_.on_pair(p);
}

void TestLedger::progress() {
  if (!options_.on_progress) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_progress_ < std::chrono::milliseconds(200)) return;
  last_progress_ = now;
  options_.on_progress(
      TestProgress{result_.generated, result_.discriminatory, options_.budget, env_.elapsed_seconds()});
}

// ---------------------------------------------------------------------------------------------

Eigen::MatrixXd ordered_seeds(const Schema& schema, const TestOptions& options, Eigen::Index fallback,
                              std::uint64_t seed) {
  if (options.seeds == nullptr || options.seeds->cols() == 0) return Sampler(schema, seed).points(fallback);
  const Eigen::MatrixXd& data = *options.seeds;
  const Clustering c = kmeans(data, std::max(1, options.clusters), seed);
  const std::vector<int> order = round_robin(c);
  Eigen::MatrixXd out(data.rows(), static_cast<Eigen::Index>(order.size()));
  for (std::size_t i = 0; i < order.size(); ++i) out.col(static_cast<Eigen::Index>(i)) = data.col(order[i]);
  return out;
}

namespace {

// THEMIS: uniform random inputs; random pairs: the same, each compared with one other combination.
void run_random(TestLedger& ledger) {
  Sampler sampler(ledger.schema(), ledger.rng()());
  std::vector<std::int8_t> verdict;
  while (!ledger.done()) {
    const Eigen::Index n = std::min<std::int64_t>(8192, ledger.remaining());
    ledger.test(sampler.points(n), 0, verdict);
  }
}

std::vector<std::string> phase_names(TestMethod m) {
  switch (m) {
    case TestMethod::SymbGen: return {"seed", "directed", "undirected"};
    case TestMethod::Aequitas:
    case TestMethod::Adf: return {"global", "local"};
    case TestMethod::Themis:
    case TestMethod::RandomPairs: return {"random"};
  }
  return {};
}

}  // namespace

const std::vector<TestOption>& test_options() {
  using S = TestOptions;
  static const std::vector<TestOption> options = {
      choice_setting("method", kTestMethods, &S::method, "how tests are generated"),
      count_setting("budget", 0, &S::budget,
                    "unique tests to generate; 0 = until --time-limit (the default with --time-limit)"),
      count_setting("clusters", 1, &S::clusters, "symbgen, adf: k-means clusters of the seeds"),
      real_setting("t1", 0, 1, &S::t1, "symbgen: directed search toggles predicates of confidence below this"),
      real_setting("t2", 0, 1, &S::t2, "symbgen: undirected search toggles predicates of confidence above this"),
      count_setting("samples", 10, &S::explanation_samples, "symbgen: perturbations per local explanation (LIME's)"),
      count_setting("depth", 1, &S::tree_depth, "symbgen: depth of the local decision tree"),
  };
  return options;
}

TestResult run_test(LabelOracle& oracle, const Schema& schema, const TestOptions& options, Env& env) {
  if (options.protected_features.empty()) throw InputError(schema.source(), "", "no protected feature to test");
  if (options.budget < 0) throw InputError(fmt::format("--budget: expected a count >= 0, got {}", options.budget));
  if (options.budget == 0 && env.options.get_real("time-limit") <= 0)
    throw InputError("--budget 0 (no limit) needs a --time-limit");
  if (options.seeds != nullptr && options.seeds->rows() != schema.size()) {
    throw InputError(
        schema.source(), "",
        fmt::format("seed rows have {} values, the schema {} features", options.seeds->rows(), schema.size()));
  }
  check_settings(test_options(), options);
  TestResult result;
  result.method = options.method;
  for (const std::string& name : phase_names(options.method)) result.phases.push_back(TestPhase{name, 0, 0});
  const std::int64_t rows_before = oracle.rows();
  const auto start = std::chrono::steady_clock::now();
  TestLedger ledger(oracle, schema, options, env, result);
  oracle.set_stop([&env] { return env.expired(); });
  struct ClearStop {
    LabelOracle& oracle;
    ~ClearStop() { oracle.set_stop(nullptr); }
  } clear_stop{oracle};
  try {
    switch (options.method) {
      case TestMethod::Themis: run_random(ledger); break;
      case TestMethod::RandomPairs:
        ledger.compare_one_combination();
        run_random(ledger);
        break;
      case TestMethod::SymbGen: run_symbgen(ledger, options); break;
      case TestMethod::Aequitas: run_aequitas(ledger, options); break;
      case TestMethod::Adf: run_adf(ledger, options); break;
    }
    oracle.finish();
  } catch (const OracleTimeLimit&) {
    ledger.stop(env.stop_reason());  // the batch in flight is lost; every counted test is complete
  } catch (const std::bad_alloc&) {
    ledger.stop("out of memory");  // as above: what was counted before stands
  }
  (void)ledger.done();  // records why it stopped
  result.queries = oracle.rows() - rows_before;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  env.stats.set("test.generated", static_cast<double>(result.generated));
  env.stats.set("test.discriminatory", static_cast<double>(result.discriminatory));
  env.stats.set("test.queries", static_cast<double>(result.queries));
  env.stats.set("test.duplicates", static_cast<double>(result.duplicates));
  env.stats.set("test.rejected", static_cast<double>(result.rejected));
  env.stats.set("test.seconds", result.seconds);
  return result;
}

}  // namespace witness
