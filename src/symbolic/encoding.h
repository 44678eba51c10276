// Solver variables for the symbolic model inputs of a schema's domain, and the map from the
// concolic Terms (over model input indices) to solver Terms.
//
//   witness::Schema schema = witness::load_schema("benchmarks/fairify/german.toml");
//   Eigen::VectorXd x0 = schema.to_model(witness::load_csv("benchmarks/fairify/data/german.csv", schema).raw.col(0));
//   std::vector<bool> symbolic(x0.size(), true);                                    // every model input
//   auto s = witness::make_solver("z3");
//   witness::DomainEncoding enc = witness::encode_domain(*s, schema, symbolic, x0);  // asserts bounds
//   witness::Constraint c = witness::gt(witness::Term::var(0), 1);   // over model inputs, as concolic.h's paths
//   s->assert_(witness::substitute(c, enc.model_inputs));
//   if (s->check() == witness::CheckResult::Sat) {
//     Eigen::VectorXd x = witness::model_input_from_solver(*s, enc, x0);           // next input
//   }
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "domain/schema.h"
#include "solver/solver.h"
#include "solver/term.h"

namespace witness {

struct DomainEncoding {
  // Per model input: an affine Term over solver variables (raw * scale + offset, exact), or the
  // constant exact value of the concrete input for a non-symbolic input.
  std::vector<Term> model_inputs;
  std::vector<bool> symbolic;  // per model input
  // Per schema feature: solver var of the raw value (-1: not symbolic, or one-hot), the one-hot
  // indicator vars (k ints in [0, 1], sum 1, codes outside the bounds fixed to 0), and the raw
  // value as a Term (one-hot: sum code * indicator).
  std::vector<int> raw_vars;
  std::vector<std::vector<int>> one_hot_vars;
  std::vector<Term> raw_terms;
  std::vector<int> feature_of_input;  // per model input: its schema feature
  std::vector<Normalisation> norms;   // per schema feature (copied from the schema)
  std::vector<bool> feature_one_hot;
};

// The schema's constraints (derived features, validity rules) over per-feature raw value terms.
Constraint encode_constraints(const Constraints& constraints, const std::vector<Term>& raw);

// Creates the variables and asserts their domain constraints in the solver's current scope, and
// the schema's constraints (docs/schema.md) over the raw values. A feature that is not symbolic
// enters them as `shared`'s term (the twin of a dual encoding shares the first copy's features),
// or without `shared` as its concrete value.
// symbolic_inputs and concrete have one entry per model input. A one-hot feature must have all or
// none of its inputs symbolic (InputError otherwise).
DomainEncoding encode_domain(Solver& solver, const Schema& schema, const std::vector<bool>& symbolic_inputs,
                             const Eigen::VectorXd& concrete, const DomainEncoding* shared = nullptr);

// After a Sat check: the model input vector of the solver's model. Symbolic features are read as
// exact raw values, then normalised in double with the schema's own formula, so the result is
// bit-identical to Schema::to_model of that raw row (the exact affine Term may differ by an ulp).
Eigen::VectorXd model_input_from_solver(const Solver& solver, const DomainEncoding& enc,
                                        const Eigen::VectorXd& concrete);
// The raw row (one value per feature) of the solver's model; non-symbolic features from `concrete`
// through Schema::from_model.
Eigen::VectorXd raw_from_solver(const Solver& solver, const DomainEncoding& enc, const Schema& schema,
                                const Eigen::VectorXd& concrete);

// Replaces variable i of a linear term/constraint by terms[i] (concolic Terms -> solver Terms).
// Non-linear (ite) terms: InternalError.
Term substitute(const Term& t, const std::vector<Term>& terms);
Constraint substitute(const Constraint& c, const std::vector<Term>& terms);

}  // namespace witness
