// Rows, labels and pairs as a person reads them: the pieces every formatter of results shares.
//
//   const witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   const witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   const Eigen::VectorXd raw = Eigen::VectorXd::Zero(schema.size());
//   nlohmann::json row = witness::named_row(schema, raw);          // {"age": 0, "sex": "Female", ...}
//   std::string label = witness::label_name(model, schema, 1);    // ">50K" (a class name) or "1"
//   witness::PairCsv csv("pairs.csv", schema, {schema.feature_index("sex")});
//   csv.write(raw, raw, label, label);
//   csv.close();                                                  // InputError if writing failed
//   std::string share = witness::percent(0.0123);                 // "1.23%"
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/file.h"
#include "domain/schema.h"
#include "model/model.h"

namespace witness {

// How many pairs a run keeps for its report.
inline constexpr std::size_t kReportPairs = 1000;

// Labels are written one way everywhere: the class name, from the model (a classifier's classes) or
// else the schema (label_classes; also when the model's names are only "0", "1", ...), or else the
// index. label_json gives the name as a JSON string, or the index as a number when there is none.
std::string label_name(const Model& model, int label);
std::string label_name(const Model& model, const Schema& schema, int label);
std::string label_name(const Schema& schema, int label);
nlohmann::json label_json(const Model& model, const Schema& schema, int label);

// A raw row as a JSON object: feature name -> category label, or integer, or real.
nlohmann::json named_row(const Schema& s, const Eigen::VectorXd& raw);
// The schema as the report shows it: source, features (name, kind, min, max, categories), protected.
nlohmann::json schema_json(const Schema& s);
std::vector<double> to_vector(const Eigen::VectorXd& v);

// A share of a whole in percent, with enough digits that small shares stay visible ("0.0012%").
std::string percent(double share);

// JSON text for people and files: two-space indent, bad UTF-8 bytes (names read from a corrupt
// file) replaced rather than thrown on.
std::string json_text(const nlohmann::json& doc);

// Witness / discriminatory pairs as CSV, one row per pair: x's raw values (category labels), then
// the protected values of x' (columns "<name>'"), then both labels (columns label, label').
class PairCsv {
 public:
  PairCsv(const std::string& path, const Schema& schema, const std::vector<int>& prot);
  void write(const Eigen::VectorXd& raw, const Eigen::VectorXd& raw_prime, const std::string& label,
             const std::string& label_prime);
  void close();  // throws InputError if writing failed; only then is the file there
  [[nodiscard]] std::int64_t rows() const { return rows_; }

 private:
  const Schema& schema_;
  std::vector<int> prot_;
  AtomicFile out_;  // complete or absent: a run that fails (a full disk) leaves no partial CSV
  std::int64_t rows_ = 0;
};

// The same CSV text in memory (witness serve's pairs download).
class PairTable {
 public:
  PairTable(const Schema& schema, const std::vector<int>& prot);
  void add(const Eigen::VectorXd& raw, const Eigen::VectorXd& raw_prime, const std::string& label,
           const std::string& label_prime);
  [[nodiscard]] const std::string& text() const { return text_; }

 private:
  const Schema& schema_;
  std::vector<int> prot_;
  std::string text_;
};

}  // namespace witness
