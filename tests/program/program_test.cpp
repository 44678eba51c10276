// Symbolic execution of programs against their native runs: tiny programs with loops, arrays,
// floats, structs and integer overflow, over every input of a small domain.
#include "program/program.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "core/error.h"
#include "source_file.h"
#include "support/sanitized.h"

namespace witness {
namespace {

// One input value, as a term of the input's type and as the native run takes it.
struct Value {
  std::int64_t integer = 0;
  double number = 0;
};

z3::expr term_of(z3::context& ctx, const ProgramInput& in, const Value& v) {
  switch (in.kind) {
    case ProgramInput::Kind::Bool: return ctx.bool_val(v.integer != 0);
    case ProgramInput::Kind::Int: return ctx.bv_val(v.integer, in.bits);
    case ProgramInput::Kind::Float:
      return in.bits == 32 ? ctx.fpa_val(static_cast<float>(v.number)) : ctx.fpa_val(v.number);
  }
  return ctx.bool_val(false);
}

// The native result, read back as the bits the symbolic value must have.
std::uint64_t native_bits(const ProgramInput& res, const NativeValue& v) {
  if (res.kind == ProgramInput::Kind::Float) {
    return res.bits == 32 ? std::bit_cast<std::uint32_t>(static_cast<float>(v.number))
                          : std::bit_cast<std::uint64_t>(v.number);
  }
  const std::uint64_t u = res.is_signed ? static_cast<std::uint64_t>(v.integer) : v.unsigned_integer;
  return res.bits == 64 ? u : u & ((std::uint64_t{1} << res.bits) - 1);
}

std::uint64_t symbolic_bits(const ProgramInput& res, const z3::expr& value) {
  if (value.is_bool()) return value.is_true() ? 1 : 0;
  if (value.is_fpa()) {
    return z3::expr(value.ctx(), Z3_mk_fpa_to_ieee_bv(value.ctx(), value)).simplify().get_numeral_uint64();
  }
  (void)res;
  return value.get_numeral_uint64();
}

struct Outcome {
  int finished = 0;
  int cut = 0;
};

// Executes `fn` symbolically once, then for every input tuple finds the one path whose condition
// holds and compares its value with the native run (tuples on a cut path: only counted).
Outcome check_against_native(const std::string& source, const std::vector<std::vector<Value>>& domain,
                             int loop_bound = 16) {
  SourceFile file("tiny.c", source);
  const Program p = Program::compile(file.path(), "fn");
  z3::context ctx;
  std::vector<std::optional<z3::expr>> in;
  z3::expr_vector from(ctx);
  for (const auto& i : p.inputs()) {
    in.emplace_back(p.fresh_input(ctx, i, ProgramFloats::Ieee));
    from.push_back(*in.back());
  }
  ProgramRunOptions run;
  run.loop_bound = loop_bound;
  const ProgramPaths paths = p.execute(ctx, in, run);
  EXPECT_FALSE(paths.timed_out);
  Outcome out;
  std::vector<std::size_t> pick(domain.size(), 0);
  while (true) {
    z3::expr_vector to(ctx);
    std::vector<std::optional<NativeValue>> native;
    for (std::size_t k = 0; k < domain.size(); ++k) {
      const Value& v = domain[k][pick[k]];
      to.push_back(term_of(ctx, p.inputs()[k], v));
      NativeValue nv;
      nv.integer = v.integer;
      nv.unsigned_integer = static_cast<std::uint64_t>(v.integer);
      nv.number = v.number;
      native.emplace_back(nv);
    }
    int hits = 0;
    std::optional<z3::expr> value;
    for (const ProgramPath& path : paths.done) {
      if (z3::expr(path.condition).substitute(from, to).simplify().is_true()) {
        ++hits;
        value = z3::expr(path.value).substitute(from, to).simplify();
      }
    }
    bool on_cut = false;
    for (const ProgramCut& c : paths.cut)
      on_cut = on_cut || z3::expr(c.condition).substitute(from, to).simplify().is_true();
    std::string at;
    for (const auto& t : to) at += t.to_string() + " ";
    if (on_cut) {
      EXPECT_EQ(hits, 0) << at;
      ++out.cut;
    } else {
      EXPECT_EQ(hits, 1) << "inputs " << at;
      if (hits == 1) {
        EXPECT_EQ(symbolic_bits(p.result(), *value), native_bits(p.result(), p.run_native(native))) << "inputs " << at;
        ++out.finished;
      }
    }
    std::size_t k = 0;
    while (k < pick.size() && ++pick[k] == domain[k].size()) pick[k++] = 0;
    if (k == pick.size()) break;
  }
  return out;
}

std::vector<Value> ints(std::int64_t lo, std::int64_t hi, std::int64_t step = 1) {
  std::vector<Value> out;
  for (std::int64_t v = lo; v <= hi; v += step) out.push_back({v, static_cast<double>(v)});
  return out;
}

std::vector<Value> doubles(std::initializer_list<double> vs) {
  std::vector<Value> out;
  for (double v : vs) out.push_back({0, v});
  return out;
}

// Under the sanitizers every fifth n.
TEST(Program, LoopsAgreeWithNativeRuns) {
  const std::int64_t step = test::sized<std::int64_t>(1, 5);
  const Outcome o = check_against_native(R"(
    int fn(int n, int m) {
      int s = 0;
      for (int i = 0; i < n; i++) {
        if (i % 3 == m) continue;
        s += i * i - m;
      }
      while (s > 50) s /= 2;
      return s;
    })",
                                         {ints(-2, 12, step), ints(-1, 3)});
  EXPECT_EQ(o.cut, 0);
  EXPECT_EQ(o.finished, static_cast<int>(ints(-2, 12, step).size()) * 5);
}

TEST(Program, LoopBoundCutsLongRuns) {
  const Outcome o = check_against_native(
      "int fn(int n) { int s = 1; for (int i = 0; i < n; i++) s = s * 3 % 101; return s; }", {ints(0, 9)}, 5);
  // A block may run loop_bound + 1 times: the rotated loop's body runs n times, so n = 0..6 finish.
  EXPECT_EQ(o.finished, 7);
  EXPECT_EQ(o.cut, 3);
}

TEST(Program, ArraysAndOutOfBoundsReads) {
  const Outcome o = check_against_native(R"(
    static const short table[6] = {7, -3, 12, 0, 5, 9};
    int fn(int i, int j) {
      int a[4] = {3, 1, 4, 1};
      if (j >= 0 && j < 4) a[j] = table[i + 1];
      return a[(i + j) & 3] + table[j + 1];
    })",
                                         {ints(-1, 4), ints(-1, 4)});
  // table[i + 1] and table[j + 1] are in bounds for i, j in -1..4: every tuple finishes.
  EXPECT_EQ(o.finished, 36);
  const Outcome oob =
      check_against_native("int fn(int i) { static const int t[3] = {4, 5, 6}; return t[i]; }", {ints(-2, 4)});
  EXPECT_EQ(oob.finished, 3);
  EXPECT_EQ(oob.cut, 4);  // i = -2, -1, 3, 4 read outside t
}

TEST(Program, FloatsAgreeBitForBitWithNativeRuns) {
  const Outcome o = check_against_native(R"(
    #include <math.h>
    double fn(double x, int k) {
      double y = x;
      for (int i = 0; i < k; i++) y = y * 1.1 + 0.3;
      float f = (float)y / 3.0f;
      double r = fmin(fabs(y - 2.0), sqrt(fabs(y))) + f;
      if (r > 4.5) r = floor(r) - trunc(-r / 7);
      return isnan(r) ? -1.0 : r;
    })",
                                         {doubles({0.0, -0.0, 1.5, -2.25, 3.1, 1e300, -INFINITY, NAN}), ints(0, 3)});
  EXPECT_EQ(o.finished, 32);
}

TEST(Program, IntegerWrapAroundAndSignedOverflow) {
  const Outcome wrap =
      check_against_native(R"(
    unsigned fn(unsigned a, unsigned char b, short c) {
      unsigned h = a * 2654435761u + (unsigned)(b << 3);
      return h ^ (unsigned)(c >> 2) ^ (h >> 7);
    })",
                           {{{0, 0}, {1, 1}, {4294967295, 0}, {123456789, 0}}, ints(250, 255), ints(-3, 3)});
  EXPECT_EQ(wrap.finished, 4 * 6 * 7);
  // Signed overflow is undefined behaviour in C: those inputs are cut, with the line.
  SourceFile file("overflow.c", "int fn(int a) {\n  return a * 100000;\n}\n");
  const Program p = Program::compile(file.path(), "fn");
  z3::context ctx;
  const ProgramPaths paths = p.execute(ctx, {p.fresh_input(ctx, p.inputs()[0], ProgramFloats::Ieee)}, {});
  ASSERT_EQ(paths.cut.size(), 1U);
  EXPECT_NE(paths.cut[0].reason.find("overflow.c:2: signed integer overflow"), std::string::npos)
      << paths.cut[0].reason;
}

TEST(Program, StructsCallsAndSwitches) {
  const Outcome o = check_against_native(R"(
    #include <stdbool.h>
    struct point { int x; double y; bool flag; };
    static double weigh(const struct point* p, int k) {
      switch (k) {
        case 0: return p->x * 2.0;
        case 1: return p->y - p->x;
        case 7: return p->flag ? 1.0 : -1.0;
        default: return 0.5;
      }
    }
    static int sign(double v) { return v > 0 ? 1 : v < 0 ? -1 : 0; }
    int fn(int x, bool flag, signed char k) {
      struct point pts[2] = {{x, 0.25 * x, flag}, {-x, 3.0, !flag}};
      struct point q = pts[flag];
      return sign(weigh(&q, k)) + 10 * sign(weigh(&pts[0], k + 1));
    })",
                                         {ints(-2, 2), ints(0, 1), ints(-1, 8)});
  EXPECT_EQ(o.finished, 5 * 2 * 10);
}

TEST(Program, DecisionThroughAnOutParameter) {
  const Outcome o = check_against_native(R"(
    void fn(int x, short* action, double y) {
      *action = 3;
      if (x > 2 && y < 1.5) *action = (short)(x * 2);
    })",
                                         {ints(0, 4), doubles({0.5, 1.5, -2.0})});
  EXPECT_EQ(o.finished, 15);
  const Outcome b =
      check_against_native("#include <stdbool.h>\nvoid fn(bool* stay, int x) { *stay = x % 3 == 1; }", {ints(-4, 4)});
  EXPECT_EQ(b.finished, 9);
  // A decision never written is undefined: those inputs are cut.
  const Outcome u = check_against_native("void fn(int* out, int x) { if (x > 0) *out = x; }", {ints(-2, 2)});
  EXPECT_EQ(u.finished, 2);
  EXPECT_EQ(u.cut, 3);
}

TEST(Program, BadProgramsNameFileAndLine) {
  {
    SourceFile f("syntax.c", "int decide(int x) {\n  return x +;\n}\n");
    try {
      (void)Program::compile(f.path(), "decide", "q.toml: line 3");
      FAIL() << "no error";
    } catch (const InputError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("q.toml: line 3: program"), std::string::npos) << m;
      EXPECT_NE(m.find("syntax.c:2:"), std::string::npos) << m;  // clang's own message, file:line
      EXPECT_EQ(e.exit_code(), 2);
    }
  }
  {
    SourceFile f("nofn.c", "int choose(int x) { return x; }\n");
    try {
      (void)Program::compile(f.path(), "decide");
      FAIL() << "no error";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("defines no function 'decide' (it defines: choose)"), std::string::npos)
          << e.what();
    }
  }
  {
    SourceFile f("ptr.c", "int decide(int* x) { return *x; }\n");
    EXPECT_THROW((void)Program::compile(f.path(), "decide"), InputError);
  }
  {
    SourceFile f("exp.c", "#include <math.h>\nint decide(double x) {\n  return exp(x) > 2.0;\n}\n");
    const Program p = Program::compile(f.path(), "decide");
    z3::context ctx;
    try {
      (void)p.execute(ctx, {p.fresh_input(ctx, p.inputs()[0], ProgramFloats::Ieee)}, {});
      FAIL() << "no error";
    } catch (const UnsupportedError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("exp.c:3: a call to 'exp'"), std::string::npos) << m;
    }
  }
}

TEST(Program, GlobalsAreInputsAndKeepTheirInitializers) {
  SourceFile f("g.c", "int threshold = 5;\nconst int unused = 1;\nint decide(int x) { return x > threshold; }\n");
  const Program p = Program::compile(f.path(), "decide");
  ASSERT_EQ(p.inputs().size(), 2U);
  EXPECT_EQ(p.inputs()[1].name, "threshold");
  EXPECT_TRUE(p.inputs()[1].global);
  NativeValue seven;
  seven.integer = 7;
  NativeValue nine;
  nine.integer = 9;
  EXPECT_EQ(p.run_native({seven, std::nullopt}).integer, 1);  // 7 > 5
  EXPECT_EQ(p.run_native({seven, nine}).integer, 0);          // 7 > 9
}

}  // namespace
}  // namespace witness
