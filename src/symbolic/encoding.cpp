#include "symbolic/encoding.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"

namespace witness {
namespace {

// model = raw * scale + offset, exactly.
Term normalise(const Normalisation& n, const Term& raw) {
  switch (n.form) {
    case Normalisation::Form::None: return raw;
    case Normalisation::Form::ScaleOffset: return raw * Rational::from_double(n.a) + Rational::from_double(n.b);
    case Normalisation::Form::MeanStd: {
      const Rational inv = Rational(1) / Rational::from_double(n.b);
      return raw * inv - Term(Rational::from_double(n.a) * inv);
    }
    case Normalisation::Form::CenterScale: {
      const Rational scale = Rational::from_double(n.b);
      return raw * scale - Term(Rational::from_double(n.a) * scale);
    }
  }
  return raw;
}

}  // namespace

DomainEncoding encode_domain(Solver& solver, const Schema& schema, const std::vector<bool>& symbolic_inputs,
                             const Eigen::VectorXd& concrete) {
  const int width = schema.model_width();
  if (static_cast<int>(symbolic_inputs.size()) != width || concrete.size() != width) {
    throw InputError(schema.source(), "",
                     fmt::format("encode_domain: the schema has {} model inputs, got {} flags and {} values", width,
                                 symbolic_inputs.size(), concrete.size()));
  }
  DomainEncoding enc;
  enc.model_inputs.resize(static_cast<std::size_t>(width));
  enc.symbolic = symbolic_inputs;
  enc.feature_of_input.resize(static_cast<std::size_t>(width));
  enc.raw_vars.assign(static_cast<std::size_t>(schema.size()), -1);
  enc.one_hot_vars.resize(static_cast<std::size_t>(schema.size()));
  enc.raw_terms.resize(static_cast<std::size_t>(schema.size()));
  for (int i = 0; i < width; ++i) {
    enc.model_inputs[static_cast<std::size_t>(i)] = Term(Rational::from_double(concrete[i]));
  }
  for (int fi = 0; fi < schema.size(); ++fi) {
    const Feature& f = schema.feature(fi);
    const auto ufi = static_cast<std::size_t>(fi);
    enc.norms.push_back(f.norm);
    enc.feature_one_hot.push_back(f.one_hot);
    int n_sym = 0;
    for (int k = 0; k < f.model_width; ++k) {
      enc.feature_of_input[static_cast<std::size_t>(f.model_offset) + static_cast<std::size_t>(k)] = fi;
      n_sym += symbolic_inputs[static_cast<std::size_t>(f.model_offset) + static_cast<std::size_t>(k)] ? 1 : 0;
    }
    if (n_sym == 0) continue;
    if (f.one_hot) {
      if (n_sym != f.model_width) {
        throw InputError(schema.source(), fmt::format("feature '{}'", f.name),
                         "a one-hot feature must have all or none of its model inputs symbolic");
      }
      Term sum;
      Term raw;
      for (int k = 0; k < f.model_width; ++k) {
        const bool allowed = k >= f.min && k <= f.max;
        const int v = solver.int_var(fmt::format("{}={}", f.name, k), 0, allowed ? 1 : 0);
        enc.one_hot_vars[ufi].push_back(v);
        sum += Term::var(v);
        raw += Rational(k) * Term::var(v);
        enc.model_inputs[static_cast<std::size_t>(f.model_offset) + static_cast<std::size_t>(k)] = Term::var(v);
      }
      solver.assert_(eq(sum, 1));
      enc.raw_terms[ufi] = raw;
      continue;
    }
    int v = -1;
    if (f.integral()) {
      v = solver.int_var(f.name, static_cast<std::int64_t>(std::ceil(f.min)),
                         static_cast<std::int64_t>(std::floor(f.max)));
    } else {
      v = solver.real_var(f.name, Rational::from_double(f.min), Rational::from_double(f.max));
    }
    enc.raw_vars[ufi] = v;
    enc.raw_terms[ufi] = Term::var(v);
    enc.model_inputs[static_cast<std::size_t>(f.model_offset)] = normalise(f.norm, Term::var(v));
  }
  return enc;
}

Eigen::VectorXd model_input_from_solver(const Solver& solver, const DomainEncoding& enc,
                                        const Eigen::VectorXd& concrete) {
  Eigen::VectorXd x = concrete;
  for (std::size_t i = 0; i < enc.model_inputs.size(); ++i) {
    if (!enc.symbolic[i]) continue;
    const auto fi = static_cast<std::size_t>(enc.feature_of_input[i]);
    if (enc.feature_one_hot[fi]) {
      x[static_cast<Eigen::Index>(i)] = solver.value(enc.model_inputs[i]).to_double();  // 0 or 1
    } else {
      x[static_cast<Eigen::Index>(i)] = enc.norms[fi].to_model(solver.value(enc.raw_terms[fi]).to_double());
    }
  }
  return x;
}

Eigen::VectorXd raw_from_solver(const Solver& solver, const DomainEncoding& enc, const Schema& schema,
                                const Eigen::VectorXd& concrete) {
  return schema.from_model(model_input_from_solver(solver, enc, concrete));
}

Term substitute(const Term& t, const std::vector<Term>& terms) {
  if (!t.is_linear()) throw InternalError("substitute: only linear terms can be substituted");
  Term out(t.constant());
  for (const auto& [v, k] : t.vars()) {
    if (v < 0 || static_cast<std::size_t>(v) >= terms.size()) {
      throw InternalError(fmt::format("substitute: variable {} has no replacement", v));
    }
    out += terms[static_cast<std::size_t>(v)] * k;
  }
  return out;
}

Constraint substitute(const Constraint& c, const std::vector<Term>& terms) {
  switch (c.kind()) {
    case Constraint::Kind::True: return Constraint::constant(true);
    case Constraint::Kind::False: return Constraint::constant(false);
    case Constraint::Kind::Le: return le(substitute(c.term(), terms), 0);
    case Constraint::Kind::Lt: return lt(substitute(c.term(), terms), 0);
    case Constraint::Kind::Eq: return eq(substitute(c.term(), terms), 0);
    case Constraint::Kind::Not: return negation(substitute(c.args()[0], terms));
    case Constraint::Kind::And:
    case Constraint::Kind::Or: {
      std::vector<Constraint> args;
      args.reserve(c.args().size());
      for (const Constraint& a : c.args()) args.push_back(substitute(a, terms));
      return c.kind() == Constraint::Kind::And ? conjunction(args) : disjunction(args);
    }
  }
  return c;
}

}  // namespace witness
