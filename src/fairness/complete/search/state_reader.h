// Reads a saved search state's fields and checks each against the question, every error naming
// the file and the field: shared by the JSON format of files and the binary one of MPI messages.
//
//   #include "core/file.h"
//   witness::Model model = witness::load_model("benchmarks/fairify/models/german/GC1.h5");
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   const witness::FairnessProblem problem(model, schema, {"age"});
//   witness::SearchQuestion q{problem, true};
//   witness::StateReader in("run.ckpt.json", q);
//   nlohmann::json j = nlohmann::json::parse(witness::read_file("run.ckpt.json", 1 << 30));
//   witness::SearchRegion r = in.region(j["open"][0], "open[0]");     // InputError: not a region of q
//   witness::SearchRegion same = in.checked_region(r, "open[0]");   // a region built field by field
//   in.fail("tally", "more points closed than the domain holds");   // throws InputError
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fairness/complete/answer/quantify_answer.h"
#include "fairness/complete/region.h"
#include "fairness/complete/search/search_state.h"

namespace witness {

class StateReader {
 public:
  static constexpr std::size_t kMaxRegions = std::size_t{1} << 24;  // open regions (and reports) in one state

  StateReader(std::string source, const SearchQuestion& q);

  [[noreturn]] void fail(const std::string& where, const std::string& what) const;

  const nlohmann::json& field(const nlohmann::json& j, const char* name, const std::string& where) const;
  [[nodiscard]] long double amount(const nlohmann::json& j, const char* name, const std::string& where) const;
  [[nodiscard]] std::int64_t count(const nlohmann::json& j, const char* name, const std::string& where) const;
  [[nodiscard]] double number(const nlohmann::json& j, const char* name, const std::string& where) const;
  [[nodiscard]] bool flag(const nlohmann::json& j, const char* name, const std::string& where) const;
  // A raw row of the schema: one value per feature, inside its range (integral where it must be).
  [[nodiscard]] Eigen::VectorXd row(const nlohmann::json& v, const std::string& where) const;
  [[nodiscard]] Eigen::VectorXd checked_row(Eigen::VectorXd row, const std::string& where) const;
  [[nodiscard]] SearchRegion region(const nlohmann::json& j, const std::string& where) const;
  // A region read field by field: its rows, pairs and counts checked, its measure set from its box.
  [[nodiscard]] SearchRegion checked_region(SearchRegion r, const std::string& where) const;
  [[nodiscard]] RegionReport report(const nlohmann::json& j, const std::string& where) const;
  [[nodiscard]] int combos() const { return combos_; }

 private:
  std::string source_;
  const SearchQuestion& q_;
  std::vector<bool> is_protected_;
  int combos_;
};

}  // namespace witness
