// fair --near-data K: the search and the shares over boxes around the data rows instead of the whole
// domain. The box of a row keeps its categories and moves each numeric feature by at most K steps
// (1 for integers, 1% of the range for reals); the protected features range freely. Shares are a
// mixture: each valid data row weighs one, its box's shares spread over it, so "certified 97%"
// means 97% of the people near a real person, counted exactly in each box.
//
//   witness::SubjectSource source;
//   source.model_path = "benchmarks/fairify/models/adult/AC1.h5";
//   source.schema_path = "benchmarks/fairify/adult.toml";
//   source.data.path = "benchmarks/fairify/data/adult.csv";
//   witness::JobSubject subject = witness::load_subject(source);
//   witness::FairnessProblem problem(*subject.model, subject.schema, subject.protected_names);
//   witness::EngineSettings settings;  settings.quantify = true;
//   witness::Env env;  env.start();
//   witness::FairnessResult r = witness::fair_near_data(subject, problem, settings, 2, env);
#pragma once

#include "core/env.h"
#include "fairness/engine.h"
#include "run/subject.h"

namespace witness {

// Runs the complete engine in each distinct row's box, rows in data order, until the time limit
// or (without quantify) settings.max_witnesses witnesses. Rows that break a schema constraint are
// not people and are left out. InputError without data rows or for a model the complete engine
// does not read.
FairnessResult fair_near_data(const JobSubject& subject, const FairnessProblem& problem, const EngineSettings& settings,
                              int k, Env& env);

}  // namespace witness
