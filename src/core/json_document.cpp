#include "core/json_document.h"

#include <fmt/format.h>

namespace witness {

namespace {

// nlohmann's own DOM builder with a depth check; its callback parser instead copies values around
// at every closing brace (seconds on a 50 MB file).
class DepthBoundedSax : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
  using Base = nlohmann::detail::json_sax_dom_parser<nlohmann::json>;

 public:
  DepthBoundedSax(nlohmann::json& doc, int max_depth, const std::string& source)
      : Base(doc, true), max_depth_(max_depth), source_(source) {}
  bool start_object(std::size_t n) { return enter() && Base::start_object(n); }
  bool start_array(std::size_t n) { return enter() && Base::start_array(n); }
  bool end_object() { return --depth_, Base::end_object(); }
  bool end_array() { return --depth_, Base::end_array(); }

 private:
  bool enter() {
    if (++depth_ > max_depth_) throw InputError(source_, "", fmt::format("nested deeper than {} levels", max_depth_));
    return true;
  }
  int max_depth_;
  int depth_ = 0;
  const std::string& source_;
};

}  // namespace

nlohmann::json parse_json_document(std::string_view text, const std::string& source, int max_depth) {
  nlohmann::json doc;
  DepthBoundedSax sax(doc, max_depth, source);
  try {
    nlohmann::json::sax_parse(text, &sax);
  } catch (const nlohmann::json::exception& e) {
    const std::string what = e.what();
    const auto pos = what.find("parse error");
    throw InputError(source, "", fmt::format("not valid JSON: {}", pos == std::string::npos ? what : what.substr(pos)));
  }
  return doc;
}

std::string json_line(const nlohmann::json& doc) {
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace witness
