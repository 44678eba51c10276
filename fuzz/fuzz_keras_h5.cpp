// libFuzzer target: any bytes, saved as an .h5 file, must give load_keras_h5 a Model or a
// witness::Error, never a crash. A model that loads is also evaluated on two rows.
//
// load_keras_h5 takes a path, so each input is written to model.h5 in a private temp folder. It
// reads the file in a forked child first (HDF5 1.10 crashes, loops, or allocates and clears
// gigabytes on some corrupt files; see src/model/keras_h5.cpp) and in this process only if the
// child read it cleanly. Under the fuzzer the child is a copy of the fuzzer, so a fork handler
// adapts it: its sanitizer report goes to a file here instead of /dev/null, libFuzzer's death
// callback (which would save the input as a crash of its own) is removed, and an alarm ends it
// after 0.5 s, saying where it was (the loader waits 30 s, longer than libFuzzer's -timeout=10).
// A child that crashed or ran out of time is reported by the loader as a corrupt file; this
// target then reads the child's report and aborts unless it blames HDF5 (see blames_hdf5), so a
// crash or a hang in witness's own code in the child is still found. Coverage: what the child
// runs is not seen by libFuzzer (its counters die with it); the read in this process is.
#include <fcntl.h>
#include <pthread.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "fuzz_common.h"
#include "model/evaluator.h"
#include "model/loaders.h"

// The sanitizers' interface (sanitizer/common_interface_defs.h), weak so that unsanitized replay
// builds link without them.
extern "C" {
void __sanitizer_set_report_path(const char* path) __attribute__((weak));       // NOLINT(bugprone-reserved-identifier)
void __sanitizer_set_death_callback(void (*callback)()) __attribute__((weak));  // NOLINT(bugprone-reserved-identifier)
void __sanitizer_print_stack_trace() __attribute__((weak));                     // NOLINT(bugprone-reserved-identifier)
void __asan_on_error();                                                         // NOLINT(bugprone-reserved-identifier)
}

namespace {

constexpr const char* kReportName = "child_report";
// Set before the first fork, so that the child does not build them.
std::string report_prefix;  // NOLINT(cert-err58-cpp)
std::string alarm_report;   // NOLINT(cert-err58-cpp)
// The executable mappings of the HDF5 libraries (the C library and its C++ wrapper).
struct Range {
  std::uintptr_t lo = 0;
  std::uintptr_t hi = 0;
};
std::vector<Range> hdf5_code;  // NOLINT(cert-err58-cpp)

// A legitimate read of a 1 MB file takes the child milliseconds; HDF5's loops take forever.
constexpr long kChildMicroseconds = 500'000;

void find_hdf5_code() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    std::istringstream fields(line);
    std::string span;
    std::string perms;
    fields >> span >> perms;
    const auto dash = span.find('-');
    if (line.find("libhdf5") == std::string::npos || perms.find('x') == std::string::npos ||
        dash == std::string::npos) {
      continue;
    }
    hdf5_code.push_back(
        {std::stoull(span.substr(0, dash), nullptr, 16), std::stoull(span.substr(dash + 1), nullptr, 16)});
  }
}

void no_death_callback() {}

// The child's time is up. When it was interrupted inside HDF5 (the usual case: a loop over a
// corrupt heap), a one-line report says so, without the second a symbolized stack takes;
// otherwise the sanitizer prints the stack, where the parent reads whose loop it was. Only
// async-signal-safe calls on the first path; the child ends here either way.
void on_child_alarm(int /*signal*/, siginfo_t* /*info*/, void* context) {
  std::uintptr_t pc = 0;
  (void)context;
#if defined(__x86_64__)
  pc = static_cast<std::uintptr_t>(static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  pc = static_cast<std::uintptr_t>(static_cast<ucontext_t*>(context)->uc_mcontext.pc);
#endif
  for (const Range& r : hdf5_code) {
    if (pc < r.lo || pc >= r.hi) continue;
    const int fd = open(alarm_report.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      static constexpr char kLine[] = "    #0 interrupted in libhdf5 by the fuzz target's alarm\n";
      (void)!write(fd, kLine, sizeof kLine - 1);
      close(fd);
    }
    _exit(3);
  }
  if (__sanitizer_print_stack_trace != nullptr) __sanitizer_print_stack_trace();
  _exit(3);
}

bool in_child = false;

// Runs in the forked child (and in any other child this process forks).
void adapt_child() {
  in_child = true;
  if (__sanitizer_set_report_path != nullptr) __sanitizer_set_report_path(report_prefix.c_str());
  if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(no_death_callback);
  struct sigaction action {};
  action.sa_sigaction = on_child_alarm;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGALRM, &action, nullptr);  // replaces libFuzzer's timeout handler
  itimerval timer{};
  timer.it_value.tv_sec = kChildMicroseconds / 1'000'000;
  timer.it_value.tv_usec = kChildMicroseconds % 1'000'000;
  setitimer(ITIMER_REAL, &timer, nullptr);
}

}  // namespace

// AddressSanitizer calls this as it starts a report. In the child the alarm must not cut the
// report short: symbolizing its stack can take longer than the alarm, and a stack printed from
// the alarm handler meanwhile waits forever for the symbolizer the report holds.
extern "C" void __asan_on_error() {  // NOLINT(bugprone-reserved-identifier)
  if (!in_child) return;
  itimerval none{};
  setitimer(ITIMER_REAL, &none, nullptr);
}

namespace {

// Whether a sanitizer report (or the alarm handler's stack) blames the HDF5 library: its first
// stack frame that is either in libhdf5 or in witness's code (a name in witness::) decides; the
// frames above it (the sanitizer runtime, its allocator and interceptors, the C library, the
// alarm handler, inlined std:: or nlohmann code) say nothing about whose code went wrong. A report
// with neither (UBSan without a stack: UBSan checks only witness's code) blames witness.
bool blames_hdf5(const std::string& report) {
  std::istringstream in(report);
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] != '#') continue;
    if (line.find("libhdf5") != std::string::npos) return true;
    if (line.find("witness::") != std::string::npos) return false;
  }
  return false;
}

// After a load: any report the child left, checked and removed.
void check_child_reports() {
  const std::string prefix = std::string(kReportName) + ".";
  for (const auto& entry : std::filesystem::directory_iterator(witness::fuzz::temp_dir())) {
    if (entry.path().filename().string().rfind(prefix, 0) != 0) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string report((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    std::filesystem::remove(entry.path());
    if (blames_hdf5(report)) {
      static bool noted = false;  // once per process: the corpus holds such a file on purpose
      if (!noted)
        std::fprintf(stderr, "fuzz: a crash or loop inside HDF5 in the reader's child, as expected of HDF5 1.10\n");
      noted = true;
    } else {
      std::fprintf(stderr, "fuzz: the Keras reader's child crashed or hung outside HDF5:\n%s\n",
                   report.substr(0, 8000).c_str());
      witness::fuzz::bug("crash in the child", "see the report above");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const int registered = [] {
    report_prefix = witness::fuzz::temp_dir() + "/" + kReportName;
    alarm_report = report_prefix + ".alarm";
    find_hdf5_code();
    return pthread_atfork(nullptr, nullptr, adapt_child);
  }();
  (void)registered;
  const std::string path = witness::fuzz::write_temp("model.h5", witness::fuzz::text_of(data, size));
  witness::fuzz::run_one([&] {
    const witness::Model m = witness::load_keras_h5(path);
    if (m.input_width() <= 4096) {
      Eigen::MatrixXd x(m.input_width(), 2);
      x.col(0).setZero();
      x.col(1).setOnes();
      (void)witness::evaluate(m, x);
    }
  });
  check_child_reports();
  return 0;
}
