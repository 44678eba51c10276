// The fairness question, built once and handed to every engine and every data-row function: the
// model, the schema's domain, the protected features the user named and the proxies that follow
// them (a feature derived from a protected one changes with it in the twin).
//
//   const witness::Model model = witness::load_model("benchmarks/fairify/models/adult/AC1.h5");
//   const witness::Schema schema = witness::load_schema("benchmarks/fairify/adult.toml");
//   const witness::FairnessProblem problem(model, schema, {"sex"});
//   for (const Eigen::VectorXd& c : problem.combinations()) std::cout << c.transpose() << "\n";
//   const witness::Twins t = problem.twins();  // Exist, NoPerson, NoTwins or Unknown
//   if (t == witness::Twins::NoTwins) std::cout << problem.vacuity_reason(t) << "\n";
#pragma once

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "domain/schema.h"
#include "fairness/twins.h"
#include "model/model.h"

namespace witness {

// Every in-domain combination of raw values of the protected features (in their order), e.g.
// {0}, {1} for one boolean. InputError when a protected feature is real, when there are more than
// 65536 combinations, or fewer than two.
std::vector<Eigen::VectorXd> protected_combinations(const Schema& schema, const std::vector<int>& protected_features);

// Raw columns ([features][n]) with the protected features set to one combination (in the order of
// protected_features).
Eigen::MatrixXd with_protected(Eigen::MatrixXd raw, const std::vector<int>& protected_features,
                               const Eigen::VectorXd& combo);

class FairnessProblem {
 public:
  // `protected_names` empty: the schema's `protected` list. InputError (naming the schema) for an
  // unknown feature, when no feature is protected, or for a real-valued proxy.
  FairnessProblem(const Model& model, const Schema& schema, const std::vector<std::string>& protected_names);
  // The same by schema feature indices (the named features; their proxies are added as above).
  [[nodiscard]] static FairnessProblem of_features(const Model& model, const Schema& schema,
                                                   const std::vector<int>& protected_features);

  [[nodiscard]] const Model& model() const { return *model_; }
  [[nodiscard]] const Schema& schema() const { return *schema_; }
  [[nodiscard]] const std::vector<std::string>& protected_names() const { return names_; }
  // The features the engines vary: the named ones, then their integral proxies. Varying a proxy
  // independently makes more twins than there are, so a proof stays sound; replay derives it from
  // its source before a witness is reported.
  [[nodiscard]] const std::vector<int>& protected_features() const { return protected_; }
  // The named features only: a data row's own group, whose proxies are derived from it.
  [[nodiscard]] const std::vector<int>& named_features() const { return named_; }
  // Per feature: varied in the twin (named, or a proxy of a named one).
  [[nodiscard]] const std::vector<bool>& protected_mask() const { return mask_; }
  // Every combination of the varied features' values (InputError beyond 65536, or for a real one).
  [[nodiscard]] std::vector<Eigen::VectorXd> combinations() const;
  // Every combination of the named features' values: the groups a data row belongs to.
  [[nodiscard]] std::vector<Eigen::VectorXd> named_combinations() const;
  // Whether two people who differ only in the protected features can exist at all, and if not,
  // why not (in words).
  [[nodiscard]] Twins twins() const;
  [[nodiscard]] std::string vacuity_reason(Twins twins) const;

 private:
  struct ByIndex {};  // keeps `{}` (the schema's list) unambiguous
  FairnessProblem(const Model& model, const Schema& schema, std::vector<int> named, ByIndex /*tag*/);

  const Model* model_;
  const Schema* schema_;
  std::vector<std::string> names_;
  std::vector<int> named_;
  std::vector<int> protected_;
  std::vector<bool> mask_;
};

}  // namespace witness
