// witness: interrogates decision models. Exit codes (DESIGN.md): 0 verified/ok, 10 witness,
// 20 inconclusive, 1 runtime error, 2 usage or input error.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "cli/cli.h"
#include "core/error.h"
#include "distributed/mpi_search.h"
#include "report/html_report.h"
#include "solver/z3_check.h"

namespace {
// How long a worker rank with an input error waits for rank 0 to end the run (see main).
constexpr std::chrono::seconds kOwnErrorAfter{5};

// Messages may quote bytes from a corrupt file: show them escaped, so the one error line is
// printable text.
std::string printable(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else if (c == '\n') {
      out += ' ';
    } else {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4U];
      out += hex[c & 15U];
    }
  }
  return out;
}
}  // namespace

int main(int argc, char** argv) {
  witness::cli::catch_interrupts();  // first: a Ctrl-C from now on is handled
  // A file past the size limit (ulimit -f) fails its write with EFBIG, reported and cleaned up as a
  // full disk is, instead of killing the process mid-file.
  std::signal(SIGXFSZ, SIG_IGN);
  // Under mpirun/srun: one witness per rank; only rank 0 prints answers (distributed/mpi_search.h).
  witness::distributed_start();
  struct Finalize {
    ~Finalize() { witness::distributed_stop(); }
  } const finalize;
  if (witness::distributed_rank() > 0 && std::freopen("/dev/null", "w", stdout) == nullptr) return 2;
  CLI::App app("witness: find unfairness witnesses in decision models, or prove there are none", "witness");
  app.require_subcommand(1);
  app.set_version_flag("--version", witness::witness_version() + (witness::distributed_built() ? " (MPI)" : ""));
  witness::cli::set_command_line(argc, argv);
  witness::cli::add_info_command(app);
  witness::cli::add_predict_command(app);
  witness::cli::add_bias_command(app);
  witness::cli::add_schema_command(app);
  witness::cli::add_convert_command(app);
  witness::cli::add_dual_command(app);
  witness::cli::add_transform_command(app);
  int status = 0;  // set by commands that answer with a verdict
  witness::cli::add_fair_command(app, status);
  witness::cli::add_merge_command(app, status);
  witness::cli::add_test_command(app, status);
  witness::cli::add_query_command(app, status);
  witness::cli::add_report_command(app);
  witness::cli::add_serve_command(app, status);
  // CLI11 answers a mistyped command with "A subcommand is required"; name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::cerr << "error: unknown command '" << printable(argv[1]) << "' (commands: " << names << ")\n";
      return 2;
    }
  }
  // Ctrl-C stops a run as a time limit does; the answer printed, the exit code says it was cut short.
  const auto interrupted_status = [] {
    std::cout.flush();
    std::cerr << "witness: interrupted (Ctrl-C): the answer above is what was known when the run stopped\n";
    return 130;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "error: " << e.what() << "\n(run 'witness --help' or 'witness <command> --help')\n";
    return 2;
  } catch (const witness::Error& e) {
    if (witness::cli::was_interrupted()) {  // e.g. a compiler killed by the same Ctrl-C
      std::cerr << "witness: interrupted (Ctrl-C) before an answer\n";
      return 130;
    }
    if (witness::distributed_rank() > 0 && e.exit_code() == 2) {
      // Under mpirun every rank reads the same inputs, so rank 0 reports a bad one. MPI_Finalize
      // (on return) waits for every rank: it returns when rank 0 ended too, and then this rank
      // leaves quietly; if rank 0 runs on instead, the error is this rank's own and is printed.
      std::thread([message = printable(e.what())] {
        std::this_thread::sleep_for(kOwnErrorAfter);
        std::cerr << "error: " << message << '\n';
        std::cerr.flush();
        std::_Exit(2);
      }).detach();
      return 2;
    }
    std::cerr << "error: " << printable(e.what()) << '\n';
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: internal: " << printable(e.what()) << '\n';
    return 1;
  }
  // An answer that did not reach stdout (a full disk, a closed pipe) is a failure, not a verdict:
  // `witness predict ... > labels.txt` on a full disk must not exit 0 with part of the labels.
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    std::cerr << "error: cannot write the answer to standard output (disk full or pipe closed?)\n";
    std::cerr.flush();
    std::quick_exit(1);
  }
  if (witness::distributed_rank() > 0) status = 0;  // the verdict is rank 0's to give
  if (witness::cli::was_interrupted()) status = interrupted_status();
  // A large Z3 context may still be being freed on a helper thread: the answer is printed, so do
  // not make the caller wait for it.
  if (witness::contexts_retiring()) {
    std::cerr.flush();
    std::quick_exit(status);
  }
  return status;
}
