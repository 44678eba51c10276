// Agents as code: a C or C++ function compiled by clang-14 to LLVM IR, executed symbolically over
// Z3 terms (bit-vector integers, IEEE or real floating point, memory with concrete addresses), and
// run natively (a child process) to replay scenarios.
//
//   witness::Program p = witness::Program::compile("examples/soid/car/agent.c", "decide");
//   z3::context ctx;
//   std::vector<std::optional<z3::expr>> in;                   // one per input; nullopt: a global's initializer
//   for (const auto& i : p.inputs()) in.emplace_back(p.fresh_input(ctx, i, witness::ProgramFloats::Ieee));
//   witness::ProgramRunOptions run;                            // IEEE floats, loop bound 64
//   witness::ProgramPaths paths = p.execute(ctx, in, run);
//   // paths.done: (condition, returned value) per finished path; paths.cut: paths cut short, and why
//   std::vector<std::optional<witness::NativeValue>> x(p.inputs().size(), witness::NativeValue{});  // zeros
//   witness::NativeValue r = p.run_native(x);                  // the compiled program, natively
#pragma once

#include <z3++.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace witness {

// How the program's float/double values are modelled: IEEE binary32/binary64 with round to nearest
// even (what the compiled program computes), or the reals (no rounding; the query's real semantics).
enum class ProgramFloats : std::uint8_t { Ieee, Real };

// A scalar the decision function reads: a parameter, or a global variable a query may declare.
struct ProgramInput {
  std::string name;
  enum class Kind : std::uint8_t { Bool, Int, Float } kind = Kind::Int;
  unsigned bits = 32;     // Int: width; Float: 32 or 64; Bool: 1
  bool is_signed = true;  // Int only, from the debug info (int vs unsigned)
  bool global = false;    // a global variable (its initializer unless the query declares it)
  std::string type_name;  // the C type, for messages and the native harness
};

// One value of a native run: integers exactly, floats as doubles (a float is widened exactly).
struct NativeValue {
  std::int64_t integer = 0;
  std::uint64_t unsigned_integer = 0;
  double number = 0.0;
};

struct ProgramPath {
  z3::expr condition;  // over the inputs
  z3::expr value;      // the returned value: Bool, bit-vector, FP or Real
};

struct ProgramCut {
  z3::expr condition;  // inputs on which the program did not finish normally
  std::string reason;  // "agent.c:12: the loop bound (64) was reached", "agent.c:7: division by zero"
};

struct ProgramPaths {
  std::vector<ProgramPath> done;
  std::vector<ProgramCut> cut;
  bool timed_out = false;  // the deadline (or cancel) stopped the exploration: `done` and `cut` are partial
  std::size_t instructions = 0;
};

struct ProgramRunOptions {
  ProgramFloats floats = ProgramFloats::Ieee;
  // A block may run loop_bound + 1 times in one call (a loop's test runs once more than its body);
  // paths that would run it again are cut.
  int loop_bound = 64;
  std::size_t max_paths = 100000;  // UnsupportedError beyond
  // What the caller asks only about (a query's declarations and premise): a symbolic address is
  // split into the values it can take under this and the path condition, when at most
  // max_addresses; more are read with one term over all cells.
  std::optional<z3::expr> assume;
  std::size_t max_addresses = 1024;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  const std::atomic<bool>* cancel = nullptr;  // raised by another thread: stop as at the deadline
};

// Limits on the child processes a program needs: the compiler (and the native replay's build and
// runs, which take at most the smaller of `seconds` and 30 s each). Every compiler run sees only
// the program's folder, its own work folder and the system's tools and headers (file_view.h).
struct BuildLimits {
  double seconds = 120.0;                           // each compiler run
  std::size_t memory_bytes = std::size_t{2} << 30;  // each compiler run's address space
  const std::atomic<bool>* cancel = nullptr;        // raised: the compiler or replay is killed
};

class Program {
 public:
  // Compiles `path` (C by default, C++ for .cc/.cpp/.cxx) at -O1 and reads its IR. InputError
  // (exit 2) with the compiler's messages about the program's own files for code that does not
  // compile, for a missing or unsupported function, and for assembly or linker directives (which
  // could name other files); `where` (e.g. "q.toml: line 3") is prefixed to those messages.
  static Program compile(const std::string& path, const std::string& function, const std::string& where = "",
                         BuildLimits limits = {});
  Program(Program&&) noexcept;
  Program& operator=(Program&&) noexcept;
  ~Program();

  [[nodiscard]] const std::string& path() const;
  [[nodiscard]] const std::string& function() const;
  // The parameters in order, then every scalar global variable the module defines.
  [[nodiscard]] const std::vector<ProgramInput>& inputs() const;
  [[nodiscard]] const ProgramInput& result() const;

  // A fresh Z3 constant of the input's sort, named after it.
  [[nodiscard]] z3::expr fresh_input(z3::context& ctx, const ProgramInput& in, ProgramFloats floats) const;
  // Runs the function over `inputs` (one per inputs(); a global's entry may be nullopt: its
  // initializer). UnsupportedError naming file:line for instructions it cannot model.
  [[nodiscard]] ProgramPaths execute(z3::context& ctx, const std::vector<std::optional<z3::expr>>& inputs,
                                     const ProgramRunOptions& options) const;
  // Runs the compiled function natively in a child process (built on first use); a global's
  // entry may be nullopt (its initializer).
  [[nodiscard]] NativeValue run_native(const std::vector<std::optional<NativeValue>>& inputs) const;

  struct Impl;  // the loaded IR (program_ir.h), for the layer's own code
  [[nodiscard]] const Impl& ir() const { return *impl_; }

 private:
  explicit Program(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace witness
