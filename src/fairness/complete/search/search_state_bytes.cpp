#include "fairness/complete/search/search_state_bytes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "fairness/complete/search/state_checks.h"
#include "fairness/complete/search/state_reader.h"

namespace witness {

namespace {

constexpr std::string_view kMagic = "witness search state bytes 1\n";

class ByteWriter {
 public:
  template <typename T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void put_row(const Eigen::VectorXd& v) {
    out_.append(reinterpret_cast<const char*>(v.data()), sizeof(double) * static_cast<std::size_t>(v.size()));
  }
  void put_text(std::string_view s) { out_.append(s); }
  std::string& text() { return out_; }

 private:
  std::string out_;
};

class ByteReader {
 public:
  ByteReader(std::string_view bytes, const StateReader& in) : bytes_(bytes), in_(in) {}
  template <typename T>
  T get(const char* what) {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    std::memcpy(&v, take(sizeof v, what), sizeof v);
    return v;
  }
  Eigen::VectorXd get_row(Eigen::Index n, const char* what) {
    Eigen::VectorXd v(n);
    std::memcpy(v.data(), take(sizeof(double) * static_cast<std::size_t>(n), what),
                sizeof(double) * static_cast<std::size_t>(n));
    return v;
  }
  std::string_view get_text(std::size_t n, const char* what) { return {take(n, what), n}; }
  [[nodiscard]] bool at_end() const { return at_ == bytes_.size(); }

 private:
  const char* take(std::size_t n, const char* what) {
    if (bytes_.size() - at_ < n) in_.fail(what, "the message ends early");
    const char* p = bytes_.data() + at_;
    at_ += n;
    return p;
  }
  std::string_view bytes_;
  std::size_t at_ = 0;
  const StateReader& in_;
};

}  // namespace

std::string search_state_bytes(SearchState state, const SearchQuestion& question) {
  const std::vector<SearchRegion> open = std::exchange(state.tally.left, {});
  const std::string rest = search_state_text(state, question);
  ByteWriter w;
  std::size_t size = kMagic.size() + 2 * sizeof(std::uint64_t) + rest.size();
  for (const SearchRegion& r : open)
    size += 128 + sizeof(double) * static_cast<std::size_t>(r.lo.size()) * (2 + r.known.size()) +
            sizeof(int) * r.open.size();
  w.text().reserve(size);
  w.put_text(kMagic);
  w.put(static_cast<std::uint64_t>(rest.size()));
  w.put_text(rest);
  w.put(static_cast<std::uint64_t>(open.size()));
  for (const SearchRegion& r : open) {
    w.put_row(r.lo);
    w.put_row(r.hi);
    w.put(static_cast<std::int32_t>(r.depth));
    w.put(static_cast<std::int32_t>(r.split));
    w.put(r.key);
    w.put(static_cast<std::uint8_t>(r.recount ? 1 : 0));
    w.put(r.fair);
    w.put(r.unfair);
    w.put(static_cast<std::uint32_t>(r.open.size()));
    for (const int p : r.open) w.put(static_cast<std::int32_t>(p));
    w.put(static_cast<std::uint32_t>(r.known.size()));
    for (const Eigen::VectorXd& k : r.known) w.put_row(k);
  }
  return std::move(w.text());
}

SearchState parse_search_state_bytes(std::string_view bytes, const std::string& source,
                                     const SearchQuestion& question) {
  const StateReader in(source, question);
  ByteReader b(bytes, in);
  if (bytes.substr(0, kMagic.size()) != kMagic) in.fail("format", "not a witness search state message");
  (void)b.get_text(kMagic.size(), "format");
  const auto text_size = b.get<std::uint64_t>("state");
  if (text_size > bytes.size()) in.fail("state", "the message ends early");
  SearchState s = parse_search_state_fields(std::string(b.get_text(text_size, "state")), source, question);
  if (!s.tally.left.empty()) in.fail("open", "regions in both parts of the message");
  const auto regions = b.get<std::uint64_t>("open");
  if (regions > StateReader::kMaxRegions) in.fail("open", fmt::format("{} regions: more than a state holds", regions));
  const Eigen::Index n = question.schema.size();
  const std::size_t least_region = 2 * sizeof(double) * static_cast<std::size_t>(n) + 48;
  s.tally.left.reserve(std::min<std::size_t>(regions, bytes.size() / least_region));
  for (std::uint64_t k = 0; k < regions; ++k) {
    SearchRegion r;
    r.lo = b.get_row(n, "open: lo");
    r.hi = b.get_row(n, "open: hi");
    r.depth = b.get<std::int32_t>("open: depth");
    r.split = b.get<std::int32_t>("open: split");
    r.key = b.get<double>("open: key");
    r.recount = b.get<std::uint8_t>("open: recount") != 0;
    r.fair = b.get<long double>("open: fair");
    r.unfair = b.get<long double>("open: unfair");
    // Counts too large run out of bytes; checked_region checks what was read.
    const auto pairs = b.get<std::uint32_t>("open: pairs");
    for (std::uint32_t i = 0; i < pairs; ++i) r.open.push_back(b.get<std::int32_t>("open: pairs"));
    const auto known = b.get<std::uint32_t>("open: known");
    for (std::uint32_t i = 0; i < known; ++i) r.known.push_back(b.get_row(n, "open: known"));
    s.tally.left.push_back(in.checked_region(std::move(r), fmt::format("open[{}]", k)));
  }
  if (!b.at_end()) in.fail("open", "bytes after the last region");
  check_state_accounts(s, question, source, s.parts > 1 ? fmt::format("part {}", s.part) : "state");
  return s;
}

}  // namespace witness
