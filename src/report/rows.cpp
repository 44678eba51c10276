#include "report/rows.h"

#include <fmt/format.h>

#include <string>

#include "core/error.h"
#include "domain/dataset.h"

namespace witness {

std::string label_name(const Model& model, int label) {
  const auto& names = model.rule.class_labels;
  if (label >= 0 && static_cast<std::size_t>(label) < names.size()) return names[static_cast<std::size_t>(label)];
  return std::to_string(label);
}

namespace {

// Class names that only repeat the indices ("0", "1"): a schema's names say more.
bool index_names(const std::vector<std::string>& names) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] != std::to_string(i)) return false;
  }
  return true;
}

const std::vector<std::string>& class_names(const Model& model, const Schema& schema) {
  const auto& own = model.rule.class_labels;
  if (!own.empty() && !(index_names(own) && !schema.label_classes().empty())) return own;
  return schema.label_classes();
}

}  // namespace

std::string label_name(const Model& model, const Schema& schema, int label) {
  const auto& names = class_names(model, schema);
  if (label >= 0 && static_cast<std::size_t>(label) < names.size()) return names[static_cast<std::size_t>(label)];
  return std::to_string(label);
}

std::string label_name(const Schema& schema, int label) {
  const auto& names = schema.label_classes();
  if (label >= 0 && static_cast<std::size_t>(label) < names.size()) return names[static_cast<std::size_t>(label)];
  return std::to_string(label);
}

nlohmann::json label_json(const Model& model, const Schema& schema, int label) {
  const auto& names = class_names(model, schema);
  if (label >= 0 && static_cast<std::size_t>(label) < names.size()) return names[static_cast<std::size_t>(label)];
  return label;
}

nlohmann::json named_row(const Schema& s, const Eigen::VectorXd& raw) {
  nlohmann::json out = nlohmann::json::object();
  for (int i = 0; i < s.size(); ++i) {
    const Feature& f = s.feature(i);
    // Categories by label, numbers as JSON numbers.
    if (f.kind == FeatureKind::Categorical || f.kind == FeatureKind::Boolean) {
      out[f.name] = s.display(i, raw(i));
    } else if (f.integral()) {
      out[f.name] = static_cast<long long>(raw(i));
    } else {
      out[f.name] = raw(i);
    }
  }
  return out;
}

nlohmann::json schema_json(const Schema& s) {
  nlohmann::json features = nlohmann::json::array();
  for (int i = 0; i < s.size(); ++i) {
    const Feature& f = s.feature(i);
    nlohmann::json categories = nlohmann::json::array();
    if (f.kind == FeatureKind::Categorical || f.kind == FeatureKind::Boolean) {
      for (auto v = static_cast<long long>(f.min); v <= static_cast<long long>(f.max); ++v)
        categories.push_back(s.display(i, static_cast<double>(v)));
    }
    features.push_back(
        {{"name", f.name}, {"kind", kind_name(f.kind)}, {"min", f.min}, {"max", f.max}, {"categories", categories}});
  }
  return {{"source", s.source()}, {"features", features}, {"protected", s.protected_names()}};
}

std::vector<double> to_vector(const Eigen::VectorXd& v) { return {v.data(), v.data() + v.size()}; }

std::string percent(double share) {
  if (share == 0.0) return "0%";
  if (share == 1.0) return "100%";
  const double p = 100.0 * share;
  if (p < 0.01) return fmt::format("{:.2g}%", p);
  std::string text = fmt::format("{:.4g}", p);
  // A share below 1 never reads as 100% (99.99956% is not everything).
  for (int digits = 3; std::stod(text) >= 100.0 && digits < 17; ++digits) text = fmt::format("{:.{}f}", p, digits);
  return text + "%";
}

std::string json_text(const nlohmann::json& doc) {
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

std::string pair_header(const Schema& schema, const std::vector<int>& prot) {
  std::string header;
  for (int i = 0; i < schema.size(); ++i) header += (i > 0 ? "," : "") + csv_field(schema.feature(i).name);
  for (int f : prot) header += "," + csv_field(schema.feature(f).name + "'");
  return header + ",label,label'\n";
}

std::string pair_row(const Schema& schema, const std::vector<int>& prot, const Eigen::VectorXd& raw,
                     const Eigen::VectorXd& raw_prime, const std::string& label, const std::string& label_prime) {
  std::string row;
  for (int i = 0; i < schema.size(); ++i) row += (i > 0 ? "," : "") + csv_field(schema.display(i, raw[i]));
  for (int f : prot) row += "," + csv_field(schema.display(f, raw_prime[f]));
  return row + ',' + csv_field(label) + ',' + csv_field(label_prime) + '\n';
}

}  // namespace

PairCsv::PairCsv(const std::string& path, const Schema& schema, const std::vector<int>& prot)
    : schema_(schema), prot_(prot), out_(path) {
  out_.stream() << pair_header(schema, prot);
}

void PairCsv::write(const Eigen::VectorXd& raw, const Eigen::VectorXd& raw_prime, const std::string& label,
                    const std::string& label_prime) {
  out_.stream() << pair_row(schema_, prot_, raw, raw_prime, label, label_prime);
  ++rows_;
}

void PairCsv::close() { out_.commit(); }

PairTable::PairTable(const Schema& schema, const std::vector<int>& prot)
    : schema_(schema), prot_(prot), text_(pair_header(schema, prot)) {}

void PairTable::add(const Eigen::VectorXd& raw, const Eigen::VectorXd& raw_prime, const std::string& label,
                    const std::string& label_prime) {
  text_ += pair_row(schema_, prot_, raw, raw_prime, label, label_prime);
}

}  // namespace witness
