#include "fairness/search_state.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "core/error.h"
#include "core/file.h"
#include "core/json_document.h"
#include "fairness/falsify.h"
#include "fairness/state_reader.h"
#include "model/evaluator.h"

namespace witness {

namespace {

using json = nlohmann::json;

constexpr int kStateVersion = 1;
constexpr int kMaxJsonDepth = 16;  // a state nests five levels
constexpr std::uintmax_t kMaxStateBytes = std::uintmax_t{8} << 30;

// Running sums of what counting found in open regions can dip below 0 by rounding: saved as 0.
std::string hex(long double v) { return fmt::format("{:a}", v); }

}  // namespace

std::string SearchQuestion::fingerprint() const {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
  auto mix = [&h](const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  };
  auto mix_double = [&mix](double v) { mix(&v, sizeof v); };
  for (int f = 0; f < schema.size(); ++f) {
    const Feature& feat = schema.feature(f);
    mix(feat.name.data(), feat.name.size());
    mix_double(feat.min);
    mix_double(feat.max);
    mix_double(static_cast<double>(feat.kind));
  }
  for (int p : protected_features) mix_double(p);
  mix_double(quantify ? 1.0 : 0.0);
  // The model's outputs at a few fixed points spread over the domain.
  Eigen::MatrixXd raw(schema.size(), 8);
  for (Eigen::Index k = 0; k < raw.cols(); ++k) {
    for (int f = 0; f < schema.size(); ++f) {
      const Feature& feat = schema.feature(f);
      const double t = static_cast<double>((k * 37 + static_cast<Eigen::Index>(f) * 11) % 8) / 7.0;
      raw(f, k) = feat.min + t * (feat.max - feat.min);
      if (feat.integral()) raw(f, k) = std::floor(raw(f, k));
    }
  }
  const Evaluation e = evaluate(model, schema.to_model_columns(raw), Precision::Float64);
  for (Eigen::Index i = 0; i < e.outputs.size(); ++i) mix_double(e.outputs.data()[i]);
  return fmt::format("{:016x}", h);
}

// Written with fmt rather than through a JSON document: a frontier of a million regions is saved
// in about a second instead of ten. Doubles print in their shortest exact form, long doubles in hex.
std::string search_state_text(const SearchState& state, const SearchQuestion& question) {
  const SearchTally& t = state.tally;
  fmt::memory_buffer out;
  auto it = std::back_inserter(out);
  auto row = [&it](const Eigen::VectorXd& v) {
    fmt::format_to(it, "[");
    for (Eigen::Index i = 0; i < v.size(); ++i) fmt::format_to(it, "{}{}", i > 0 ? "," : "", v(i));
    fmt::format_to(it, "]");
  };
  fmt::format_to(it,
                 "{{\"format\":\"witness search state\",\"version\":{},\"question\":\"{}\",\"part\":{},\"parts\":{},\n",
                 kStateVersion, question.fingerprint(), state.part, state.parts);
  if (!state.header.empty()) fmt::format_to(it, "\"header\":{},\n", state.header);
  fmt::format_to(
      it,
      "\"tally\":{{\"certified\":\"{}\",\"falsified\":\"{}\",\"open_fair\":\"{}\",\"open_unfair\":\"{}\","
      "\"invalid\":\"{}\",\"scope\":\"{}\",\"inexact\":{},\"leaves\":{},\"evicted\":{},\"slivers\":{},\"regions\":{},"
      "\"rejected\":{},\"checked\":{},\"enumerated\":{},\"counted\":{},\"fine_counted\":{},"
      "\"exact_only\":{}}},\n",
      hex(t.certified), hex(t.falsified), hex(std::max(0.0L, t.open_fair)), hex(std::max(0.0L, t.open_unfair)),
      hex(t.invalid), hex(t.scope), t.inexact, t.leaves, t.evicted, t.slivers, t.counters.regions, t.counters.rejected,
      t.counters.checked, t.counters.enumerated, t.counters.counted, t.counters.fine_counted, t.counters.exact_only);
  const EvictedSample& es = t.evicted_sample;
  fmt::format_to(it,
                 "\"evicted_sample\":{{\"measure\":\"{}\",\"fair\":\"{}\",\"unfair\":\"{}\",\"rate\":\"{}\","
                 "\"samples\":{},\"unfair_samples\":{}}},\n",
                 hex(es.measure), hex(es.fair), hex(es.unfair), hex(es.rate), es.samples, es.unfair_samples);
  fmt::format_to(it, "\"witnesses\":[");
  for (std::size_t k = 0; k < t.witnesses.size(); ++k) {
    fmt::format_to(it, "{}{{\"raw\":", k > 0 ? "," : "");
    row(t.witnesses[k].raw);
    fmt::format_to(it, ",\"raw_prime\":");
    row(t.witnesses[k].raw_prime);
    fmt::format_to(it, "}}");
  }
  fmt::format_to(it, "],\n\"reports\":[");
  for (std::size_t k = 0; k < state.answer.reports.size(); ++k) {
    const RegionReport& r = state.answer.reports[k];
    fmt::format_to(it, "{}{{\"lo\":", k > 0 ? ",\n" : "");
    row(r.lo);
    fmt::format_to(it, ",\"hi\":");
    row(r.hi);
    fmt::format_to(it, ",\"share\":{},\"falsified\":{},\"undecided\":{},\"points\":\"{}\",\"all\":{}}}", r.share,
                   r.falsified, r.undecided, hex(r.points), r.all_falsified);
  }
  fmt::format_to(it, "],\n\"mass\":[");
  for (std::size_t m = 0; m < state.answer.mass.size(); ++m) {
    fmt::format_to(it, "{}[", m > 0 ? "," : "");
    for (std::size_t b = 0; b < state.answer.mass[m].size(); ++b)
      fmt::format_to(it, "{}\"{}\"", b > 0 ? "," : "", hex(state.answer.mass[m][b]));
    fmt::format_to(it, "]");
  }
  fmt::format_to(it, "],\n\"open\":[");
  for (std::size_t k = 0; k < t.left.size(); ++k) {
    const SearchRegion& r = t.left[k];
    fmt::format_to(it, "{}{{\"lo\":", k > 0 ? ",\n" : "");
    row(r.lo);
    fmt::format_to(it, ",\"hi\":");
    row(r.hi);
    fmt::format_to(it, ",\"pairs\":[{}],\"known\":[", fmt::join(r.open, ","));
    for (std::size_t i = 0; i < r.known.size(); ++i) {
      fmt::format_to(it, "{}", i > 0 ? "," : "");
      row(r.known[i]);
    }
    fmt::format_to(it, "],\"depth\":{},\"split\":{},\"fair\":\"{}\",\"unfair\":\"{}\",\"key\":{},\"recount\":{}}}",
                   r.depth, r.split, hex(r.fair), hex(r.unfair), std::isfinite(r.key) ? r.key : 0.0, r.recount);
  }
  fmt::format_to(it, "]}}\n");
  return fmt::to_string(out);
}

SearchState parse_search_state(const std::string& text, const std::string& source, const SearchQuestion& question) {
  json j;
  try {
    j = parse_json_document(text, source, kMaxJsonDepth);
  } catch (const InputError& e) {
    throw InputError(source, "", fmt::format("not a witness search state ({})", e.what()));
  }
  const StateReader in(source, question);
  if (!j.is_object() || j.value("format", json()) != "witness search state")
    in.fail("format", "not a witness search state");
  if (j.value("version", json()) != kStateVersion) in.fail("version", fmt::format("expected {}", kStateVersion));
  const json& fp = in.field(j, "question", "state");
  if (!fp.is_string() || fp.get<std::string>() != question.fingerprint())
    in.fail("question", "saved for another model, schema, protected feature or mode (--quantify)");
  SearchState s;
  s.part = static_cast<int>(std::min<std::int64_t>(in.count(j, "part", "state"), 1 << 20));
  s.parts = static_cast<int>(std::min<std::int64_t>(in.count(j, "parts", "state"), 1 << 20));
  if (s.parts < 1 || s.part >= s.parts) in.fail("part", "expected 0 <= part < parts");
  if (const auto h = j.find("header"); h != j.end()) {
    if (!h->is_object()) in.fail("header", "expected an object");
    s.header = h->dump();
  }
  const json& t = in.field(j, "tally", "state");
  SearchTally& tally = s.tally;
  tally.certified = in.amount(t, "certified", "tally");
  tally.falsified = in.amount(t, "falsified", "tally");
  tally.open_fair = in.amount(t, "open_fair", "tally");
  tally.open_unfair = in.amount(t, "open_unfair", "tally");
  tally.invalid = in.amount(t, "invalid", "tally");
  tally.scope = in.amount(t, "scope", "tally");
  tally.inexact = in.flag(t, "inexact", "tally");
  tally.leaves = in.count(t, "leaves", "tally");
  tally.evicted = in.count(t, "evicted", "tally");
  tally.slivers = in.count(t, "slivers", "tally");
  tally.counters.regions = in.count(t, "regions", "tally");
  tally.counters.rejected = in.count(t, "rejected", "tally");
  tally.counters.checked = in.count(t, "checked", "tally");
  tally.counters.enumerated = in.count(t, "enumerated", "tally");
  tally.counters.counted = in.count(t, "counted", "tally");
  tally.counters.fine_counted = in.count(t, "fine_counted", "tally");
  tally.counters.exact_only = in.count(t, "exact_only", "tally");
  const long double domain =
      box_measure(question.schema, question.schema.feature_mask(question.protected_features), {}, {});
  if (tally.scope > domain * (1.0L + 1e-12L)) in.fail("tally.scope", "more points than the domain holds");
  if (tally.certified + tally.falsified + tally.invalid > (tally.scope > 0.0L ? tally.scope : domain) * (1.0L + 1e-12L))
    in.fail("tally", "more points closed than the domain holds");
  if (j.contains("evicted_sample")) {  // absent from states saved before the evicted were drawn from
    const json& e = j["evicted_sample"];
    EvictedSample& es = tally.evicted_sample;
    es.measure = in.amount(e, "measure", "evicted_sample");
    es.fair = in.amount(e, "fair", "evicted_sample");
    es.unfair = in.amount(e, "unfair", "evicted_sample");
    es.rate = in.amount(e, "rate", "evicted_sample");
    es.samples = in.count(e, "samples", "evicted_sample");
    es.unfair_samples = in.count(e, "unfair_samples", "evicted_sample");
    if (es.unfair_samples > es.samples) in.fail("evicted_sample", "more unfair samples than samples");
    if (es.fair + es.unfair > es.measure * (1.0L + 1e-12L) || es.measure > domain * (1.0L + 1e-12L))
      in.fail("evicted_sample", "more points than the domain holds");
  }
  const json& witnesses = in.field(j, "witnesses", "state");
  if (!witnesses.is_array() || witnesses.size() > 100000) in.fail("witnesses", "expected an array of pairs");
  for (std::size_t k = 0; k < witnesses.size(); ++k) {
    const std::string where = fmt::format("witnesses[{}]", k);
    const Eigen::VectorXd a = in.row(in.field(witnesses[k], "raw", where), where + ".raw");
    const Eigen::VectorXd b = in.row(in.field(witnesses[k], "raw_prime", where), where + ".raw_prime");
    std::optional<WitnessPair> w = replay_witness(question.model, question.schema, question.protected_features,
                                                  question.schema.to_model(a), question.schema.to_model(b));
    if (!w) in.fail(where, "does not replay as a witness on this model");
    tally.witnesses.push_back(std::move(*w));
  }
  const json& reports = in.field(j, "reports", "state");
  if (!reports.is_array() || reports.size() > StateReader::kMaxRegions)
    in.fail("reports", "expected an array of regions");
  for (std::size_t k = 0; k < reports.size(); ++k)
    s.answer.reports.push_back(in.report(reports[k], fmt::format("reports[{}]", k)));
  const json& mass = in.field(j, "mass", "state");
  if (!mass.is_array() || mass.size() > static_cast<std::size_t>(question.schema.size()))
    in.fail("mass", "expected one array of bins per feature");
  for (std::size_t m = 0; m < mass.size(); ++m) {
    if (!mass[m].is_array() || mass[m].size() > 64) in.fail(fmt::format("mass[{}]", m), "expected an array of bins");
    std::vector<long double> bins;
    for (std::size_t b = 0; b < mass[m].size(); ++b) {
      const json holder = {{"bin", mass[m][b]}};
      bins.push_back(in.amount(holder, "bin", fmt::format("mass[{}][{}]", m, b)));
    }
    s.answer.mass.push_back(std::move(bins));
  }
  const json& open = in.field(j, "open", "state");
  if (!open.is_array() || open.size() > StateReader::kMaxRegions) in.fail("open", "expected an array of regions");
  for (std::size_t k = 0; k < open.size(); ++k) tally.left.push_back(in.region(open[k], fmt::format("open[{}]", k)));
  return s;
}

SearchState read_search_state(const std::string& path, const SearchQuestion& question) {
  return parse_search_state(read_file(path, kMaxStateBytes), path, question);
}

void write_search_state(const std::string& path, const SearchState& state, const SearchQuestion& question) {
  write_file(path, search_state_text(state, question));
}

std::vector<SearchState> divide_search_state(SearchState state, int pieces, long double domain_points,
                                             bool closed_apart) {
  if (pieces < (closed_apart ? 2 : 1)) throw InternalError("divide_search_state: too few pieces");
  std::vector<SearchRegion> open = std::move(state.tally.left);
  std::stable_sort(open.begin(), open.end(),
                   [](const SearchRegion& a, const SearchRegion& b) { return a.measure > b.measure; });
  std::vector<SearchState> out(static_cast<std::size_t>(pieces));
  const long double scope = state.tally.scope > 0.0L ? state.tally.scope : domain_points;
  out[0] = std::move(state);
  out[0].tally.left.clear();
  const std::size_t first_open = closed_apart ? 1 : 0, dealt = out.size() - first_open;
  for (std::size_t k = 0; k < open.size(); ++k) {  // snake order: each piece about as large
    const std::size_t round = k / dealt, at = k % dealt;
    SearchTally& t = out[first_open + (round % 2 == 0 ? at : dealt - 1 - at)].tally;
    if (&t != &out[0].tally) {
      t.open_fair += open[k].fair;
      t.open_unfair += open[k].unfair;
      t.scope += open[k].measure;
    }
    t.left.push_back(std::move(open[k]));
  }
  // The first piece: the rest of the scope and of the open counts (evicted regions' included).
  SearchTally& first = out[0].tally;
  first.scope = scope;
  for (std::size_t k = 1; k < out.size(); ++k) {
    first.scope -= out[k].tally.scope;
    first.open_fair -= out[k].tally.open_fair;
    first.open_unfair -= out[k].tally.open_unfair;
  }
  for (std::size_t k = 0; k < out.size(); ++k) {
    out[k].part = static_cast<int>(k);
    out[k].parts = pieces;
    out[k].header = out[0].header;
    out[k].tally.interrupted = false;
  }
  return out;
}

SearchState join_search_states(std::vector<SearchState> states, const std::string& source) {
  if (states.empty()) throw InputError(source, "", "no sub-problem results to merge");
  const int parts = states.front().parts;
  std::set<int> seen;
  for (const SearchState& s : states) {
    if (s.parts != parts) throw InputError(source, "", "results of different splits (their part counts differ)");
    if (!seen.insert(s.part).second) throw InputError(source, "", fmt::format("part {} is given twice", s.part));
  }
  if (static_cast<int>(seen.size()) != parts)
    throw InputError(source, "",
                     fmt::format("{} of {} parts given: every sub-problem's result is needed", seen.size(), parts));
  for (const SearchState& s : states)
    if (s.header != states.front().header)
      throw InputError(source, "", "results of different sub-problem runs (their headers differ)");
  SearchState out = std::move(states.front());
  std::mt19937_64 rng(states.size());  // thins the evicted samples to one rate
  out.part = 0;
  out.parts = 1;
  for (std::size_t k = 1; k < states.size(); ++k) {
    SearchTally& a = out.tally;
    SearchTally& b = states[k].tally;
    a.certified += b.certified, a.falsified += b.falsified, a.open_fair += b.open_fair;
    a.open_unfair += b.open_unfair, a.invalid += b.invalid, a.scope += b.scope;
    a.inexact = a.inexact || b.inexact;
    a.interrupted = a.interrupted || b.interrupted;
    a.leaves += b.leaves, a.evicted += b.evicted, a.slivers += b.slivers;
    a.counters += b.counters;
    a.evicted_sample.merge(b.evicted_sample, rng);
    for (WitnessPair& w : b.witnesses) a.witnesses.push_back(std::move(w));
    for (SearchRegion& r : b.left) a.left.push_back(std::move(r));
    QuantifyAnswer::Parts& pa = out.answer;
    const QuantifyAnswer::Parts& pb = states[k].answer;
    pa.reports.insert(pa.reports.end(), pb.reports.begin(), pb.reports.end());
    if (pb.mass.empty()) continue;  // nothing falsified there
    if (pa.mass.empty()) pa.mass.assign(pb.mass.size(), {});
    for (std::size_t m = 0; m < pa.mass.size() && m < pb.mass.size(); ++m)
      if (pa.mass[m].empty()) pa.mass[m].assign(pb.mass[m].size(), 0.0L);
    if (pa.mass.size() != pb.mass.size()) throw InputError(source, "", "results of different questions");
    for (std::size_t m = 0; m < pa.mass.size(); ++m) {
      if (pa.mass[m].size() != pb.mass[m].size()) throw InputError(source, "", "results of different questions");
      for (std::size_t i = 0; i < pa.mass[m].size(); ++i) pa.mass[m][i] += pb.mass[m][i];
    }
  }
  out.tally.scope = 0.0L;  // every part of the split: the whole domain
  return out;
}

}  // namespace witness
