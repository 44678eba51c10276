#include "domain/sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"

namespace witness {

Sampler::Sampler(const Schema& schema, std::uint64_t seed) : source_(schema.source()), rng_(seed) {
  for (const Feature& f : schema.features()) {
    ranges_.push_back({f.integral(), f.min, f.max});
    names_.push_back(f.name);
  }
}

Eigen::VectorXd Sampler::point() {
  Eigen::VectorXd raw(static_cast<Eigen::Index>(ranges_.size()));
  point(raw);
  return raw;
}

void Sampler::point(Eigen::Ref<Eigen::VectorXd> raw) {
  if (raw.size() != static_cast<Eigen::Index>(ranges_.size())) {
    throw InputError(source_, "", fmt::format("a raw row has {} values, the schema {}", raw.size(), ranges_.size()));
  }
  for (std::size_t i = 0; i < ranges_.size(); ++i) {
    const Range& r = ranges_[i];
    double v = r.min;
    if (r.integral) {
      // Bounds are exact integers up to 2^53 (the schema checks), so int64 holds them.
      std::uniform_int_distribution<std::int64_t> d(static_cast<std::int64_t>(r.min), static_cast<std::int64_t>(r.max));
      v = static_cast<double>(d(rng_));
    } else if (r.max > r.min) {
      std::uniform_real_distribution<double> d(r.min, r.max);
      v = d(rng_);
    }
    raw[static_cast<Eigen::Index>(i)] = v;
  }
}

Eigen::MatrixXd Sampler::points(Eigen::Index n) {
  Eigen::MatrixXd out(static_cast<Eigen::Index>(ranges_.size()), n);
  for (Eigen::Index j = 0; j < n; ++j) point(out.col(j));
  return out;
}

void Sampler::change_protected(Eigen::Ref<Eigen::VectorXd> raw, const std::vector<int>& protected_indices) {
  if (raw.size() != static_cast<Eigen::Index>(ranges_.size())) {
    throw InputError(source_, "", fmt::format("a raw row has {} values, the schema {}", raw.size(), ranges_.size()));
  }
  // Combinations as mixed-radix numbers: draw uniformly among the others by skipping the current one.
  std::uint64_t total = 1;
  std::uint64_t current = 0;
  bool in_domain = true;
  for (std::size_t k = 0; k < protected_indices.size(); ++k) {
    const int idx = protected_indices[k];
    if (idx < 0 || static_cast<std::size_t>(idx) >= ranges_.size()) {
      throw InputError(source_, "", fmt::format("protected index {} is not a feature index", idx));
    }
    if (std::find(protected_indices.begin(), protected_indices.begin() + static_cast<std::ptrdiff_t>(k), idx) !=
        protected_indices.begin() + static_cast<std::ptrdiff_t>(k)) {
      throw InputError(source_, "",
                       fmt::format("protected feature '{}' is listed twice", names_[static_cast<std::size_t>(idx)]));
    }
    const Range& r = ranges_[static_cast<std::size_t>(idx)];
    const std::string& name = names_[static_cast<std::size_t>(idx)];
    if (!r.integral) {
      throw InputError(source_, fmt::format("feature '{}'", name), "a protected feature must not be real");
    }
    const auto count = static_cast<std::uint64_t>(r.max - r.min) + 1;
    if (total > std::numeric_limits<std::uint64_t>::max() / count) {
      throw InputError(source_, "", "too many protected combinations to enumerate");
    }
    const double v = raw[idx];
    if (!(v >= r.min && v <= r.max && std::floor(v) == v)) in_domain = false;
    current = in_domain ? current * count + static_cast<std::uint64_t>(v - r.min) : 0;
    total *= count;
  }
  if (protected_indices.empty()) throw InputError(source_, "", "no protected features to change");
  if (in_domain && total < 2) {
    throw InputError(source_, "", "the protected features have a single value combination: nothing to change to");
  }
  std::uint64_t pick = 0;
  if (in_domain) {
    pick = std::uniform_int_distribution<std::uint64_t>(0, total - 2)(rng_);
    if (pick >= current) ++pick;
  } else {
    pick = std::uniform_int_distribution<std::uint64_t>(0, total - 1)(rng_);
  }
  // Decode the last protected feature first: it is the least significant digit.
  for (auto it = protected_indices.rbegin(); it != protected_indices.rend(); ++it) {
    const Range& r = ranges_[static_cast<std::size_t>(*it)];
    const auto count = static_cast<std::uint64_t>(r.max - r.min) + 1;
    raw[*it] = r.min + static_cast<double>(pick % count);
    pick /= count;
  }
}

}  // namespace witness
