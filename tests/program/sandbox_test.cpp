// Hostile programs in the native replay's sandbox: constructors, .init_array entries, system,
// fopen, socket, fork, exec, endless loops, huge allocations and floods of output have no effect
// outside it; and a program's build reads no file outside its folder and the system headers.
#include "program/sandbox.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "core/error.h"
#include "program/file_view.h"
#include "program/process.h"
#include "program/program.h"
#include "source_file.h"

namespace witness {
namespace {

namespace fs = std::filesystem;

// A file outside the sandbox that hostile programs try to create; gone before and after.
class Marker {
 public:
  Marker() : path_(fs::temp_directory_path() / fmt::format("witness-sandbox-marker-{}", getpid())) {
    fs::remove(path_);
  }
  ~Marker() { fs::remove(path_); }
  Marker(const Marker&) = delete;
  Marker& operator=(const Marker&) = delete;
  [[nodiscard]] std::string path() const { return path_.string(); }
  [[nodiscard]] bool exists() const { return fs::exists(path_); }

 private:
  fs::path path_;
};

// Builds `f` statically, as the native replay is built; returns the executable's path.
std::string build_hostile(const SourceFile& f) {
  std::string exe = (fs::path(f.path()).parent_path() / "hostile").string();
  const ProcessResult built = run_process({"clang-14", "-O1", "-w", "-static", f.path(), "-lm", "-o", exe}, 120.0);
  EXPECT_EQ(built.exit_code, 0) << built.err;
  return exe;
}

SandboxLimits test_limits(double seconds) {
  SandboxLimits limits;
  limits.seconds = seconds;
  limits.memory_bytes = std::size_t{256} << 20;
  limits.output_bytes = 4096;
  return limits;
}

// Builds `source` and runs it in the sandbox.
ProcessResult run_hostile(const std::string& source, double seconds = 5.0) {
  const SourceFile f("hostile.c", source);
  return run_sandboxed(build_hostile(f), {"7"}, test_limits(seconds));
}

constexpr const char* kHonest =
    "#include <stdio.h>\n#include <stdlib.h>\nint main(int argc, char** argv) {\n"
    "  printf(\"%d\\n\", atoi(argv[1]) * 6); return 0; }\n";

TEST(Sandbox, AnHonestProgramRunsAndPrints) {
  const ProcessResult r = run_hostile(
      "#include <stdio.h>\n#include <stdlib.h>\n#include <math.h>\n"
      "int main(int argc, char** argv) { double* v = malloc(1000000 * sizeof(double));\n"
      "  for (int i = 0; i < 1000000; ++i) v[i] = sqrt(i);\n"
      "  printf(\"%d %.0f\\n\", atoi(argv[1]) * 6, v[999999]); return 0; }\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "42 1000\n");
}

TEST(Sandbox, ConstructorsAndInitArrayEntriesRunInsideIt) {
  const Marker m;
  const ProcessResult r = run_hostile(
      fmt::format("#include <stdio.h>\n#include <stdlib.h>\n"
                  "__attribute__((constructor(101))) static void early(void) {{ system(\"touch {0}\"); "
                  "FILE* f = fopen(\"{0}\", \"w\"); if (f) fputs(\"x\", f); }}\n"
                  "__attribute__((used)) static void entry(void) {{ system(\"touch {0}\"); }}\n"
                  "__asm__(\".section .init_array,\\\"aw\\\"\\n.quad entry\\n.section .preinit_array,\\\"aw\\\"\\n"
                  ".quad entry\\n.text\\n\");\n"
                  "int main(void) {{ puts(\"ran\"); return 0; }}\n",
                  m.path()));
  EXPECT_EQ(r.out, "ran\n") << r.err;
  EXPECT_FALSE(m.exists());
}

TEST(Sandbox, FilesSocketsProcessesAndExecAreRefused) {
  const Marker m;
  const ProcessResult r =
      run_hostile(fmt::format("#include <stdio.h>\n#include <unistd.h>\n#include <fcntl.h>\n#include <sys/socket.h>\n"
                              "#include <sys/syscall.h>\n"
                              "int main(void) {{\n"
                              "  printf(\"read %d\\n\", open(\"/etc/passwd\", O_RDONLY) >= 0);\n"
                              "  printf(\"write %d\\n\", open(\"{0}\", O_WRONLY | O_CREAT, 0644) >= 0);\n"
                              "  printf(\"socket %d\\n\", socket(AF_INET, SOCK_STREAM, 0) >= 0);\n"
                              "  fflush(stdout);\n"
                              "  pid_t p = fork(); if (p == 0) _exit(0);\n"
                              "  printf(\"fork %d\\n\", p >= 0);\n"
                              "  char* argv[] = {{\"/bin/touch\", \"{0}\", 0}};\n"
                              "  printf(\"exec %d\\n\", execve(\"/bin/touch\", argv, 0));\n"
                              "  printf(\"execveat %d\\n\", (int)syscall(SYS_execveat, 3, \"\", argv, 0, 0x1000));\n"
                              "  return 0; }}\n",
                              m.path()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "read 0\nwrite 0\nsocket 0\nfork 0\nexec -1\nexecveat -1\n");
  EXPECT_FALSE(m.exists());
}

TEST(Sandbox, LoopsAllocationsAndFloodsEndWithinTheLimits) {
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult loop = run_hostile("int main(void) { volatile int x = 0; for (;;) ++x; }\n", 1.0);
  EXPECT_TRUE(loop.timed_out);
  EXPECT_NE(loop.exit_code, 0);
  const ProcessResult huge = run_hostile(
      "#include <stdlib.h>\n#include <string.h>\n#include <stdio.h>\n"
      "int main(void) { volatile size_t n = (size_t)8 << 30; char* p = malloc(n);\n"
      "  if (!p) { puts(\"refused\"); return 3; }\n"
      "  memset(p, 1, n); return p[n / 2]; }\n");
  EXPECT_EQ(huge.exit_code, 3);
  EXPECT_EQ(huge.out, "refused\n");
  const ProcessResult flood = run_hostile("#include <stdio.h>\nint main(void) { for (;;) puts(\"spam\"); }\n");
  EXPECT_TRUE(flood.output_limited);
  EXPECT_EQ(flood.out.size(), 4096U);
  // The loop's 1 s and the build of three programs; nothing waited for a child that would not end.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 60.0);
}

TEST(Sandbox, TheReplayOfAProgramRunsInIt) {
  const Marker m;
  const SourceFile f("agent.c", fmt::format("#include <stdlib.h>\n"
                                            "__attribute__((constructor)) static void early(void) {{ "
                                            "system(\"touch {}\"); }}\n"
                                            "int decide(int x) {{ return x > 3; }}\n",
                                            m.path()));
  const Program p = Program::compile(f.path(), "decide");
  NativeValue five;
  five.integer = 5;
  EXPECT_EQ(p.run_native({five}).integer, 1);
  EXPECT_FALSE(m.exists());
}

// Compiling reads the program's folder and the system headers only: a file elsewhere named
// directly, through "..", built by a macro, or reached through a link in the folder is refused
// without any of its text in the message.
TEST(Sandbox, ABuildReadsNoFileOutsideTheProgramsFolder) {
  const std::string secret = (fs::temp_directory_path() / fmt::format("witness-secret-{}.h", getpid())).string();
  std::ofstream(secret) << "int leaked_token_xyzzy = ;\n";
  auto refused = [&](const std::string& text, const std::string& needle, const std::string& link = "") {
    const SourceFile f("agent.c", text);
    if (!link.empty()) fs::create_symlink(secret, fs::path(f.path()).parent_path() / link);
    try {
      (void)Program::compile(f.path(), "decide");
      ADD_FAILURE() << "compiled: " << text;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(needle), std::string::npos) << what;
      EXPECT_EQ(what.find("xyzzy"), std::string::npos) << what;
    }
  };
  refused(fmt::format("#include \"{}\"\nint decide(int x) {{ return x; }}\n", secret), "outside the program's folder");
  refused("#include \"../../etc/passwd\"\nint decide(int x) { return x; }\n", "outside the program's folder");
  refused(fmt::format("#define F \"{}\"\n#include F\nint decide(int x) {{ return x; }}\n", secret),
          "outside the program's folder");
  refused("#include \"link.h\"\nint decide(int x) { return x; }\n", "outside the program's folder", "link.h");
  fs::remove(secret);
  // Its own headers and the system's are fine.
  const SourceFile own("agent.c", "#include <math.h>\n#include \"weights.h\"\nint decide(int x) { return x > W; }\n");
  std::ofstream(fs::path(own.path()).parent_path() / "weights.h") << "#define W 3\n";
  EXPECT_EQ(Program::compile(own.path(), "decide").inputs().size(), 1U);
}

// Assembly and linker directives would make the native build's assembler or linker read any file
// (.incbin, .include, #pragma comment(lib)); a program with any of them is refused, and neither
// the build nor the replay's output ever carries the file's bytes into a message.
TEST(Sandbox, AssemblyThatNamesAFileIsRefused) {
  const std::string secret = (fs::temp_directory_path() / fmt::format("witness-secret-{}.txt", getpid())).string();
  std::ofstream(secret) << "root:x:0:0:xyzzy\n";
  auto refused = [&](const std::string& text, const std::string& needle) {
    const SourceFile f("agent.c", text);
    try {
      const Program p = Program::compile(f.path(), "decide");
      NativeValue one;
      one.integer = 1;
      (void)p.run_native({one});
      ADD_FAILURE() << "compiled and ran: " << text;
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(needle), std::string::npos) << what;
      EXPECT_EQ(what.find("xyzzy"), std::string::npos) << what;
    }
  };
  // The probe's program: the bytes assembled into the binary, written by an .init_array entry.
  refused(fmt::format("#include <unistd.h>\n"
                      "__asm__(\".section .rodata\\n.globl blob\\nblob: .incbin \\\"{}\\\"\\n.byte 0\\n\");\n"
                      "extern const char blob[];\n"
                      "static void leak(void) {{ write(2, blob, 16); }}\n"
                      "__attribute__((section(\".init_array\"), used)) static void (*entry)(void) = leak;\n"
                      "int decide(int x) {{ return x > 0; }}\n",
                      secret),
          "top-level assembly");
  refused(
      fmt::format("int decide(int x) {{ __asm__ volatile(\".pushsection .data\\n.include \\\"{}\\\"\\n.popsection\"); "
                  "return x > 0; }}\n",
                  secret),
      "inline assembly");
  refused("#pragma comment(lib, \"secret\")\nint decide(int x) { return x > 0; }\n", "linker");
  refused(
      "__attribute__((section(\".data\\n.incbin \\\"/etc/passwd\\\"\"))) int w = 3;\n"
      "int decide(int x) { return x > w; }\n",
      "section name");
  // A program printing on its own (stderr, stdout) before it fails shows nothing of that output.
  refused(
      "#include <stdio.h>\n#include <stdlib.h>\n"
      "int decide(int x) { fprintf(stderr, \"xyzzy\"); printf(\"xyzzy\"); exit(3); }\n",
      "failed (exit code 3)");
  fs::remove(secret);
}

// The compiler itself runs in a view of the program's folder and the system's files: even a tool
// that tries, reads nothing else (where the kernel has Landlock, as this project's machines do).
TEST(Sandbox, ACompilerInAFileViewReadsNothingElse) {
  if (!file_views_supported()) GTEST_SKIP() << "this kernel has no Landlock";
  const std::string secret = (fs::temp_directory_path() / fmt::format("witness-secret-{}.txt", getpid())).string();
  std::ofstream(secret) << "xyzzy\n";
  const SourceFile own("agent.c", "int decide(int x) { return x; }\n");
  const std::string dir = fs::path(own.path()).parent_path().string();
  const FileView view{{dir, "/usr", "/etc/ld.so.cache"}, {dir}};
  const ProcessResult outside = run_in_view({"cat", secret}, view, {.seconds = 10.0});
  EXPECT_NE(outside.exit_code, 0);
  EXPECT_EQ(outside.out.find("xyzzy"), std::string::npos);
  const ProcessResult inside = run_in_view({"cat", own.path()}, view, {.seconds = 10.0});
  EXPECT_EQ(inside.exit_code, 0);
  EXPECT_NE(inside.out.find("decide"), std::string::npos);
  // clang itself, asked to include the secret by a path no check saw.
  const ProcessResult compiled = run_in_view(
      {"clang-14", "-x", "c", "-c", "-include", secret, own.path(), "-o", dir + "/a.o"}, view, {.seconds = 60.0});
  EXPECT_NE(compiled.exit_code, 0);
  EXPECT_EQ(compiled.err.find("xyzzy"), std::string::npos);
  const ProcessResult fine =
      run_in_view({"clang-14", "-x", "c", "-c", own.path(), "-o", dir + "/a.o"}, view, {.seconds = 60.0});
  EXPECT_EQ(fine.exit_code, 0) << fine.err;
  fs::remove(secret);
}

// A preprocessor bomb is stopped by the compiler's memory bound, not the machine's.
TEST(Sandbox, ACompilerRunsUnderAMemoryBound) {
  std::string bomb = "#define A0 x\n";
  for (int i = 1; i < 40; ++i) bomb += fmt::format("#define A{} A{} A{}\n", i, i - 1, i - 1);
  bomb += "int decide(int x) { return A39; }\n";
  const SourceFile f("bomb.c", bomb);
  const auto start = std::chrono::steady_clock::now();
  try {
    (void)Program::compile(f.path(), "decide", "",
                           BuildLimits{.seconds = 60.0, .memory_bytes = std::size_t{512} << 20});
    ADD_FAILURE() << "the bomb compiled";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("does not compile"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 60.0);
}

TEST(Sandbox, CancelStopsTheRunAtOnce) {
  const SourceFile f("loop.c", "int main(void) { volatile int x = 0; for (;;) ++x; }\n");
  const std::string exe = build_hostile(f);
  std::atomic<bool> cancel{false};
  SandboxLimits limits = test_limits(60.0);
  limits.cancel = &cancel;
  const auto start = std::chrono::steady_clock::now();
  std::thread raise([&cancel] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  const ProcessResult r = run_sandboxed(exe, {}, limits);
  raise.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
}

// A parent whose standard streams are closed (a daemon) gets descriptors 0-2 for the sandbox's
// own files: the child must still see its pipes there, not an overwritten descriptor.
TEST(Sandbox, RunsWhenTheParentsStandardStreamsAreClosed) {
  const SourceFile f("honest.c", kHonest);
  const std::string exe = build_hostile(f);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(0);
    close(1);
    close(2);
    try {
      const ProcessResult r = run_sandboxed(exe, {"7"}, test_limits(10.0));
      _exit(r.exit_code == 0 && r.out == "42\n" ? 0 : 1);
    } catch (...) {
      _exit(2);
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(Sandbox, ACancelledBuildStopsWithAMessage) {
  const SourceFile f("agent.c", "int decide(int x) { return x > 0; }\n");
  const std::atomic<bool> cancel{true};
  try {
    (void)Program::compile(f.path(), "decide", "", BuildLimits{.seconds = 60.0, .cancel = &cancel});
    FAIL() << "a cancelled build compiled";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cancelled"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace witness
