// The loaded LLVM module of a Program (internal to program/): shared by compilation, symbolic
// execution and the native harness.
//
//   witness::Program p = witness::Program::compile("examples/soid/car/agent.c", "decide");
//   const witness::Program::Impl& ir = p.ir();
//   const llvm::Function* f = ir.function;                              // the decision function
//   std::string at = witness::source_line(ir, f->getEntryBlock().front());  // "agent.c:12" for messages
#pragma once

#include <llvm/IR/DataLayout.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Instruction.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>
#include <vector>

#include "program/program.h"

namespace witness {

struct Program::Impl {
  std::string path;
  std::string function_name;
  std::string where;
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  llvm::Function* function = nullptr;
  std::string symbol;  // the function's linkage name (mangled in C++)
  std::vector<ProgramInput> inputs;
  std::vector<llvm::GlobalVariable*> globals;  // for the inputs marked global, in order
  ProgramInput result;
  int out_arg = -1;                // a void function's out-parameter holding the decision, or -1
  llvm::Type* out_type = nullptr;  // the type the decision is stored as there
  std::string work_dir;            // a temporary folder holding the bitcode and the native build
  std::string program_dir;         // the program's folder: what its builds may read, with the system's
  mutable std::string native;      // the native harness, built on first use
  BuildLimits limits;              // for the compiler runs and the native replay

  ~Impl();
};

// "file:line" of an instruction, from its debug location; "file: function 'f'" without one.
std::string source_line(const Program::Impl& ir, const llvm::Instruction& inst);

}  // namespace witness
