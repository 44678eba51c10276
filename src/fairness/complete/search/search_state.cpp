#include "fairness/complete/search/search_state.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <tuple>

#include "core/error.h"
#include "core/file.h"
#include "core/json_document.h"
#include "core/sha256.h"
#include "domain/digest.h"
#include "fairness/complete/search/state_checks.h"
#include "fairness/complete/search/state_reader.h"
#include "fairness/problem.h"
#include "model/digest.h"
#include "model/evaluator.h"

namespace witness {

using json = nlohmann::json;

namespace {

constexpr int kStateVersion = 2;   // 2: content hashes, evicted measure, accounts checked
constexpr int kMaxJsonDepth = 16;  // a state nests five levels
constexpr std::uintmax_t kMaxStateBytes = std::uintmax_t{8} << 30;

// Running sums of what counting found in open regions can dip below 0 by rounding: saved as 0.
std::string hex(long double v) { return fmt::format("{:a}", v); }

}  // namespace

const std::string& SearchQuestion::model_hash() const {
  if (model_hash_.empty()) model_hash_ = model_digest(model);
  return model_hash_;
}

const std::string& SearchQuestion::schema_hash() const {
  if (schema_hash_.empty()) schema_hash_ = schema_digest(schema);
  return schema_hash_;
}

std::string SearchQuestion::fingerprint() const {
  Sha256 h;
  h.add_field("witness search question v2");
  h.add_field(model_hash());
  h.add_field(schema_hash());
  h.add_integer(static_cast<std::int64_t>(protected_features.size()));
  for (int p : protected_features) h.add_integer(p);
  h.add_integer(quantify ? 1 : 0);
  return h.hex();
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
                 "{{\"format\":\"witness search state\",\"version\":{},\"question\":\"{}\",\"model\":\"{}\","
                 "\"schema\":\"{}\",\"part\":{},\"parts\":{},\n",
                 kStateVersion, question.fingerprint(), question.model_hash(), question.schema_hash(), state.part,
                 state.parts);
  if (!state.header.empty()) fmt::format_to(it, "\"header\":{},\n", state.header);
  fmt::format_to(
      it,
      "\"tally\":{{\"certified\":\"{}\",\"falsified\":\"{}\",\"open_fair\":\"{}\",\"open_unfair\":\"{}\","
      "\"invalid\":\"{}\",\"scope\":\"{}\",\"inexact\":{},\"leaves\":{},\"evicted\":{},\"evicted_measure\":\"{}\","
      "\"evicted_fair\":\"{}\",\"evicted_unfair\":\"{}\",\"slivers\":{},\"regions\":{},"
      "\"rejected\":{},\"checked\":{},\"enumerated\":{},\"counted\":{},\"fine_counted\":{},"
      "\"exact_only\":{}}},\n",
      hex(t.certified), hex(t.falsified), hex(std::max(0.0L, t.open_fair)), hex(std::max(0.0L, t.open_unfair)),
      hex(t.invalid), hex(t.scope), t.inexact, t.leaves, t.evicted, hex(t.evicted_measure), hex(t.evicted_fair),
      hex(t.evicted_unfair), t.slivers, t.counters.regions, t.counters.rejected, t.counters.checked,
      t.counters.enumerated, t.counters.counted, t.counters.fine_counted, t.counters.exact_only);
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

SearchState parse_search_state_fields(const std::string& text, const std::string& source,
                                      const SearchQuestion& question) {
  json j;
  try {
    j = parse_json_document(text, source, kMaxJsonDepth);
  } catch (const InputError& e) {
    throw InputError(source, "", fmt::format("not a witness search state ({})", e.what()));
  }
  const StateReader in(source, question);
  if (!j.is_object() || j.value("format", json()) != "witness search state")
    in.fail("format", "not a witness search state");
  if (j.value("version", json()) != kStateVersion)
    in.fail("version", fmt::format("expected {} (a state saved by an earlier witness cannot be continued: run "
                                   "the search again)",
                                   kStateVersion));
  // Which of the question's parts differs, by content: the model, the schema (bounds, rules).
  for (const auto& [name, mine, what] :
       {std::tuple<const char*, std::string, const char*>{"model", question.model_hash(),
                                                          "another model (or this file changed)"},
        {"schema", question.schema_hash(),
         "another schema: other features, bounds, box or rules (or this file changed)"}}) {
    const json& saved = in.field(j, name, "state");
    if (!saved.is_string() || saved.get<std::string>() != mine)
      in.fail(name, fmt::format("saved for {}: sha256 {} there, {} here", what,
                                saved.is_string() ? saved.get<std::string>().substr(0, 12) : "?", mine.substr(0, 12)));
  }
  const json& fp = in.field(j, "question", "state");
  if (!fp.is_string() || fp.get<std::string>() != question.fingerprint())
    in.fail("question", "saved for another question: other protected features, or another mode (--quantify)");
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
  tally.evicted_measure = in.amount(t, "evicted_measure", "tally");
  tally.evicted_fair = in.amount(t, "evicted_fair", "tally");
  tally.evicted_unfair = in.amount(t, "evicted_unfair", "tally");
  tally.slivers = in.count(t, "slivers", "tally");
  tally.counters.regions = in.count(t, "regions", "tally");
  tally.counters.rejected = in.count(t, "rejected", "tally");
  tally.counters.checked = in.count(t, "checked", "tally");
  tally.counters.enumerated = in.count(t, "enumerated", "tally");
  tally.counters.counted = in.count(t, "counted", "tally");
  tally.counters.fine_counted = in.count(t, "fine_counted", "tally");
  tally.counters.exact_only = in.count(t, "exact_only", "tally");
  const long double domain = box_measure(question.schema, question.problem.protected_mask(), {}, {});
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
    std::optional<WitnessPair> w =
        replay_witness_raw(question.model, question.schema, question.protected_features, a, b);
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

SearchState parse_search_state(const std::string& text, const std::string& source, const SearchQuestion& question) {
  SearchState s = parse_search_state_fields(text, source, question);
  const std::string where = s.parts > 1 ? fmt::format("part {}", s.part) : "state";
  check_state_accounts(s, question, source, where);
  check_regions_disjoint(
      s.tally.left, question, [](std::size_t k) { return fmt::format("open[{}]", k); }, source);
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

SearchState join_search_states(std::vector<SearchState> states, const std::vector<std::string>& names,
                               const SearchQuestion& question, bool check_overlaps) {
  const std::string source = names.empty() ? "merge" : names.front();
  if (states.empty()) throw InputError(source, "", "no sub-problem results to merge");
  auto name = [&names](std::size_t k) { return k < names.size() ? names[k] : fmt::format("part {}", k); };
  const int parts = states.front().parts;
  std::map<int, std::size_t> seen;
  for (std::size_t k = 0; k < states.size(); ++k) {
    const SearchState& s = states[k];
    if (s.parts != parts)
      throw InputError(
          name(k), "",
          fmt::format("a part of a split into {}, {} one of {}: results of different splits", s.parts, name(0), parts));
    if (const auto [at, fresh] = seen.emplace(s.part, k); !fresh)
      throw InputError(name(k), "", fmt::format("part {} is given twice (also {})", s.part, name(at->second)));
  }
  if (static_cast<int>(seen.size()) != parts)
    throw InputError(source, "",
                     fmt::format("{} of {} parts given: every sub-problem's result is needed", seen.size(), parts));
  for (std::size_t k = 1; k < states.size(); ++k)
    if (states[k].header != states.front().header)
      throw InputError(name(k), "", fmt::format("a result of another split than {} (their headers differ)", name(0)));
  // Every part's accounts balance on their own (parse_search_state); together the parts' scopes
  // must make the domain, and their open regions must not overlap.
  const DomainMeasure domain = domain_measure(question);
  long double scopes = 0.0L;
  for (const SearchState& s : states) scopes += s.tally.scope > 0.0L || parts > 1 ? s.tally.scope : domain.points;
  if (!amounts_agree(scopes, domain.points, domain))
    throw InputError(source, "",
                     fmt::format("the parts' scopes add up to {:.17g} points, the domain holds {:.17g}: parts of "
                                 "different splits, or a changed file",
                                 scopes, domain.points));
  if (check_overlaps) {
    std::vector<SearchRegion> open;
    std::vector<std::pair<std::size_t, std::size_t>> owner;  // (state, index in it)
    for (std::size_t k = 0; k < states.size(); ++k)
      for (std::size_t i = 0; i < states[k].tally.left.size(); ++i) {
        open.push_back(states[k].tally.left[i]);
        owner.emplace_back(k, i);
      }
    check_regions_disjoint(
        open, question,
        [&](std::size_t r) { return fmt::format("{} open[{}]", name(owner[r].first), owner[r].second); }, source);
  }
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
    a.evicted_measure += b.evicted_measure, a.evicted_fair += b.evicted_fair, a.evicted_unfair += b.evicted_unfair;
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
