// Every option of every job, in one list per job: the run options the job reads (seed, threads,
// time-limit, ...; core/options.h) and its own table (fair_options(), test_options(), ...). The CLI
// makes its flags from it, the Python module lists it (witness.options("fair")), and a test checks
// that the CLI's flags, Python's keywords and the web forms' fields all name options of it.
//
//   for (const witness::OptionSpec& s : witness::job_options("fair"))
//     std::cout << "--" << s.name << ": " << s.help << "\n";
//   const std::vector<std::string>& run = witness::job_run_options("test");  // seed, threads, ...
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/options.h"

namespace witness {

// The jobs, in the order the CLI documents them: fair, test, bias, query.
const std::vector<std::string>& job_names();
// The run options (option_table() names) the job reads; InputError for an unknown job.
const std::vector<std::string>& job_run_options(const std::string& job);
// The job's run options, then its own table, as specs (name, type, default, range or allowed
// values, help). A name in both would be the job's own (none is).
std::vector<OptionSpec> job_options(const std::string& job);
// InputError naming the first of `given` that is no option of the job, with the job's options: a
// run option the job does not read would otherwise be taken and ignored (query's memory-limit).
void check_option_names(const std::string& job, const std::map<std::string, std::string>& given);

}  // namespace witness
