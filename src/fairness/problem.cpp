#include "fairness/problem.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "fairness/verdict.h"

namespace witness {

std::vector<Eigen::VectorXd> protected_combinations(const Schema& schema, const std::vector<int>& protected_features) {
  std::vector<Eigen::VectorXd> out{Eigen::VectorXd(0)};
  for (int f : protected_features) {
    const Feature& feat = schema.feature(f);
    if (!feat.integral()) throw InputError(schema.source(), feat.name, "a protected feature must not be real");
    std::vector<Eigen::VectorXd> next;
    for (const Eigen::VectorXd& prefix : out) {
      for (long long k = 0; k <= static_cast<long long>(feat.max - feat.min); ++k) {
        const double v = feat.min + static_cast<double>(k);
        Eigen::VectorXd c(prefix.size() + 1);
        c << prefix, v;
        next.push_back(c);
        if (next.size() > 65536)
          throw InputError(schema.source(), feat.name, "more than 65536 combinations of protected values");
      }
    }
    out = std::move(next);
  }
  if (out.size() < 2) throw InputError(schema.source(), "", "the protected features take a single value in the domain");
  return out;
}

Eigen::MatrixXd with_protected(Eigen::MatrixXd raw, const std::vector<int>& protected_features,
                               const Eigen::VectorXd& combo) {
  for (std::size_t k = 0; k < protected_features.size(); ++k)
    raw.row(protected_features[k]).setConstant(combo(static_cast<Eigen::Index>(k)));
  return raw;
}

namespace {

std::vector<int> named_indices(const Schema& schema, const std::vector<std::string>& names) {
  if (names.empty())
    throw InputError(schema.source(), "", "no protected attribute: give --protected or set `protected`");
  return schema.protected_indices(names);
}

}  // namespace

FairnessProblem::FairnessProblem(const Model& model, const Schema& schema,
                                 const std::vector<std::string>& protected_names)
    : FairnessProblem(model, schema,
                      named_indices(schema, protected_names.empty() ? schema.protected_names() : protected_names),
                      ByIndex{}) {}

FairnessProblem FairnessProblem::of_features(const Model& model, const Schema& schema,
                                             const std::vector<int>& protected_features) {
  if (protected_features.empty()) throw InputError(schema.source(), "", "no protected feature given");
  for (int f : protected_features)
    if (f < 0 || f >= schema.size())
      throw InputError(schema.source(), "", fmt::format("protected feature index {} is out of range", f));
  std::vector<int> sorted = protected_features;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw InputError(schema.source(), "", "a protected feature is given twice");
  return {model, schema, protected_features, ByIndex{}};
}

FairnessProblem::FairnessProblem(const Model& model, const Schema& schema, std::vector<int> named, ByIndex /*tag*/)
    : model_(&model), schema_(&schema), named_(std::move(named)) {
  for (int f : named_) names_.push_back(schema.feature(f).name);
  protected_ = named_;
  mask_ = proxy_mask(schema, named_);
  for (int f = 0; f < schema.size(); ++f) {
    if (!mask_[static_cast<std::size_t>(f)] || std::find(named_.begin(), named_.end(), f) != named_.end()) continue;
    if (!schema.feature(f).integral())
      throw InputError(schema.source(), "",
                       fmt::format("'{}' is derived from a protected feature, so it changes with it, but it is "
                                   "real-valued: make it integral or categorical",
                                   schema.feature(f).name));
    protected_.push_back(f);
  }
}

std::vector<Eigen::VectorXd> FairnessProblem::combinations() const {
  return protected_combinations(*schema_, protected_);
}

std::vector<Eigen::VectorXd> FairnessProblem::named_combinations() const {
  return protected_combinations(*schema_, named_);
}

Twins FairnessProblem::twins() const { return find_twins(*schema_, protected_); }

std::string FairnessProblem::vacuity_reason(Twins twins) const {
  return witness::vacuity_reason(twins, *schema_, protected_);
}

}  // namespace witness
