#include "fairness/complete/network/exact_network.h"

#include <cmath>

#include "fairness/complete/region.h"

namespace witness {

double norm_error(const Feature& feat, double rlo, double rhi) {
  if (feat.one_hot || feat.norm.form == Normalisation::Form::None) return 0.0;
  const double a = feat.norm.to_model(rlo), b = feat.norm.to_model(rhi);
  const double centred = std::abs(rlo) + std::abs(rhi) + std::abs(feat.norm.a);
  const double scale =
      std::abs(feat.norm.a) + std::abs(feat.norm.b) +
      (feat.norm.form == Normalisation::Form::MeanStd && feat.norm.b != 0.0 ? centred / std::abs(feat.norm.b)
       : feat.norm.form == Normalisation::Form::CenterScale                 ? centred * std::abs(feat.norm.b)
                                                                            : std::abs(rlo) + std::abs(rhi));
  return 16.0 * kUnitRoundoff * (std::abs(a) + std::abs(b) + scale) + 0x1p-1000;
}

Rational ExactNetwork::logit(const Eigen::VectorXd& raw) const {
  std::call_once(once_, [this] {
    for (const auto& layer : net_.layers) {
      std::vector<std::vector<Rational>> w(static_cast<std::size_t>(layer.weights.rows()));
      std::vector<Rational> b;
      for (Eigen::Index r = 0; r < layer.weights.rows(); ++r) {
        for (Eigen::Index c = 0; c < layer.weights.cols(); ++c)
          w[static_cast<std::size_t>(r)].push_back(Rational::from_double(layer.weights(r, c)));
        b.push_back(Rational::from_double(layer.bias(r)));
      }
      w_.push_back(std::move(w));
      b_.push_back(std::move(b));
    }
  });
  std::vector<Rational> a(static_cast<std::size_t>(schema_.model_width()));
  for (int f = 0; f < schema_.size(); ++f) {
    const Feature& feat = schema_.feature(f);
    const Rational v = Rational::from_double(raw(f));
    if (feat.one_hot) {
      for (int k = 0; k < feat.model_width; ++k)
        a[static_cast<std::size_t>(feat.model_offset) + static_cast<std::size_t>(k)] = Rational(k == raw(f) ? 1 : 0);
      continue;
    }
    Rational x = v;
    if (feat.norm.form == Normalisation::Form::ScaleOffset) {
      x = v * Rational::from_double(feat.norm.a) + Rational::from_double(feat.norm.b);
    } else if (feat.norm.form == Normalisation::Form::MeanStd) {
      x = (v - Rational::from_double(feat.norm.a)) / Rational::from_double(feat.norm.b);
    } else if (feat.norm.form == Normalisation::Form::CenterScale) {
      x = (v - Rational::from_double(feat.norm.a)) * Rational::from_double(feat.norm.b);
    }
    a[static_cast<std::size_t>(feat.model_offset)] = x;
  }
  for (std::size_t k = 0; k < w_.size(); ++k) {
    if (stop_ != nullptr && stop_->load()) throw Interrupted{};
    std::vector<Rational> h = b_[k];
    for (std::size_t r = 0; r < h.size(); ++r)
      for (std::size_t c = 0; c < a.size(); ++c)
        if (w_[k][r][c].sign() != 0 && a[c].sign() != 0) h[r] += w_[k][r][c] * a[c];
    if (k + 1 < w_.size())
      for (auto& v : h)
        if (v.sign() < 0) v = Rational(0);
    a = std::move(h);
  }
  return a[0];
}

// The exact label at raw, given the double logit z and a bound on its rounding error.
int ExactNetwork::label(const Eigen::VectorXd& raw, double z, double error) const {
  if (z - error > net_.threshold) return 1;
  if (z + error <= net_.threshold) return 0;
  ++exact_points_;
  return logit(raw) > Rational::from_double(net_.threshold) ? 1 : 0;
}

}  // namespace witness
