#include "fairness/problem.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "fairness/falsify.h"
#include "fairness/verdict.h"

namespace witness {

FairnessProblem::FairnessProblem(const Model& model, const Schema& schema,
                                 const std::vector<std::string>& protected_names)
    : model_(&model), schema_(&schema), names_(protected_names.empty() ? schema.protected_names() : protected_names) {
  if (names_.empty())
    throw InputError(schema.source(), "", "no protected attribute: give --protected or set `protected`");
  named_ = schema.protected_indices(names_);
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

Twins FairnessProblem::twins() const { return find_twins(*schema_, protected_); }

std::string FairnessProblem::vacuity_reason(Twins twins) const {
  return witness::vacuity_reason(twins, *schema_, protected_);
}

}  // namespace witness
