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
                             const Eigen::VectorXd& concrete, const DomainEncoding* shared) {
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
  if (!schema.constraints().empty()) {
    // The features that are not symbolic here: the shared copy's terms, or their concrete values.
    const Eigen::VectorXd raw = schema.from_model(concrete);
    std::vector<Term> terms = enc.raw_terms;
    for (int fi = 0; fi < schema.size(); ++fi) {
      const auto ufi = static_cast<std::size_t>(fi);
      if (enc.raw_vars[ufi] >= 0 || !enc.one_hot_vars[ufi].empty()) continue;
      terms[ufi] = shared != nullptr ? shared->raw_terms[ufi] : Term(Rational::from_double(raw[fi]));
    }
    solver.assert_(encode_constraints(schema.constraints(), terms));
  }
  return enc;
}

namespace {

Constraint compare_with_zero(const Term& t, Comparison c) {
  switch (c) {
    case Comparison::Less: return lt(t, Term());
    case Comparison::LessEqual: return le(t, Term());
    case Comparison::Equal: return eq(t, Term());
    case Comparison::NotEqual: return ne(t, Term());
    case Comparison::GreaterEqual: return ge(t, Term());
    case Comparison::Greater: return gt(t, Term());
  }
  return Constraint();
}

Constraint encode_formula(const Constraints& cs, const Formula& f, const std::vector<Term>& raw) {
  const auto value = [](double v) { return Term(Rational::from_double(v)); };
  std::vector<Constraint> parts;
  switch (f.op) {
    case Formula::Op::Linear: {
      const LinearAtom& a = cs.linear_atoms()[static_cast<std::size_t>(f.atom)];
      Term t = value(a.constant);
      for (const auto& [feature, coefficient] : a.terms)
        t += Rational::from_double(coefficient) * raw[static_cast<std::size_t>(feature)];
      return compare_with_zero(t, a.comparison);
    }
    case Formula::Op::Set: {
      const SetAtom& a = cs.set_atoms()[static_cast<std::size_t>(f.atom)];
      for (const std::vector<double>& tuple : a.tuples) {
        std::vector<Constraint> same;
        for (std::size_t i = 0; i < tuple.size(); ++i)
          same.push_back(eq(raw[static_cast<std::size_t>(a.features[i])], value(tuple[i])));
        parts.push_back(conjunction(same));
      }
      const Constraint in = disjunction(parts);
      return a.negated ? negation(in) : in;
    }
    case Formula::Op::Not: return negation(encode_formula(cs, f.children[0], raw));
    case Formula::Op::And:
    case Formula::Op::Or:
      for (const Formula& c : f.children) parts.push_back(encode_formula(cs, c, raw));
      return f.op == Formula::Op::And ? conjunction(parts) : disjunction(parts);
    case Formula::Op::Implies:
      return implies(encode_formula(cs, f.children[0], raw), encode_formula(cs, f.children[1], raw));
  }
  return Constraint();
}

}  // namespace

Constraint encode_constraints(const Constraints& constraints, const std::vector<Term>& raw) {
  const auto value = [](double v) { return Term(Rational::from_double(v)); };
  std::vector<Constraint> all;
  for (const DerivedFeature& d : constraints.derived()) {
    const Term& source = raw[static_cast<std::size_t>(d.source)];
    const Term& target = raw[static_cast<std::size_t>(d.target)];
    std::vector<Constraint> cases;
    if (d.kind == DerivedFeature::Kind::Bucket) {
      // Bucket i: edges[i-1] <= source < edges[i], target = values[i].
      for (std::size_t i = 0; i < d.values.size(); ++i) {
        std::vector<Constraint> c;
        if (i > 0) c.push_back(ge(source, value(d.edges[i - 1])));
        if (i < d.edges.size()) c.push_back(lt(source, value(d.edges[i])));
        c.push_back(eq(target, value(d.values[i])));
        cases.push_back(conjunction(c));
      }
    } else {
      for (const auto& [s, t] : d.table) cases.push_back(conjunction({eq(source, value(s)), eq(target, value(t))}));
    }
    all.push_back(disjunction(cases));
  }
  for (const ValidityRule& r : constraints.rules()) all.push_back(encode_formula(constraints, r.formula, raw));
  return conjunction(all);
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
