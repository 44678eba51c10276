// Symbolic execution of the decision function's LLVM IR over Z3 terms. Each path carries its
// condition, registers and a copy-on-write memory of typed cells at concrete byte offsets; a
// branch on a symbolic condition forks. Paths are not checked for feasibility while exploring:
// the caller's query decides over the disjunction of all finished paths, and cut paths (loop
// bound, undefined behaviour) are reported with their conditions so the caller can check them.
#include <fmt/format.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/GetElementPtrTypeIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Operator.h>

#include <map>
#include <unordered_map>

#include "core/error.h"
#include "program/program.h"
#include "program/program_ir.h"
#include "solver/rational.h"
#include "solver/z3_check.h"

namespace witness {

namespace {

// floor of a real, as an integer term.
z3::expr to_int(const z3::expr& r) { return {r.ctx(), Z3_mk_real2int(r.ctx(), r)}; }

struct Val {
  enum class Kind : std::uint8_t { Bool, Int, Float, Pointer } kind;
  z3::expr term;    // Pointer: the byte offset, a 64-bit vector
  int object = -1;  // Pointer: the object; -1 is null
};

struct Cell {
  std::uint64_t size;
  const llvm::Type* type;
  Val value;
};

struct Object {
  std::string name;
  std::uint64_t size = 0;
  std::map<std::uint64_t, Cell> cells;
  bool zero = false;      // bytes without a cell read as zero
  bool constant = false;  // a const global
};

struct Frame {
  const llvm::Function* function = nullptr;
  const llvm::BasicBlock* block = nullptr;
  llvm::BasicBlock::const_iterator at;
  std::unordered_map<const llvm::Value*, Val> regs;
  std::unordered_map<const llvm::BasicBlock*, int> visits;
};

struct State {
  std::vector<Frame> stack;
  std::vector<std::shared_ptr<Object>> memory;
  z3::expr pc;
  // Symbolic addresses this path split on, with the value it took: a later address at a constant
  // distance from one of them (the next field of the same row) needs no new split.
  std::vector<std::pair<z3::expr, std::uint64_t>> pinned;
};

// Thrown inside a step to end the current path as cut, with a reason.
struct PathCut {
  std::string reason;
};

class Executor {
 public:
  Executor(const Program::Impl& ir, z3::context& ctx, const ProgramRunOptions& options)
      : ir_(ir), ctx_(ctx), options_(options), layout_(ir.module.get()), addresses_(make_z3_solver(ctx)) {
    if (options.assume) addresses_.add(*options.assume);
  }

  ProgramPaths run(const std::vector<std::optional<z3::expr>>& inputs) {
    State s{{}, {}, ctx_.bool_val(true), {}};
    for (const llvm::GlobalVariable& g : ir_.module->globals()) {
      auto obj = std::make_shared<Object>();
      obj->name = g.getName().str();
      obj->size = layout_.getTypeAllocSize(g.getValueType());
      obj->constant = g.isConstant();
      if (g.hasInitializer()) initialize(*obj, 0, g.getInitializer());
      global_index_[&g] = static_cast<int>(s.memory.size());
      s.memory.push_back(std::move(obj));
    }
    Frame top;
    top.function = ir_.function;
    std::size_t k = 0;
    for (const llvm::Argument& a : ir_.function->args()) {
      if (static_cast<int>(a.getArgNo()) == ir_.out_arg) {
        auto obj = std::make_shared<Object>();
        obj->name = a.getName().str();
        obj->size = layout_.getTypeStoreSize(ir_.out_type);
        out_object_ = static_cast<int>(s.memory.size());
        s.memory.push_back(std::move(obj));
        top.regs.emplace(&a, Val{Val::Kind::Pointer, ctx_.bv_val(0, 64), out_object_});
        continue;
      }
      top.regs.emplace(&a, input_value(ir_.inputs[k], *inputs.at(k)));
      ++k;
    }
    for (std::size_t g = 0; k < ir_.inputs.size(); ++k, ++g) {
      if (!inputs.at(k)) continue;
      const llvm::GlobalVariable* gv = ir_.globals[g];
      Object& obj = *s.memory[static_cast<std::size_t>(global_index_.at(gv))];
      Val v = input_value(ir_.inputs[k], *inputs[k]);
      if (v.kind == Val::Kind::Bool) v = Val{Val::Kind::Int, bool_to_bv(v.term, 8)};  // C's bool in memory: a byte
      obj.cells.clear();
      obj.cells.emplace(0, Cell{obj.size, gv->getValueType(), v});
    }
    enter(top, &ir_.function->getEntryBlock(), nullptr);
    s.stack.push_back(std::move(top));
    std::vector<State> work;
    work.push_back(std::move(s));
    while (!work.empty()) {
      State st = std::move(work.back());
      work.pop_back();
      explore(st, work);
      if (out_.timed_out) break;
      if (out_.done.size() + out_.cut.size() + work.size() > options_.max_paths) {
        throw UnsupportedError(fmt::format(
            "program {}: more than {} paths over the query's inputs; constrain the inputs or simplify the program",
            ir_.path, options_.max_paths));
      }
    }
    return std::move(out_);
  }

 private:
  // --- values -------------------------------------------------------------------------------
  [[nodiscard]] bool real() const { return options_.floats == ProgramFloats::Real; }
  [[nodiscard]] z3::sort fp_sort(unsigned bits) const {
    return bits == 32 ? ctx_.fpa_sort(8, 24) : ctx_.fpa_sort(11, 53);
  }
  [[nodiscard]] z3::expr wrap(Z3_ast a) const {
    ctx_.check_error();
    return {ctx_, a};
  }
  [[nodiscard]] z3::expr rne() const { return wrap(Z3_mk_fpa_rne(ctx_)); }

  [[nodiscard]] z3::expr float_numeral(double v, unsigned bits) const {
    if (real()) {
      if (!std::isfinite(v))
        throw UnsupportedError(
            fmt::format("program {}: a non-finite float constant has no "
                        "real value; ask in float semantics",
                        ir_.path));
      return ctx_.real_val(Rational::from_double(v).to_string().c_str());
    }
    if (std::isnan(v)) return ctx_.fpa_nan(fp_sort(bits));
    if (std::isinf(v)) return ctx_.fpa_inf(fp_sort(bits), v < 0);
    if (v == 0) return wrap(Z3_mk_fpa_zero(ctx_, fp_sort(bits), std::signbit(v)));
    return bits == 32 ? ctx_.fpa_val(static_cast<float>(v)) : ctx_.fpa_val(v);
  }

  [[nodiscard]] z3::expr bool_to_bv(const z3::expr& b, unsigned bits) const {
    return fold(z3::ite(b, ctx_.bv_val(1, bits), ctx_.bv_val(0, bits)));
  }

  // A numeral, true/false, a float constant (NaN and infinities too) or a rounding mode.
  [[nodiscard]] static bool concrete(const z3::expr& e) {
    if (e.is_numeral() || e.is_true() || e.is_false()) return true;
    if (!e.is_app() || e.num_args() != 0) return false;
    const Z3_decl_kind k = e.decl().decl_kind();
    return (k >= Z3_OP_FPA_RM_NEAREST_TIES_TO_EVEN && k <= Z3_OP_FPA_NUM) || k == Z3_OP_FPA_PLUS_INF ||
           k == Z3_OP_FPA_MINUS_INF || k == Z3_OP_FPA_NAN || k == Z3_OP_FPA_PLUS_ZERO || k == Z3_OP_FPA_MINUS_ZERO;
  }
  // Whether e is built of constants only, looking `depth` levels down (operands come folded).
  [[nodiscard]] static bool ground(const z3::expr& e, int depth) {
    if (concrete(e)) return true;
    if (depth == 0 || !e.is_app() || e.num_args() == 0) return false;
    for (unsigned i = 0; i < e.num_args(); ++i) {
      if (!ground(e.arg(i), depth - 1)) return false;
    }
    return true;
  }
  // Folds a term of constants, so concrete paths stay concrete.
  [[nodiscard]] static z3::expr fold(const z3::expr& e) { return ground(e, 3) ? e.simplify() : e; }

  Val input_value(const ProgramInput& in, const z3::expr& t) const {
    switch (in.kind) {
      case ProgramInput::Kind::Bool: return {Val::Kind::Bool, t};
      case ProgramInput::Kind::Int: return {Val::Kind::Int, t};
      case ProgramInput::Kind::Float: return {Val::Kind::Float, t};
    }
    throw InternalError("program: unknown input kind");
  }

  Val zero_of(const llvm::Type* t) const {
    if (t->isIntegerTy(1)) return {Val::Kind::Bool, ctx_.bool_val(false)};
    if (t->isIntegerTy()) return {Val::Kind::Int, ctx_.bv_val(0, t->getIntegerBitWidth())};
    if (t->isFloatTy() || t->isDoubleTy()) return {Val::Kind::Float, float_numeral(0.0, t->isFloatTy() ? 32 : 64)};
    if (t->isPointerTy()) return {Val::Kind::Pointer, ctx_.bv_val(0, 64), -1};
    throw UnsupportedError(fmt::format("program {}: memory of type {} is not modelled", ir_.path, type_name(t)));
  }

  static std::string type_name(const llvm::Type* t) {
    std::string s;
    llvm::raw_string_ostream os(s);
    t->print(os);
    return os.str();
  }

  Val constant(const llvm::Constant* c, const llvm::Instruction* at) {
    if (const auto* i = llvm::dyn_cast<llvm::ConstantInt>(c)) {
      if (i->getBitWidth() == 1) return {Val::Kind::Bool, ctx_.bool_val(i->isOne())};
      if (i->getBitWidth() > 64) unsupported(at, "an integer wider than 64 bits");
      return {Val::Kind::Int, ctx_.bv_val(static_cast<std::uint64_t>(i->getZExtValue()), i->getBitWidth())};
    }
    if (const auto* f = llvm::dyn_cast<llvm::ConstantFP>(c)) {
      const bool single = f->getType()->isFloatTy();
      if (!single && !f->getType()->isDoubleTy()) unsupported(at, "a floating-point type other than float and double");
      const double v =
          single ? static_cast<double>(f->getValueAPF().convertToFloat()) : f->getValueAPF().convertToDouble();
      return {Val::Kind::Float, float_numeral(v, single ? 32 : 64)};
    }
    if (llvm::isa<llvm::ConstantPointerNull>(c)) return {Val::Kind::Pointer, ctx_.bv_val(0, 64), -1};
    if (const auto* g = llvm::dyn_cast<llvm::GlobalVariable>(c)) {
      return {Val::Kind::Pointer, ctx_.bv_val(0, 64), global_index_.at(g)};
    }
    if (const auto* e = llvm::dyn_cast<llvm::ConstantExpr>(c)) {
      if (e->getOpcode() == llvm::Instruction::GetElementPtr) {
        return gep(*llvm::cast<llvm::GEPOperator>(e), constant(e->getOperand(0), at), nullptr, at);
      }
      if (e->getOpcode() == llvm::Instruction::BitCast) return constant(e->getOperand(0), at);
    }
    if (llvm::isa<llvm::UndefValue>(c)) {
      throw PathCut{fmt::format("{}: reads an undefined value (an uninitialized variable?)", where(at))};
    }
    if (llvm::isa<llvm::Function>(c)) unsupported(at, "a function pointer");
    unsupported(at, "a constant expression");
  }

  [[noreturn]] void unsupported(const llvm::Instruction* at, const std::string& what) const {
    std::string text;
    if (at != nullptr) {
      llvm::raw_string_ostream os(text);
      at->print(os);
    }
    throw UnsupportedError(fmt::format("{}: {} is not supported by witness's symbolic execution{}",
                                       at != nullptr ? where(at) : ir_.path, what,
                                       text.empty() ? "" : fmt::format(" (LLVM instruction:{})", os_trim(text))));
  }
  static std::string os_trim(const std::string& s) {
    const auto end = s.find(", !dbg");
    return end == std::string::npos ? s : s.substr(0, end);
  }
  [[nodiscard]] std::string where(const llvm::Instruction* at) const {
    return at != nullptr ? source_line(ir_, *at) : ir_.path;
  }

  Val value(const llvm::Value* v, Frame& f, const llvm::Instruction* at) {
    if (const auto* c = llvm::dyn_cast<llvm::Constant>(v)) return constant(c, at);
    const auto it = f.regs.find(v);
    if (it == f.regs.end()) unsupported(at, "a value defined on another path (an irreducible loop?)");
    return it->second;
  }

  // --- memory -------------------------------------------------------------------------------
  void initialize(Object& obj, std::uint64_t offset, const llvm::Constant* c) {
    const llvm::Type* t = c->getType();
    if (llvm::isa<llvm::ConstantAggregateZero>(c) || (c->isNullValue() && !t->isAggregateType())) {
      if (offset == 0 && layout_.getTypeAllocSize(const_cast<llvm::Type*>(t)) == obj.size && t->isAggregateType()) {
        obj.zero = true;
        return;
      }
    }
    if (const auto* arr = llvm::dyn_cast<llvm::ArrayType>(t)) {
      const std::uint64_t step = layout_.getTypeAllocSize(arr->getElementType());
      for (unsigned i = 0; i < arr->getNumElements(); ++i)
        initialize(obj, offset + i * step, c->getAggregateElement(i));
      return;
    }
    if (const auto* st = llvm::dyn_cast<llvm::StructType>(t)) {
      const llvm::StructLayout* sl = layout_.getStructLayout(const_cast<llvm::StructType*>(st));
      for (unsigned i = 0; i < st->getNumElements(); ++i) {
        initialize(obj, offset + sl->getElementOffset(i), c->getAggregateElement(i));
      }
      return;
    }
    if (llvm::isa<llvm::UndefValue>(c)) return;
    obj.cells.emplace(offset, Cell{layout_.getTypeStoreSize(const_cast<llvm::Type*>(t)), t, constant(c, nullptr)});
  }

  Object& writable(State& s, int index) {
    auto& slot = s.memory[static_cast<std::size_t>(index)];
    if (slot.use_count() > 1) slot = std::make_shared<Object>(*slot);
    return *slot;
  }

  // The value of a cell read as type t (same size): bit casts between ints and floats.
  Val reinterpret(const Val& v, const llvm::Type* t, const llvm::Instruction* at) {
    const bool want_float = t->isFloatingPointTy();
    if (v.kind == Val::Kind::Float && !want_float && t->isIntegerTy()) {
      if (real()) unsupported(at, "reading a float's bits as an integer in real semantics");
      return {Val::Kind::Int, fold(wrap(Z3_mk_fpa_to_ieee_bv(ctx_, v.term)))};
    }
    if (v.kind == Val::Kind::Int && want_float) {
      if (real()) unsupported(at, "reading an integer's bits as a float in real semantics");
      return {Val::Kind::Float, fold(wrap(Z3_mk_fpa_to_fp_bv(ctx_, v.term, fp_sort(t->isFloatTy() ? 32 : 64))))};
    }
    if (t->isIntegerTy(1) && v.kind == Val::Kind::Int) return {Val::Kind::Bool, fold(v.term != ctx_.bv_val(0, 8))};
    if (t->isIntegerTy(8) && v.kind == Val::Kind::Bool) return {Val::Kind::Int, bool_to_bv(v.term, 8)};
    return v;
  }

  static std::optional<std::uint64_t> numeral(const z3::expr& e) {
    std::uint64_t v = 0;
    if (e.is_numeral() && e.is_numeral_u64(v)) return v;
    return std::nullopt;
  }

  Val load(State& s, const Val& p, const llvm::Type* t, const llvm::Instruction* at) {
    if (p.object < 0) throw PathCut{fmt::format("{}: reads through a null pointer", where(at))};
    const Object& obj = *s.memory[static_cast<std::size_t>(p.object)];
    const std::uint64_t size = layout_.getTypeStoreSize(const_cast<llvm::Type*>(t));
    if (auto off = numeral(p.term)) {
      if (*off + size > obj.size) {
        throw PathCut{fmt::format("{}: reads outside '{}' (byte {} of {})", where(at), obj.name, *off, obj.size)};
      }
      const auto it = obj.cells.find(*off);
      if (it != obj.cells.end() && it->second.size == size) return reinterpret(it->second.value, t, at);
      auto next = obj.cells.lower_bound(*off);
      const bool overlaps = (next != obj.cells.end() && next->first < *off + size) ||
                            (next != obj.cells.begin() && std::prev(next)->first + std::prev(next)->second.size > *off);
      if (overlaps) unsupported(at, "reading part of a stored value (a union or type pun)");
      if (obj.zero) return zero_of(t);
      throw PathCut{fmt::format("{}: reads uninitialized memory of '{}'", where(at), obj.name)};
    }
    // A symbolic offset: the cells of this size, chosen by offset.
    std::optional<Val> out;
    z3::expr valid = ctx_.bool_val(false);
    for (auto it = obj.cells.rbegin(); it != obj.cells.rend(); ++it) {
      if (it->second.size != size) continue;
      const Val v = reinterpret(it->second.value, t, at);
      const z3::expr hit = p.term == ctx_.bv_val(it->first, 64);
      valid = valid || hit;
      out = out ? select(hit, v, *out, at) : v;
    }
    if (obj.zero) {
      const Val z = zero_of(t);
      out = out ? select(!valid, z, *out, at) : z;
      valid = z3::ule(p.term, ctx_.bv_val(obj.size - size, 64)) && obj.size >= size;
    }
    if (!out)
      throw PathCut{fmt::format("{}: reads '{}' at a symbolic offset with no value there", where(at), obj.name)};
    cut_unless(s, valid.simplify(),
               fmt::format("{}: may read outside '{}' or uninitialized memory", where(at), obj.name));
    return *out;
  }

  void store(State& s, const Val& p, const Val& v, const llvm::Type* t, const llvm::Instruction* at) {
    if (p.object < 0) throw PathCut{fmt::format("{}: writes through a null pointer", where(at))};
    if (s.memory[static_cast<std::size_t>(p.object)]->constant) {
      throw PathCut{fmt::format("{}: writes to the constant '{}'", where(at),
                                s.memory[static_cast<std::size_t>(p.object)]->name)};
    }
    Object& obj = writable(s, p.object);
    const std::uint64_t size = layout_.getTypeStoreSize(const_cast<llvm::Type*>(t));
    if (auto off = numeral(p.term)) {
      if (*off + size > obj.size) {
        throw PathCut{fmt::format("{}: writes outside '{}' (byte {} of {})", where(at), obj.name, *off, obj.size)};
      }
      erase_overlap(obj, *off, size);
      obj.cells.emplace(*off, Cell{size, t, v});
      return;
    }
    // A symbolic offset: every aligned slot of this size may be the target. Slots never written
    // before hold unknown values (a fresh constant), or zero in zeroed memory.
    z3::expr valid = ctx_.bool_val(false);
    for (std::uint64_t k = 0; k + size <= obj.size; k += size) {
      const z3::expr hit = p.term == ctx_.bv_val(k, 64);
      valid = valid || hit;
      auto it = obj.cells.find(k);
      Val old = it != obj.cells.end() && it->second.size == size ? reinterpret(it->second.value, t, at)
                : obj.zero                                       ? zero_of(t)
                           : Val{v.kind, ctx_.constant(fmt::format("uninit!{}", fresh_++).c_str(), v.term.get_sort()),
                                 v.object};
      if (it != obj.cells.end() && it->second.size != size)
        unsupported(at, "a symbolic write over values of other sizes");
      erase_overlap(obj, k, size);
      obj.cells.emplace(k, Cell{size, t, select(hit, v, old, at)});
    }
    cut_unless(s, valid.simplify(), fmt::format("{}: may write outside '{}'", where(at), obj.name));
  }

  static void erase_overlap(Object& obj, std::uint64_t off, std::uint64_t size) {
    auto it = obj.cells.lower_bound(off);
    if (it != obj.cells.begin() && std::prev(it)->first + std::prev(it)->second.size > off) --it;
    while (it != obj.cells.end() && it->first < off + size) it = obj.cells.erase(it);
  }

  Val select(const z3::expr& c, const Val& a, const Val& b, const llvm::Instruction* at) {
    if (c.is_true()) return a;
    if (c.is_false()) return b;
    if (a.kind == Val::Kind::Pointer && a.object != b.object) unsupported(at, "choosing between two objects' pointers");
    return {a.kind, fold(z3::ite(c, a.term, b.term)), a.object};
  }

  // Ends the inputs where `ok` fails as a cut path; the current path continues where it holds.
  void cut_unless(State& s, const z3::expr& ok, const std::string& reason) {
    if (ok.is_true()) return;
    if (ok.is_false()) throw PathCut{reason};
    out_.cut.push_back({(s.pc && !ok).simplify(), reason});
    s.pc = s.pc && ok;
  }

  Val gep(const llvm::GEPOperator& g, const Val& base, Frame* f, const llvm::Instruction* at) {
    if (base.kind != Val::Kind::Pointer) unsupported(at, "pointer arithmetic on a non-pointer");
    z3::expr off = base.term;
    for (auto it = llvm::gep_type_begin(g); it != llvm::gep_type_end(g); ++it) {
      const llvm::Value* idx = it.getOperand();
      if (llvm::StructType* st = it.getStructTypeOrNull()) {
        const auto field = llvm::cast<llvm::ConstantInt>(idx)->getZExtValue();
        off = off + ctx_.bv_val(layout_.getStructLayout(st)->getElementOffset(static_cast<unsigned>(field)), 64);
        continue;
      }
      const std::uint64_t step = layout_.getTypeAllocSize(it.getIndexedType());
      const Val i = f != nullptr ? value(idx, *f, at) : constant(llvm::cast<llvm::Constant>(idx), at);
      if (i.kind != Val::Kind::Int) unsupported(at, "a vector index");
      const unsigned w = i.term.get_sort().bv_size();
      const z3::expr wide = w < 64 ? z3::sext(i.term, 64 - w) : i.term;
      off = off + wide * ctx_.bv_val(step, 64);
    }
    return {Val::Kind::Pointer, fold(off.simplify()), base.object};
  }

  // --- control ------------------------------------------------------------------------------
  void enter(Frame& f, const llvm::BasicBlock* to, const llvm::BasicBlock* from) {
    if (++f.visits[to] > options_.loop_bound + 1) {
      throw PathCut{
          fmt::format("{}: the loop bound ({}) was reached", where(&*to->getFirstNonPHIOrDbg()), options_.loop_bound)};
    }
    std::vector<std::pair<const llvm::PHINode*, Val>> phis;
    for (const llvm::PHINode& phi : to->phis()) {
      phis.emplace_back(&phi, value(phi.getIncomingValueForBlock(from), f, &phi));
    }
    for (auto& [phi, v] : phis) f.regs.insert_or_assign(phi, v);
    f.block = to;
    f.at = to->getFirstNonPHI()->getIterator();
  }

  void explore(State& s, std::vector<State>& work) {
    try {
      while (true) {
        if ((++out_.instructions & 1023U) == 0 &&
            ((options_.deadline && std::chrono::steady_clock::now() > *options_.deadline) ||
             (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed)))) {
          out_.timed_out = true;
          return;
        }
        Frame& f = s.stack.back();
        const llvm::Instruction& inst = *f.at;
        ++f.at;
        if (step(s, inst, work)) return;
      }
    } catch (const PathCut& c) {
      out_.cut.push_back({s.pc.simplify(), c.reason});
    }
  }

  Val int_op(unsigned op, const Val& a, const Val& b, const llvm::Instruction& inst, State& s) {
    if (a.kind == Val::Kind::Bool) {
      switch (op) {
        case llvm::Instruction::And: return {Val::Kind::Bool, fold(a.term && b.term)};
        case llvm::Instruction::Or: return {Val::Kind::Bool, fold(a.term || b.term)};
        case llvm::Instruction::Xor: return {Val::Kind::Bool, fold(a.term != b.term)};
        default: unsupported(&inst, "arithmetic on i1");
      }
    }
    const z3::expr& x = a.term;
    const z3::expr& y = b.term;
    const unsigned w = x.get_sort().bv_size();
    const auto* ob = llvm::dyn_cast<llvm::OverflowingBinaryOperator>(&inst);
    const bool nsw = ob != nullptr && ob->hasNoSignedWrap();
    const bool nuw = ob != nullptr && ob->hasNoUnsignedWrap();
    auto no_wrap = [&](Z3_ast (*over)(Z3_context, Z3_ast, Z3_ast, bool), Z3_ast (*under)(Z3_context, Z3_ast, Z3_ast),
                       const char* what) {
      if (nsw) {
        z3::expr ok = wrap(over(ctx_, x, y, true)) && wrap(under(ctx_, x, y));
        cut_unless(s, ok.simplify(), fmt::format("{}: signed integer overflow in {}", where(&inst), what));
      }
      if (nuw) {
        cut_unless(s, wrap(over(ctx_, x, y, false)).simplify(),
                   fmt::format("{}: unsigned wrap-around in {} marked no-wrap", where(&inst), what));
      }
    };
    auto nonzero = [&](const char* what) {
      cut_unless(s, (y != ctx_.bv_val(0, w)).simplify(), fmt::format("{}: {} by zero", where(&inst), what));
    };
    switch (op) {
      case llvm::Instruction::Add:
        no_wrap(Z3_mk_bvadd_no_overflow, Z3_mk_bvadd_no_underflow, "an addition");
        return {Val::Kind::Int, fold(x + y)};
      case llvm::Instruction::Sub:
        if (nsw) {
          cut_unless(s,
                     (wrap(Z3_mk_bvsub_no_overflow(ctx_, x, y)) && wrap(Z3_mk_bvsub_no_underflow(ctx_, x, y, true)))
                         .simplify(),
                     fmt::format("{}: signed integer overflow in a subtraction", where(&inst)));
        }
        return {Val::Kind::Int, fold(x - y)};
      case llvm::Instruction::Mul:
        no_wrap(Z3_mk_bvmul_no_overflow, Z3_mk_bvmul_no_underflow, "a multiplication");
        return {Val::Kind::Int, fold(x * y)};
      case llvm::Instruction::UDiv: nonzero("division"); return {Val::Kind::Int, fold(z3::udiv(x, y))};
      case llvm::Instruction::URem: nonzero("remainder"); return {Val::Kind::Int, fold(z3::urem(x, y))};
      case llvm::Instruction::SDiv:
      case llvm::Instruction::SRem: {
        nonzero(op == llvm::Instruction::SDiv ? "division" : "remainder");
        cut_unless(s, wrap(Z3_mk_bvsdiv_no_overflow(ctx_, x, y)).simplify(),
                   fmt::format("{}: signed integer overflow in a division", where(&inst)));
        return {Val::Kind::Int, fold(op == llvm::Instruction::SDiv ? x / y : z3::srem(x, y))};
      }
      case llvm::Instruction::And: return {Val::Kind::Int, fold(x & y)};
      case llvm::Instruction::Or: return {Val::Kind::Int, fold(x | y)};
      case llvm::Instruction::Xor: return {Val::Kind::Int, fold(x ^ y)};
      case llvm::Instruction::Shl:
      case llvm::Instruction::LShr:
      case llvm::Instruction::AShr: {
        cut_unless(s, z3::ult(y, ctx_.bv_val(w, w)).simplify(),
                   fmt::format("{}: a shift by the width of the type or more", where(&inst)));
        if (op == llvm::Instruction::Shl) {
          if (nsw || nuw) {
            // shl nsw/nuw: the shifted-out bits must be copies of the sign (nsw) or zero (nuw).
            const z3::expr back = nsw ? z3::ashr(z3::shl(x, y), y) : z3::lshr(z3::shl(x, y), y);
            cut_unless(s, (back == x).simplify(), fmt::format("{}: overflow in a left shift", where(&inst)));
          }
          return {Val::Kind::Int, fold(z3::shl(x, y))};
        }
        return {Val::Kind::Int, fold(op == llvm::Instruction::LShr ? z3::lshr(x, y) : z3::ashr(x, y))};
      }
      default: break;
    }
    unsupported(&inst, fmt::format("the integer operation '{}'", inst.getOpcodeName()));
  }

  Val float_op(unsigned op, const Val& a, const Val& b, const llvm::Instruction& inst, State& s) {
    const z3::expr& x = a.term;
    const z3::expr& y = b.term;
    if (real()) {
      switch (op) {
        case llvm::Instruction::FAdd: return {Val::Kind::Float, fold(x + y)};
        case llvm::Instruction::FSub: return {Val::Kind::Float, fold(x - y)};
        case llvm::Instruction::FMul: return {Val::Kind::Float, fold(x * y)};
        case llvm::Instruction::FDiv:
          cut_unless(s, (y != ctx_.real_val(0)).simplify(),
                     fmt::format("{}: division by zero (undefined over the reals)", where(&inst)));
          return {Val::Kind::Float, fold(x / y)};
        default: break;
      }
    } else {
      switch (op) {
        case llvm::Instruction::FAdd: return {Val::Kind::Float, fold(wrap(Z3_mk_fpa_add(ctx_, rne(), x, y)))};
        case llvm::Instruction::FSub: return {Val::Kind::Float, fold(wrap(Z3_mk_fpa_sub(ctx_, rne(), x, y)))};
        case llvm::Instruction::FMul: return {Val::Kind::Float, fold(wrap(Z3_mk_fpa_mul(ctx_, rne(), x, y)))};
        case llvm::Instruction::FDiv: return {Val::Kind::Float, fold(wrap(Z3_mk_fpa_div(ctx_, rne(), x, y)))};
        default: break;
      }
    }
    unsupported(&inst, fmt::format("the float operation '{}'", inst.getOpcodeName()));
  }

  z3::expr fcmp(llvm::CmpInst::Predicate p, const z3::expr& x, const z3::expr& y) const {
    using P = llvm::CmpInst::Predicate;
    // Each piece is folded, so a comparison of constants is a constant.
    z3::expr unordered = ctx_.bool_val(false);
    z3::expr lt = fold(x < y);
    z3::expr eq = fold(x == y);
    if (!real()) {
      unordered = fold(fold(wrap(Z3_mk_fpa_is_nan(ctx_, x))) || fold(wrap(Z3_mk_fpa_is_nan(ctx_, y))));
      lt = fold(wrap(Z3_mk_fpa_lt(ctx_, x, y)));
      eq = fold(wrap(Z3_mk_fpa_eq(ctx_, x, y)));
    }
    z3::expr gt = fold(real() ? x > y : wrap(Z3_mk_fpa_gt(ctx_, x, y)));
    switch (p) {
      case P::FCMP_FALSE: return ctx_.bool_val(false);
      case P::FCMP_TRUE: return ctx_.bool_val(true);
      case P::FCMP_OEQ: return eq;
      case P::FCMP_OGT: return gt;
      case P::FCMP_OGE: return gt || eq;
      case P::FCMP_OLT: return lt;
      case P::FCMP_OLE: return lt || eq;
      case P::FCMP_ONE: return lt || gt;
      case P::FCMP_ORD: return !unordered;
      case P::FCMP_UNO: return unordered;
      case P::FCMP_UEQ: return unordered || eq;
      case P::FCMP_UGT: return unordered || gt;
      case P::FCMP_UGE: return unordered || gt || eq;
      case P::FCMP_ULT: return unordered || lt;
      case P::FCMP_ULE: return unordered || lt || eq;
      case P::FCMP_UNE: return unordered || !eq;
      default: break;
    }
    throw InternalError("program: unknown fcmp predicate");
  }

  z3::expr icmp(llvm::CmpInst::Predicate p, const Val& a, const Val& b, const llvm::Instruction& inst) {
    using P = llvm::CmpInst::Predicate;
    z3::expr x = a.term;
    z3::expr y = b.term;
    if (a.kind == Val::Kind::Pointer) {
      if (a.object != b.object) {
        if (p == P::ICMP_EQ) return ctx_.bool_val(false);
        if (p == P::ICMP_NE) return ctx_.bool_val(true);
        unsupported(&inst, "ordering pointers into different objects");
      }
    }
    if (a.kind == Val::Kind::Bool) {
      x = bool_to_bv(x, 1);
      y = bool_to_bv(y, 1);
    }
    switch (p) {
      case P::ICMP_EQ: return x == y;
      case P::ICMP_NE: return x != y;
      case P::ICMP_UGT: return z3::ugt(x, y);
      case P::ICMP_UGE: return z3::uge(x, y);
      case P::ICMP_ULT: return z3::ult(x, y);
      case P::ICMP_ULE: return z3::ule(x, y);
      case P::ICMP_SGT: return x > y;
      case P::ICMP_SGE: return x >= y;
      case P::ICMP_SLT: return x < y;
      case P::ICMP_SLE: return x <= y;
      default: break;
    }
    throw InternalError("program: unknown icmp predicate");
  }

  Val cast(const llvm::CastInst& c, const Val& v, State& s) {
    const llvm::Type* to = c.getDestTy();
    const unsigned to_bits = to->isIntegerTy() ? to->getIntegerBitWidth() : 0;
    switch (c.getOpcode()) {
      case llvm::Instruction::ZExt:
      case llvm::Instruction::SExt: {
        if (v.kind == Val::Kind::Bool) {
          const z3::expr one =
              c.getOpcode() == llvm::Instruction::ZExt ? ctx_.bv_val(1, to_bits) : ctx_.bv_val(-1, to_bits);
          return {Val::Kind::Int, fold(z3::ite(v.term, one, ctx_.bv_val(0, to_bits)))};
        }
        const unsigned extra = to_bits - v.term.get_sort().bv_size();
        return {Val::Kind::Int,
                fold(c.getOpcode() == llvm::Instruction::ZExt ? z3::zext(v.term, extra) : z3::sext(v.term, extra))};
      }
      case llvm::Instruction::Trunc:
        if (to_bits == 1) return {Val::Kind::Bool, fold(v.term.extract(0, 0) == ctx_.bv_val(1, 1))};
        return {Val::Kind::Int, fold(v.term.extract(to_bits - 1, 0))};
      case llvm::Instruction::FPToSI:
      case llvm::Instruction::FPToUI: {
        const bool is_signed = c.getOpcode() == llvm::Instruction::FPToSI;
        const unsigned w = to_bits;
        if (w == 0 || w > 64) unsupported(&c, "a conversion to an integer wider than 64 bits");
        if (real()) {
          // Truncation toward zero, then the range check of C's conversion.
          const z3::expr i = z3::ite(v.term >= 0, to_int(v.term), -to_int(-v.term));
          const std::uint64_t half = std::uint64_t{1} << (w - 1);
          const z3::expr lo = is_signed ? ctx_.int_val(("-" + std::to_string(half)).c_str()) : ctx_.int_val(0);
          const z3::expr hi = ctx_.int_val(is_signed ? half - 1 : half - 1 + half);
          cut_unless(s, (lo <= i && i <= hi).simplify(),
                     fmt::format("{}: a float converted to an integer type that cannot hold it", where(&c)));
          const z3::expr bv = z3::int2bv(w, i);
          return w == 1 ? Val{Val::Kind::Bool, fold(bv == ctx_.bv_val(1, 1))} : Val{Val::Kind::Int, fold(bv)};
        }
        const z3::expr rtz = wrap(Z3_mk_fpa_rtz(ctx_));
        const z3::expr t = wrap(Z3_mk_fpa_round_to_integral(ctx_, rtz, v.term));
        const unsigned fbits = v.term.get_sort().fpa_sbits() == 24 ? 32 : 64;
        const double lo = is_signed ? -std::ldexp(1.0, static_cast<int>(w) - 1) : 0.0;
        const double hi = std::ldexp(1.0, static_cast<int>(is_signed ? w - 1 : w));  // exclusive
        const z3::expr ok = !wrap(Z3_mk_fpa_is_nan(ctx_, v.term)) &&
                            wrap(Z3_mk_fpa_geq(ctx_, t, float_numeral(lo, fbits))) &&
                            wrap(Z3_mk_fpa_lt(ctx_, t, float_numeral(hi, fbits)));
        cut_unless(s, ok.simplify(),
                   fmt::format("{}: a float converted to an integer type that cannot hold it", where(&c)));
        const z3::expr bv =
            wrap(is_signed ? Z3_mk_fpa_to_sbv(ctx_, rtz, v.term, w) : Z3_mk_fpa_to_ubv(ctx_, rtz, v.term, w));
        return w == 1 ? Val{Val::Kind::Bool, fold(bv == ctx_.bv_val(1, 1))} : Val{Val::Kind::Int, fold(bv)};
      }
      case llvm::Instruction::SIToFP:
      case llvm::Instruction::UIToFP: {
        const bool is_signed = c.getOpcode() == llvm::Instruction::SIToFP;
        const z3::expr bv = v.kind == Val::Kind::Bool ? bool_to_bv(v.term, 1) : v.term;
        const unsigned bits = to->isFloatTy() ? 32 : 64;
        if (real()) {
          const z3::expr i = v.kind == Val::Kind::Bool && is_signed ? z3::ite(v.term, ctx_.int_val(-1), ctx_.int_val(0))
                                                                    : z3::bv2int(bv, is_signed);
          return {Val::Kind::Float, fold(z3::to_real(i))};
        }
        return {Val::Kind::Float, fold(wrap(is_signed ? Z3_mk_fpa_to_fp_signed(ctx_, rne(), bv, fp_sort(bits))
                                                      : Z3_mk_fpa_to_fp_unsigned(ctx_, rne(), bv, fp_sort(bits))))};
      }
      case llvm::Instruction::FPExt:
      case llvm::Instruction::FPTrunc:
        if (real()) return v;
        return {Val::Kind::Float,
                fold(wrap(Z3_mk_fpa_to_fp_float(ctx_, rne(), v.term, fp_sort(to->isFloatTy() ? 32 : 64))))};
      case llvm::Instruction::BitCast:
        if (v.kind == Val::Kind::Pointer) return v;
        return reinterpret(v, to, &c);
      default: break;
    }
    unsupported(&c, fmt::format("the conversion '{}'", c.getOpcodeName()));
  }

  Val float_unary(const std::string& name, const std::vector<Val>& args, const llvm::Instruction& inst, State& s) {
    const z3::expr& x = args.at(0).term;
    auto fp = [&](Z3_ast a) { return Val{Val::Kind::Float, fold(wrap(a))}; };
    if (name == "fabs") {
      return real() ? Val{Val::Kind::Float, fold(z3::ite(x < 0, -x, x))} : fp(Z3_mk_fpa_abs(ctx_, x));
    }
    if (name == "sqrt") {
      if (real()) {
        cut_unless(s, (x >= 0).simplify(), fmt::format("{}: the square root of a negative number", where(&inst)));
        const z3::expr r = ctx_.real_const(fmt::format("sqrt!{}", fresh_++).c_str());
        s.pc = s.pc && r >= 0 && r * r == x;  // r is the non-negative root
        return {Val::Kind::Float, r};
      }
      return fp(Z3_mk_fpa_sqrt(ctx_, rne(), x));
    }
    if (name == "fmin" || name == "fmax") {
      const z3::expr& y = args.at(1).term;
      if (real()) return {Val::Kind::Float, fold(name == "fmin" ? z3::ite(y < x, y, x) : z3::ite(x < y, y, x))};
      return fp(name == "fmin" ? Z3_mk_fpa_min(ctx_, x, y) : Z3_mk_fpa_max(ctx_, x, y));
    }
    // floor, ceil, trunc, round: rounding to an integral value in the given direction.
    if (real()) {
      const z3::expr down = z3::to_real(to_int(x));
      const z3::expr up = -z3::to_real(to_int(-x));
      if (name == "floor") return {Val::Kind::Float, fold(down)};
      if (name == "ceil") return {Val::Kind::Float, fold(up)};
      if (name == "trunc") return {Val::Kind::Float, fold(z3::ite(x >= 0, down, up))};
      const z3::expr half = ctx_.real_val(1, 2);
      return {Val::Kind::Float, fold(z3::ite(x >= 0, z3::to_real(to_int(x + half)), -z3::to_real(to_int(-x + half))))};
    }
    Z3_ast mode = name == "floor"   ? Z3_mk_fpa_rtn(ctx_)
                  : name == "ceil"  ? Z3_mk_fpa_rtp(ctx_)
                  : name == "trunc" ? Z3_mk_fpa_rtz(ctx_)
                                    : Z3_mk_fpa_rna(ctx_);
    return fp(Z3_mk_fpa_round_to_integral(ctx_, wrap(mode), x));
  }

  // Calls: functions with bodies are inlined (a new frame); libm and intrinsics are modelled.
  bool call(State& s, const llvm::CallBase& c) {
    Frame& f = s.stack.back();
    const llvm::Function* callee = c.getCalledFunction();
    if (callee == nullptr) unsupported(&c, "an indirect call");
    const std::string name = callee->getName().str();
    if (llvm::isa<llvm::DbgInfoIntrinsic>(c) || name.starts_with("llvm.lifetime.") ||
        name == "llvm.experimental.noalias.scope.decl" || name == "llvm.assume") {
      return false;
    }
    std::vector<Val> args;
    for (const llvm::Use& a : c.args()) args.push_back(value(a.get(), f, &c));
    if (!callee->isDeclaration()) {
      if (s.stack.size() > 256) throw PathCut{fmt::format("{}: calls nest deeper than 256 (recursion)", where(&c))};
      Frame callee_frame;
      callee_frame.function = callee;
      std::size_t i = 0;
      for (const llvm::Argument& a : callee->args()) callee_frame.regs.emplace(&a, args[i++]);
      enter(callee_frame, &callee->getEntryBlock(), nullptr);
      s.stack.push_back(std::move(callee_frame));
      return false;
    }
    std::string base = name;
    for (const char* p : {"llvm.", ""}) {
      if (base.starts_with(p)) base = base.substr(std::string(p).size());
    }
    if (const auto dot = base.find('.'); dot != std::string::npos) base = base.substr(0, dot);  // fabs.f64
    if (base.size() > 1 && base.back() == 'f' && base != "f" &&
        (base == "fabsf" || base == "sqrtf" || base == "fminf" || base == "fmaxf" || base == "floorf" ||
         base == "ceilf" || base == "truncf" || base == "roundf")) {
      base.pop_back();
    }
    if (base == "minnum") base = "fmin";
    if (base == "maxnum") base = "fmax";
    static const char* const kFloat[] = {"fabs", "sqrt", "fmin", "fmax", "floor", "ceil", "trunc", "round"};
    if (std::find(std::begin(kFloat), std::end(kFloat), base) != std::end(kFloat) && !args.empty() &&
        args[0].kind == Val::Kind::Float) {
      f.regs.insert_or_assign(&c, float_unary(base, args, c, s));
      return false;
    }
    if (base == "smax" || base == "smin" || base == "umax" || base == "umin") {
      const z3::expr& x = args.at(0).term;
      const z3::expr& y = args.at(1).term;
      const z3::expr pick = base == "smax"   ? x > y
                            : base == "smin" ? x < y
                            : base == "umax" ? z3::ugt(x, y)
                                             : z3::ult(x, y);
      f.regs.insert_or_assign(&c, Val{Val::Kind::Int, fold(z3::ite(pick, x, y))});
      return false;
    }
    if (base == "abs" && name.starts_with("llvm.")) {
      const z3::expr& x = args.at(0).term;
      const unsigned w = x.get_sort().bv_size();
      if (const auto* poison = llvm::dyn_cast<llvm::ConstantInt>(c.getArgOperand(1));
          poison != nullptr && poison->isOne()) {
        cut_unless(s, (x != ctx_.bv_val(std::uint64_t{1} << (w - 1), w)).simplify(),
                   fmt::format("{}: abs of the most negative integer", where(&c)));
      }
      f.regs.insert_or_assign(&c, Val{Val::Kind::Int, fold(z3::ite(x < 0, -x, x))});
      return false;
    }
    if (base == "memcpy" || base == "memmove" || base == "memset") {
      memory_call(s, base, args, c);
      return false;
    }
    unsupported(&c, fmt::format("a call to '{}' (witness models fabs, sqrt, fmin, fmax, floor, ceil, trunc, round, "
                                "memcpy and memset, and inlines functions the program defines)",
                                llvm::demangle(name)));
  }

  void memory_call(State& s, const std::string& base, const std::vector<Val>& args, const llvm::CallBase& c) {
    const auto len = numeral(args.at(2).term);
    if (!len) unsupported(&c, fmt::format("{} with a symbolic length", base));
    const Val& dst = args[0];
    const auto d = numeral(dst.term);
    if (dst.object < 0 || !d) unsupported(&c, fmt::format("{} to a symbolic or null address", base));
    if (base == "memset") {
      const auto byte = numeral(args[1].term);
      if (!byte || *byte != 0) unsupported(&c, "memset with a value other than zero");
      Object& obj = writable(s, dst.object);
      if (*d + *len > obj.size) throw PathCut{fmt::format("{}: memset outside '{}'", where(&c), obj.name)};
      erase_overlap(obj, *d, *len);
      if (*d == 0 && *len == obj.size) {
        obj.zero = true;
      } else {
        unsupported(&c, "memset of part of an object");
      }
      return;
    }
    const Val& src = args[1];
    const auto so = numeral(src.term);
    if (src.object < 0 || !so) unsupported(&c, fmt::format("{} from a symbolic or null address", base));
    const Object from = *s.memory[static_cast<std::size_t>(src.object)];  // a copy: memmove may overlap
    if (*so + *len > from.size) throw PathCut{fmt::format("{}: {} reads outside '{}'", where(&c), base, from.name)};
    Object& to = writable(s, dst.object);
    if (*d + *len > to.size) throw PathCut{fmt::format("{}: {} writes outside '{}'", where(&c), base, to.name)};
    if (from.zero && !(*so == 0 && *len == from.size && *d == 0 && *len == to.size)) {
      unsupported(&c, "copying part of zeroed memory");
    }
    erase_overlap(to, *d, *len);
    if (from.zero) to.zero = true;
    for (const auto& [off, cell] : from.cells) {
      if (off >= *so && off + cell.size <= *so + *len) to.cells.emplace(off - *so + *d, cell);
    }
  }

  // Executes one instruction; true when the path ended (finished, forked away or cut).
  bool step(State& s, const llvm::Instruction& inst, std::vector<State>& work) {
    Frame& f = s.stack.back();
    auto v = [&](unsigned i) { return value(inst.getOperand(i), f, &inst); };
    auto set = [&](Val x) { f.regs.insert_or_assign(&inst, std::move(x)); };
    const unsigned op = inst.getOpcode();
    if (inst.isBinaryOp()) {
      const Val a = v(0);
      const Val b = v(1);
      set(a.kind == Val::Kind::Float ? float_op(op, a, b, inst, s) : int_op(op, a, b, inst, s));
      return false;
    }
    if (const auto* c = llvm::dyn_cast<llvm::CastInst>(&inst)) {
      if (op == llvm::Instruction::PtrToInt || op == llvm::Instruction::IntToPtr)
        unsupported(&inst, "a pointer-integer cast");
      set(cast(*c, v(0), s));
      return false;
    }
    switch (op) {
      case llvm::Instruction::FNeg: {
        const Val a = v(0);
        set({Val::Kind::Float, fold(real() ? -a.term : wrap(Z3_mk_fpa_neg(ctx_, a.term)))});
        return false;
      }
      case llvm::Instruction::ICmp:
        set({Val::Kind::Bool, fold(icmp(llvm::cast<llvm::CmpInst>(inst).getPredicate(), v(0), v(1), inst))});
        return false;
      case llvm::Instruction::FCmp:
        set({Val::Kind::Bool, fold(fcmp(llvm::cast<llvm::CmpInst>(inst).getPredicate(), v(0).term, v(1).term))});
        return false;
      case llvm::Instruction::Select: {
        const Val c = v(0);
        set(select(c.term, v(1), v(2), &inst));
        return false;
      }
      case llvm::Instruction::Freeze: set(v(0)); return false;
      case llvm::Instruction::Alloca: {
        const auto& a = llvm::cast<llvm::AllocaInst>(inst);
        const auto* count = llvm::dyn_cast<llvm::ConstantInt>(a.getArraySize());
        if (count == nullptr) unsupported(&inst, "a variable-length array");
        auto obj = std::make_shared<Object>();
        obj->name = a.getName().str();
        obj->size = layout_.getTypeAllocSize(a.getAllocatedType()) * count->getZExtValue();
        s.memory.push_back(std::move(obj));
        set({Val::Kind::Pointer, ctx_.bv_val(0, 64), static_cast<int>(s.memory.size() - 1)});
        return false;
      }
      case llvm::Instruction::Load: {
        const llvm::Type* t = llvm::cast<llvm::LoadInst>(inst).getType();
        return split_address(s, v(0), work, [&](State& at, const Val& p) {
          at.stack.back().regs.insert_or_assign(&inst, load(at, p, t, &inst));
        });
      }
      case llvm::Instruction::Store: {
        const Val x = v(0);
        const llvm::Type* t = llvm::cast<llvm::StoreInst>(inst).getValueOperand()->getType();
        return split_address(s, v(1), work, [&](State& at, const Val& p) { store(at, p, x, t, &inst); });
      }
      case llvm::Instruction::GetElementPtr:
        set(gep(llvm::cast<llvm::GEPOperator>(inst), v(0), &f, &inst));
        return false;
      case llvm::Instruction::Call: return call(s, llvm::cast<llvm::CallBase>(inst));
      case llvm::Instruction::Br: return branch(s, llvm::cast<llvm::BranchInst>(inst), work);
      case llvm::Instruction::Switch: return switch_cases(s, llvm::cast<llvm::SwitchInst>(inst), work);
      case llvm::Instruction::Ret: return ret(s, inst);
      case llvm::Instruction::Unreachable:
        throw PathCut{
            fmt::format("{}: reaches unreachable code (a missing return, or undefined behaviour)", where(&inst))};
      default: break;
    }
    unsupported(&inst, fmt::format("the instruction '{}'", inst.getOpcodeName()));
  }

  // A conditional branch forks where both sides are possible (the false side to `work`).
  bool branch(State& s, const llvm::BranchInst& br, std::vector<State>& work) {
    Frame& f = s.stack.back();
    if (br.isUnconditional()) {
      enter(f, br.getSuccessor(0), br.getParent());
      return false;
    }
    const z3::expr c = value(br.getOperand(0), f, &br).term;
    if (c.is_true() || c.is_false()) {
      enter(f, br.getSuccessor(c.is_true() ? 0 : 1), br.getParent());
      return false;
    }
    fork(s, work, !c, br.getSuccessor(1), br.getParent());
    s.pc = s.pc && c;
    enter(s.stack.back(), br.getSuccessor(0), br.getParent());
    return false;
  }

  // One path per possible case (forked to `work`); this one goes on with the default.
  bool switch_cases(State& s, const llvm::SwitchInst& sw, std::vector<State>& work) {
    Frame& f = s.stack.back();
    const Val x = value(sw.getOperand(0), f, &sw);
    z3::expr none = ctx_.bool_val(true);
    for (const auto& k : sw.cases()) {
      const z3::expr hit = fold(x.term == constant(k.getCaseValue(), &sw).term);
      if (hit.is_true()) {
        enter(f, k.getCaseSuccessor(), sw.getParent());
        return false;
      }
      if (hit.is_false()) continue;
      fork(s, work, hit, k.getCaseSuccessor(), sw.getParent());
      none = none && !hit;
    }
    s.pc = s.pc && none;
    enter(s.stack.back(), sw.getDefaultDest(), sw.getParent());
    return false;
  }

  // A return: to the caller, or (from the decision function) the path's result; true when it ended.
  bool ret(State& s, const llvm::Instruction& inst) {
    std::optional<Val> r;
    if (inst.getNumOperands() > 0) r = value(inst.getOperand(0), s.stack.back(), &inst);
    s.stack.pop_back();
    if (s.stack.empty()) {
      if (out_object_ >= 0) {
        const Val stored = load(s, Val{Val::Kind::Pointer, ctx_.bv_val(0, 64), out_object_}, ir_.out_type, &inst);
        const bool is_bool = ir_.result.kind == ProgramInput::Kind::Bool;
        r = is_bool ? Val{Val::Kind::Bool, fold(stored.term != ctx_.bv_val(0, stored.term.get_sort().bv_size()))}
                    : stored;
      }
      if (!r) throw InternalError("program: the decision function returned no value");
      out_.done.push_back({s.pc.simplify(), r->term});
      return true;
    }
    Frame& caller = s.stack.back();
    const llvm::Instruction& call_site = *std::prev(caller.at);
    if (r) caller.regs.insert_or_assign(&call_site, *r);
    return false;
  }

  // Runs `access` at pointer p. A symbolic offset with few possible values (under the path
  // condition and options_.assume) is split: one path per value, each with a concrete address, so
  // a table lookup costs the solver nothing. True when the current path ended (no value possible).
  template <typename Access>
  bool split_address(State& s, const Val& p, std::vector<State>& work, const Access& access) {
    if (p.object < 0 || numeral(p.term)) {
      access(s, p);
      return false;
    }
    for (const auto& [term, value] : s.pinned) {
      if (auto d = numeral((p.term - term).simplify())) {
        access(s, Val{p.kind, ctx_.bv_val(value + *d, 64), p.object});
        return false;
      }
    }
    std::vector<std::uint64_t> values;
    addresses_.push();
    addresses_.add(s.pc);
    bool few = true;
    while (true) {
      if (z3_check(addresses_, 0.0, options_.cancel).result != z3::sat) break;
      if (values.size() == options_.max_addresses) {
        few = false;
        break;
      }
      const std::uint64_t v = addresses_.get_model().eval(p.term, true).get_numeral_uint64();
      values.push_back(v);
      addresses_.add(p.term != ctx_.bv_val(v, 64));
    }
    addresses_.pop();
    if (!few) {
      access(s, p);
      return false;
    }
    if (values.empty()) return true;  // no input the caller asks about takes this path
    for (std::size_t i = 1; i < values.size(); ++i) {
      State other = s;
      other.pc = s.pc && p.term == ctx_.bv_val(values[i], 64);
      other.pinned.emplace_back(p.term, values[i]);
      try {
        access(other, Val{p.kind, ctx_.bv_val(values[i], 64), p.object});
        work.push_back(std::move(other));
      } catch (const PathCut& c) {
        out_.cut.push_back({other.pc.simplify(), c.reason});
      }
    }
    s.pc = s.pc && p.term == ctx_.bv_val(values[0], 64);
    s.pinned.emplace_back(p.term, values[0]);
    access(s, Val{p.kind, ctx_.bv_val(values[0], 64), p.object});
    return false;
  }

  // Pushes a copy of s that takes the branch to `to` under condition c.
  void fork(const State& s, std::vector<State>& work, const z3::expr& c, const llvm::BasicBlock* to,
            const llvm::BasicBlock* from) {
    State other = s;
    other.pc = s.pc && c;
    try {
      enter(other.stack.back(), to, from);
      work.push_back(std::move(other));
    } catch (const PathCut& cut) {
      out_.cut.push_back({other.pc.simplify(), cut.reason});
    }
  }

  const Program::Impl& ir_;
  z3::context& ctx_;
  const ProgramRunOptions& options_;
  llvm::DataLayout layout_;
  std::unordered_map<const llvm::GlobalVariable*, int> global_index_;
  ProgramPaths out_;
  int out_object_ = -1;  // the out-parameter's object, when the decision is written there
  int fresh_ = 0;
  z3::solver addresses_;  // holds options_.assume; enumerates the values of symbolic addresses
};

}  // namespace

ProgramPaths Program::execute(z3::context& ctx, const std::vector<std::optional<z3::expr>>& inputs,
                              const ProgramRunOptions& options) const {
  if (inputs.size() != impl_->inputs.size()) throw InternalError("program: execute needs one entry per input");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i] && !impl_->inputs[i].global) throw InternalError("program: a parameter has no value");
  }
  return Executor(*impl_, ctx, options).run(inputs);
}

}  // namespace witness
