#include "program/program.h"

#include <fmt/format.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/InstrTypes.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "program/file_view.h"
#include "program/process.h"
#include "program/program_ir.h"
#include "program/sandbox.h"

namespace witness {

namespace {

namespace fs = std::filesystem;

// The flags of both builds (the analysed IR and the native replay): -O1 gives SSA registers for
// locals; no contraction to fma, no vectorising or unrolling, so the IR keeps the source's
// operations and the native build computes exactly what the IR says.
const std::vector<std::string> kClangFlags = {"-O1",
                                              "-g",
                                              "-fno-discard-value-names",
                                              "-ffp-contract=off",
                                              "-fno-vectorize",
                                              "-fno-slp-vectorize",
                                              "-fno-unroll-loops",
                                              "-Wno-everything"};
constexpr double kRunSeconds = 30.0;

std::string prefix(const std::string& where) { return where.empty() ? "" : where + ": "; }

bool is_cpp(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  return ext == ".cc" || ext == ".cpp" || ext == ".cxx" || ext == ".C" || ext == ".c++";
}

// The compiler's messages, at most `lines` lines of them.
std::string first_lines(const std::string& text, std::size_t lines) {
  std::istringstream in(text);
  std::string line;
  std::string out;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    if (n++ == lines) {
      out += "\n  ...";
      break;
    }
    out += (out.empty() ? "" : "\n") + std::string("  ") + line;
  }
  return out;
}

// Where a program's build may read: its own folder and the system's C and C++ headers.
bool readable_by_build(const fs::path& file, const fs::path& program_dir) {
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(file, ec);
  if (ec) return false;
  auto under = [&](const fs::path& root) {
    const auto [end, _] = std::mismatch(root.begin(), root.end(), real.begin(), real.end());
    return end == root.end();
  };
  return under(program_dir) || under("/usr/include") || under("/usr/lib/llvm-14/lib/clang") || under("/usr/lib/gcc");
}

// The file names of a make rule (`clang -M`): "target: a b \\\n c", spaces in names escaped.
std::vector<std::string> make_rule_files(const std::string& rule) {
  std::vector<std::string> files;
  std::string name;
  bool target = true;
  for (std::size_t i = 0; i < rule.size(); ++i) {
    const char c = rule[i];
    if (c == '\\' && i + 1 < rule.size() && (rule[i + 1] == ' ' || rule[i + 1] == '\n')) {
      if (rule[i + 1] == ' ') name += ' ';
      ++i;
    } else if (c == ' ' || c == '\n' || c == '\t') {
      if (!name.empty() && !target) files.push_back(name);
      if (!name.empty() && name.back() == ':') target = false;
      name.clear();
    } else {
      name += c;
    }
  }
  if (!name.empty() && !target) files.push_back(name);
  return files;
}

// Where the compiler runs: what it may read (the program's folder, the system's tools and headers)
// and write (the work folder), and its limits.
struct BuildSite {
  std::string program_dir, work_dir;
  BuildLimits limits;
};

ProcessResult clang(std::vector<std::string> args, const BuildSite& site);

// The file an #include, #include_next or #import line names as written ("" for other lines).
std::string included_name(const std::string& line) {
  std::size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return "";
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string::npos) return "";
  std::size_t word_end = i;
  while (word_end < line.size() &&
         (std::isalpha(static_cast<unsigned char>(line[word_end])) != 0 || line[word_end] == '_')) {
    ++word_end;
  }
  const std::string word = line.substr(i, word_end - i);
  if (word != "include" && word != "include_next" && word != "import") return "";
  i = line.find_first_not_of(" \t", word_end);
  if (i == std::string::npos || (line[i] != '"' && line[i] != '<')) return "";
  const std::size_t close = line.find(line[i] == '"' ? '"' : '>', i + 1);
  return close == std::string::npos ? "" : line.substr(i + 1, close - i - 1);
}

// clang's error lines about the program's own files (file:line:column: error: ...), without
// source excerpts: a message about another file could quote it.
std::string own_errors(const std::string& err, const fs::path& dir, const std::string& none) {
  std::string errors;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (line.find("error:") != std::string::npos && readable_by_build(line.substr(0, line.find(':')), dir))
      errors += line + "\n";
  }
  return errors.empty() ? none : errors;
}

// A program is untrusted (witness serve compiles what a client uploads): its build may read only
// its own folder and the system headers, or clang's messages would show another file's text.
// Absolute and escaping #include lines are refused as written; then the preprocessor's list of
// every file read (macros can build a name) is checked, links resolved.
void check_includes(const std::string& path, std::vector<std::string> args, const std::string& where,
                    const BuildSite& site) {
  const fs::path dir = site.program_dir;
  std::ifstream in(path);
  std::size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::string named = included_name(line);
    if (named.empty()) continue;
    const fs::path p = named;
    const bool escapes = std::any_of(p.begin(), p.end(), [](const fs::path& step) { return step == ".."; });
    if (p.is_absolute() || escapes) {
      throw InputError(
          fmt::format("{}program {}:{}: #include \"{}\" names a file outside the program's folder; "
                      "only its own headers and the system's may be included",
                      where.empty() ? "" : where + ": ", path, number, named));
    }
  }
  args.insert(args.end(), {"-M", path});
  const ProcessResult r = clang(args, site);
  for (const std::string& file : make_rule_files(r.out)) {
    if (!readable_by_build(file, dir)) {
      throw InputError(
          fmt::format("{}program {} includes {}, outside the program's folder; only its own "
                      "headers and the system's may be included",
                      where.empty() ? "" : where + ": ", path, file));
    }
  }
  if (r.timed_out) {
    throw InputError(fmt::format("{}program {}: reading its #include files took over {} s", prefix(where), path,
                                 site.limits.seconds));
  }
  // The file view refused a file the checks above did not see named (a macro built its name).
  std::istringstream err(r.err);
  for (std::string line; std::getline(err, line);) {
    const std::size_t at = line.find("cannot open file '");
    const std::size_t end = line.rfind("': Permission denied");
    if (at != std::string::npos && end != std::string::npos && end > at + 18) {
      throw InputError(
          fmt::format("{}program {} includes {}, outside the program's folder; only its own headers "
                      "and the system's may be included",
                      prefix(where), path, line.substr(at + 18, end - at - 18)));
    }
  }
  if (r.exit_code != 0) {
    throw InputError(fmt::format("{}program {} does not compile (clang-14{}):\n{}", prefix(where), path,
                                 r.exit_code < 0 ? ", out of memory or killed" : "",
                                 first_lines(own_errors(r.err, dir, "an included file cannot be read"), 10)));
  }
}

// Assembly and linker directives reach the native build's assembler and linker, which read any
// file they name (.incbin "/etc/shadow", .include, #pragma comment(lib)); a decision function
// needs none of them, so a program with any is refused outright.
void check_no_directives(const llvm::Module& m, const std::string& path, const std::string& where) {
  auto refuse = [&](const std::string& what) {
    throw InputError(
        fmt::format("{}program {}: {}; assembly and linker directives are not allowed in a "
                    "program witness compiles",
                    prefix(where), path, what));
  };
  if (!m.getModuleInlineAsm().empty()) refuse("it has top-level assembly (asm at file scope)");
  for (const char* name : {"llvm.linker.options", "llvm.dependent-libraries"})
    if (m.getNamedMetadata(name) != nullptr) refuse("it names libraries or linker options (#pragma comment)");
  for (const llvm::Function& f : m) {
    for (const llvm::BasicBlock& b : f) {
      for (const llvm::Instruction& i : b) {
        const auto* call = llvm::dyn_cast<llvm::CallBase>(&i);
        if (call != nullptr && call->isInlineAsm()) {
          const llvm::DILocation* loc = i.getDebugLoc().get();
          refuse(loc != nullptr ? fmt::format("line {} has inline assembly", loc->getLine())
                                : fmt::format("function '{}' has inline assembly", f.getName().str()));
        }
      }
    }
  }
  // Section names go to the assembler as written: only plain names.
  auto plain = [](llvm::StringRef s) {
    return std::all_of(s.begin(), s.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '$';
    });
  };
  for (const llvm::GlobalObject& g : m.global_objects())
    if (g.hasSection() && !plain(g.getSection()))
      refuse(fmt::format("'{}' has an unusual section name", g.getName().str()));
}

ProcessResult clang(std::vector<std::string> args, const BuildSite& site) {
  args.insert(args.begin(), "clang-14");
  // /etc: only what the dynamic loader and clang's distribution check read.
  const FileView view{{site.program_dir, "/usr", "/etc/ld.so.cache", "/etc/os-release", "/etc/debian_version",
                       "/etc/lsb-release", "/dev/null", "/dev/urandom"},
                      {site.work_dir}};
  try {
    ProcessResult r = run_in_view(
        args, view,
        {.seconds = site.limits.seconds, .memory_bytes = site.limits.memory_bytes, .cancel = site.limits.cancel});
    if (r.cancelled) throw InputError("the run was cancelled while compiling the program");
    return r;
  } catch (const InternalError& e) {
    throw InternalError(fmt::format("{} (clang-14 is installed by scripts/setup)", e.what()));
  }
}

// Follows typedefs and qualifiers to the basic type, for signedness and the C spelling.
const llvm::DIType* base_type(const llvm::DIType* t) {
  while (const auto* d = llvm::dyn_cast_or_null<llvm::DIDerivedType>(t)) {
    if (d->getTag() != llvm::dwarf::DW_TAG_typedef && d->getTag() != llvm::dwarf::DW_TAG_const_type &&
        d->getTag() != llvm::dwarf::DW_TAG_volatile_type) {
      break;
    }
    t = d->getBaseType();
  }
  return t;
}

// The kind of a scalar LLVM type; `debug` (may be null) says signedness and bool-ness.
std::optional<ProgramInput> scalar(const llvm::Type* t, const llvm::DIType* debug) {
  ProgramInput in;
  const auto* basic = llvm::dyn_cast_or_null<llvm::DIBasicType>(base_type(debug));
  if (basic != nullptr) in.type_name = basic->getName().str();
  if (t->isIntegerTy()) {
    in.bits = t->getIntegerBitWidth();
    const bool boolean = in.bits == 1 || (basic != nullptr && basic->getEncoding() == llvm::dwarf::DW_ATE_boolean);
    if (in.bits != 1 && in.bits != 8 && in.bits != 16 && in.bits != 32 && in.bits != 64) return std::nullopt;
    in.kind = boolean ? ProgramInput::Kind::Bool : ProgramInput::Kind::Int;
    in.is_signed = basic == nullptr || (basic->getEncoding() != llvm::dwarf::DW_ATE_unsigned &&
                                        basic->getEncoding() != llvm::dwarf::DW_ATE_unsigned_char);
    if (in.type_name.empty()) in.type_name = fmt::format("int{}_t", in.bits);
    return in;
  }
  if (t->isFloatTy() || t->isDoubleTy()) {
    in.kind = ProgramInput::Kind::Float;
    in.bits = t->isFloatTy() ? 32 : 64;
    if (in.type_name.empty()) in.type_name = in.bits == 32 ? "float" : "double";
    return in;
  }
  return std::nullopt;
}

std::string llvm_type_name(const llvm::Type* t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t->print(os);
  return os.str();
}

// The C spelling the harness uses for an input of this kind (the ABI type).
std::string c_type(const ProgramInput& in) {
  if (in.kind == ProgramInput::Kind::Float) return in.bits == 32 ? "float" : "double";
  if (in.kind == ProgramInput::Kind::Bool) return in.bits == 1 ? "_Bool" : "unsigned char";
  return fmt::format("{}int{}_t", in.is_signed ? "" : "u", in.bits);
}

llvm::Function* find_function(llvm::Module& m, const std::string& name, const std::string& where,
                              const std::string& path) {
  std::vector<llvm::Function*> matches;
  std::string defined;
  for (llvm::Function& f : m) {
    if (f.isDeclaration() || f.getName().startswith("llvm.")) continue;
    const std::string raw = f.getName().str();
    std::string plain = llvm::demangle(raw);
    const auto paren = plain.find('(');
    if (paren != std::string::npos) plain = plain.substr(0, paren);
    defined += (defined.empty() ? "" : ", ") + plain;
    if (raw == name || plain == name) matches.push_back(&f);
  }
  if (matches.empty()) {
    throw InputError(fmt::format("{}program {} defines no function '{}' (it defines: {})", prefix(where), path, name,
                                 defined.empty() ? "none" : defined));
  }
  if (matches.size() > 1) {
    throw InputError(fmt::format("{}program {} has {} overloads of '{}'; give the decision function a unique name",
                                 prefix(where), path, matches.size(), name));
  }
  return matches[0];
}

}  // namespace

Program::Impl::~Impl() {
  if (!work_dir.empty()) {
    std::error_code ec;
    fs::remove_all(work_dir, ec);
  }
}

std::string source_line(const Program::Impl& ir, const llvm::Instruction& inst) {
  if (const llvm::DILocation* loc = inst.getDebugLoc().get()) {
    return fmt::format("{}:{}", loc->getFilename().str(), loc->getLine());
  }
  return fmt::format("{}: function '{}'", ir.path, inst.getFunction()->getName().str());
}

Program::Program(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Program::Program(Program&&) noexcept = default;
Program& Program::operator=(Program&&) noexcept = default;
Program::~Program() = default;

const std::string& Program::path() const { return impl_->path; }
const std::string& Program::function() const { return impl_->function_name; }
const std::vector<ProgramInput>& Program::inputs() const { return impl_->inputs; }
const ProgramInput& Program::result() const { return impl_->result; }

Program Program::compile(const std::string& path, const std::string& function, const std::string& where,
                         BuildLimits limits) {
  if (!fs::is_regular_file(path)) throw InputError(fmt::format("{}program {} not found", prefix(where), path));
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->function_name = function;
  impl->where = where;
  impl->limits = limits;
  std::string dir = (fs::temp_directory_path() / "witness-program-XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) throw InternalError("cannot create a temporary folder for the program build");
  impl->work_dir = dir;
  impl->program_dir = fs::weakly_canonical(fs::absolute(path).parent_path()).string();
  const BuildSite site{impl->program_dir, impl->work_dir, limits};
  const std::string bitcode = dir + "/program.bc";
  std::vector<std::string> args = {"-x", is_cpp(path) ? "c++" : "c"};
  if (is_cpp(path)) args.emplace_back("-std=c++17");
  args.insert(args.end(), kClangFlags.begin(), kClangFlags.end());
  check_includes(path, args, where, site);
  args.insert(args.end(), {"-emit-llvm", "-c", path, "-o", bitcode});
  const ProcessResult r = clang(args, site);
  if (r.exit_code != 0) {
    throw InputError(
        fmt::format("{}program {} does not compile (clang-14{}):\n{}", prefix(where), path,
                    r.timed_out       ? ", time limit"
                    : r.exit_code < 0 ? ", out of memory or killed"
                                      : "",
                    first_lines(own_errors(r.err, impl->program_dir, "no message about its own files"), 10)));
  }
  impl->context = std::make_unique<llvm::LLVMContext>();
  llvm::SMDiagnostic diag;
  impl->module = llvm::parseIRFile(bitcode, diag, *impl->context);
  if (!impl->module) {
    throw InternalError(
        fmt::format("{}cannot read the IR clang-14 made of {}: {}", prefix(where), path, diag.getMessage().str()));
  }
  check_no_directives(*impl->module, path, where);
  llvm::Function* f = find_function(*impl->module, function, where, path);
  impl->function = f;
  impl->symbol = f->getName().str();
  if (f->isVarArg()) {
    throw InputError(
        fmt::format("{}program {}: '{}' takes variable arguments; the decision function needs fixed "
                    "scalar parameters",
                    prefix(where), path, function));
  }

  // Parameters: names from the IR (kept by -fno-discard-value-names), signedness from debug info.
  const llvm::DISubprogram* sp = f->getSubprogram();
  llvm::DITypeRefArray types;
  if (sp != nullptr && sp->getType() != nullptr) types = sp->getType()->getTypeArray();
  auto debug_type = [&](unsigned i) -> const llvm::DIType* {
    return i < types.size() ? types[i] : nullptr;  // 0 is the return type
  };
  for (llvm::Argument& a : f->args()) {
    const std::string name = a.getName().empty() ? fmt::format("arg{}", a.getArgNo()) : a.getName().str();
    if (f->getReturnType()->isVoidTy() && a.getType()->isPointerTy() && impl->out_arg < 0) {
      // A void function returns its decision through its first pointer parameter (int* action).
      const auto* ptr = llvm::dyn_cast_or_null<llvm::DIDerivedType>(base_type(debug_type(a.getArgNo() + 1)));
      const llvm::DIType* pointee = ptr != nullptr ? base_type(ptr->getBaseType()) : nullptr;
      const auto* basic = llvm::dyn_cast_or_null<llvm::DIBasicType>(pointee);
      const auto bits = basic != nullptr ? static_cast<unsigned>(basic->getSizeInBits()) : 0U;
      const bool is_float = basic != nullptr && basic->getEncoding() == llvm::dwarf::DW_ATE_float;
      llvm::Type* t =
          is_float ? (bits == 32 ? llvm::Type::getFloatTy(*impl->context) : llvm::Type::getDoubleTy(*impl->context))
                   : llvm::Type::getIntNTy(*impl->context, std::max(bits, 1U));
      auto out = basic != nullptr && (!is_float || bits == 32 || bits == 64) ? scalar(t, pointee) : std::nullopt;
      if (!out) {
        throw InputError(
            fmt::format("{}program {}: the out-parameter '{}' of '{}' must point to a bool, integer, "
                        "float or double",
                        prefix(where), path, name, function));
      }
      out->name = name;
      impl->result = *out;
      impl->out_arg = static_cast<int>(a.getArgNo());
      impl->out_type = t;
      continue;
    }
    auto in = scalar(a.getType(), debug_type(a.getArgNo() + 1));
    if (!in) {
      throw InputError(
          fmt::format("{}program {}: parameter '{}' of '{}' has type {}; decision functions take "
                      "bool, integer, float and double parameters",
                      prefix(where), path, name, function, llvm_type_name(a.getType())));
    }
    in->name = name;
    impl->inputs.push_back(*in);
  }
  // Scalar globals a query may declare as inputs (named as in the source; static locals have dots).
  for (llvm::GlobalVariable& g : impl->module->globals()) {
    if (!g.hasInitializer() || g.isConstant() || g.getName().contains('.')) continue;
    llvm::SmallVector<llvm::DIGlobalVariableExpression*, 1> gv;
    g.getDebugInfo(gv);
    auto in = scalar(g.getValueType(), gv.empty() ? nullptr : gv[0]->getVariable()->getType());
    if (!in) continue;
    in->name = g.getName().str();
    in->global = true;
    impl->inputs.push_back(*in);
    impl->globals.push_back(&g);
  }
  if (impl->out_arg >= 0) return Program(std::move(impl));
  auto ret = scalar(f->getReturnType(), debug_type(0));
  if (!ret) {
    throw InputError(
        fmt::format("{}program {}: '{}' returns {}; the decision must be returned as a bool, "
                    "integer, float or double (or written through an out-parameter of a void function)",
                    prefix(where), path, function, llvm_type_name(f->getReturnType())));
  }
  ret->name = "return";
  impl->result = *ret;
  return Program(std::move(impl));
}

z3::expr Program::fresh_input(z3::context& ctx, const ProgramInput& in, ProgramFloats floats) const {
  const char* name = in.name.c_str();
  switch (in.kind) {
    case ProgramInput::Kind::Bool: return ctx.bool_const(name);
    case ProgramInput::Kind::Int: return ctx.bv_const(name, in.bits);
    case ProgramInput::Kind::Float:
      if (floats == ProgramFloats::Real) return ctx.real_const(name);
      return ctx.constant(name, in.bits == 32 ? ctx.fpa_sort(8, 24) : ctx.fpa_sort(11, 53));
  }
  throw InternalError("program: unknown input kind");
}

namespace {

// A harness that reads the inputs from argv (integers in decimal, floats in hex: exact), calls the
// function and prints the result. It links against the same bitcode, with the function and
// declared globals made external so the harness can reach them.
std::string native_harness(const Program::Impl& ir) {
  std::string decls;
  std::string sets;
  std::string params;
  std::string args;
  const auto out_position = static_cast<std::size_t>(ir.out_arg);
  auto out_here = [&](std::size_t params_so_far) {
    if (ir.out_arg >= 0 && params_so_far == out_position) {
      params += fmt::format("{}{}*", params.empty() ? "" : ", ", c_type(ir.result));
      args += fmt::format("{}&r", args.empty() ? "" : ", ");
    }
  };
  std::size_t n_params = 0;
  for (std::size_t i = 0; i < ir.inputs.size(); ++i) {
    const ProgramInput& in = ir.inputs[i];
    const std::string type = c_type(in);
    if (!in.global) out_here(n_params++);
    const std::string read = in.kind == ProgramInput::Kind::Float ? fmt::format("strtod(argv[{}], 0)", i + 1)
                             : in.is_signed && in.kind == ProgramInput::Kind::Int
                                 ? fmt::format("strtoll(argv[{}], 0, 10)", i + 1)
                                 : fmt::format("strtoull(argv[{}], 0, 10)", i + 1);
    if (in.global) {
      decls += fmt::format("extern {} witness_global_{} __asm__(\"{}\");\n", type, i, in.name);
      sets += fmt::format("  if (argv[{}][0] != '-' || argv[{}][1] != 0) witness_global_{} = ({}){};\n", i + 1, i + 1,
                          i, type, read);
    } else {
      params += fmt::format("{}{}", params.empty() ? "" : ", ", type);
      args += fmt::format("{}({}){}", args.empty() ? "" : ", ", type, read);
    }
  }
  out_here(n_params);
  const ProgramInput& res = ir.result;
  const std::string print = res.kind == ProgramInput::Kind::Float ? "printf(\"%a\\n\", (double)r);"
                            : res.is_signed && res.kind == ProgramInput::Kind::Int
                                ? "printf(\"%lld\\n\", (long long)r);"
                                : "printf(\"%llu\\n\", (unsigned long long)r);";
  return fmt::format(
      "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n{}"
      "extern {} witness_decide({}) __asm__(\"{}\");\n"
      "int main(int argc, char** argv) {{\n  if (argc != {}) return 3;\n{}  {} r = 0;\n  {}witness_decide({});\n"
      "  {}\n  return 0;\n}}\n",
      decls, ir.out_arg >= 0 ? "void" : c_type(res), params.empty() ? "void" : params, ir.symbol, ir.inputs.size() + 1,
      sets, c_type(res), ir.out_arg >= 0 ? "" : "r = ", args, print);
}

// The harness and the program's bitcode built into one static executable; its path.
std::string build_native(const Program::Impl& ir) {
  const std::string harness = native_harness(ir);
  const std::string harness_path = ir.work_dir + "/harness.c";
  const std::string linked = ir.work_dir + "/native.bc";
  std::string exe = ir.work_dir + "/native";
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(harness_path, ec);
    if (ec) throw InternalError(fmt::format("cannot write {}: {}", harness_path, ec.message()));
    out << harness;
  }
  // Internal linkage would hide the function and globals from the harness.
  ir.function->setLinkage(llvm::GlobalValue::ExternalLinkage);
  for (llvm::GlobalVariable* g : ir.globals) g->setLinkage(llvm::GlobalValue::ExternalLinkage);
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(linked, ec);
    if (ec) throw InternalError(fmt::format("cannot write {}: {}", linked, ec.message()));
    llvm::WriteBitcodeToFile(*ir.module, out);
  }
  // Static: the sandbox lets the replay open no file, not even the dynamic loader's libraries.
  std::vector<std::string> a = {
      "-O1", "-ffp-contract=off", "-Wno-everything", "-static", linked, harness_path, "-lm", "-o", exe};
  const ProcessResult r = clang(a, BuildSite{ir.program_dir, ir.work_dir, ir.limits});
  if (r.exit_code != 0) {
    // Not the linker's messages: they could quote what the program made it read.
    throw InputError(fmt::format("cannot build the native replay of {} (clang-14 {})", ir.path,
                                 r.timed_out       ? "ran out of time"
                                 : r.exit_code < 0 ? "was killed"
                                                   : fmt::format("exit {}", r.exit_code)));
  }
  return exe;
}

// The inputs as the harness reads them ("-" keeps a global's own initial value).
std::vector<std::string> native_args(const Program::Impl& ir, const std::vector<std::optional<NativeValue>>& inputs) {
  std::vector<std::string> argv;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const ProgramInput& in = ir.inputs[i];
    if (!inputs[i]) {
      if (!in.global) throw InternalError("program: run_native needs a value for every parameter");
      argv.emplace_back("-");
    } else if (in.kind == ProgramInput::Kind::Bool) {
      argv.emplace_back(inputs[i]->integer != 0 ? "1" : "0");
    } else if (in.kind == ProgramInput::Kind::Float) {
      argv.push_back(fmt::format("{:a}", inputs[i]->number));
    } else if (in.kind == ProgramInput::Kind::Int && in.is_signed) {
      argv.push_back(fmt::format("{}", inputs[i]->integer));
    } else {
      argv.push_back(fmt::format("{}", inputs[i]->unsigned_integer));
    }
  }
  return argv;
}

}  // namespace

NativeValue Program::run_native(const std::vector<std::optional<NativeValue>>& inputs) const {
  const Impl& ir = *impl_;
  if (inputs.size() != ir.inputs.size()) throw InternalError("program: run_native needs one value per input");
  if (ir.native.empty()) ir.native = build_native(ir);
  const std::vector<std::string> argv = native_args(ir, inputs);
  SandboxLimits limits;
  limits.seconds = std::min(kRunSeconds, ir.limits.seconds);
  limits.cancel = ir.limits.cancel;
  const ProcessResult r = run_sandboxed(ir.native, argv, limits);
  if (r.cancelled) throw InputError("the run was cancelled while replaying the program natively");
  if (r.exit_code != 0) {
    // The program's own doing (a crash, a refused system call, a loop): an answer about this
    // input cannot be checked natively.
    // What it printed is not shown: an uploaded program's output is not the client's to read.
    throw InputError(fmt::format("the native run of {} on the scenario failed ({})", ir.path,
                                 r.timed_out        ? "time limit"
                                 : r.output_limited ? "it printed more than 1 MB"
                                 : r.exit_code < 0  ? "ended by a signal"
                                                    : fmt::format("exit code {}", r.exit_code)));
  }
  NativeValue v;
  const char* text = r.out.c_str();
  if (ir.result.kind == ProgramInput::Kind::Float) {
    v.number = std::strtod(text, nullptr);
  } else if (ir.result.kind == ProgramInput::Kind::Int && ir.result.is_signed) {
    v.integer = std::strtoll(text, nullptr, 10);
    v.number = static_cast<double>(v.integer);
  } else {
    v.unsigned_integer = std::strtoull(text, nullptr, 10);
    v.integer = static_cast<std::int64_t>(v.unsigned_integer);
    v.number = static_cast<double>(v.unsigned_integer);
  }
  return v;
}

}  // namespace witness
