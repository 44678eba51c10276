// The small C-like expression language of query files: numbers, names, + - * /, comparisons,
// && || !, `x in [a, b]`, abs/min/max, `label`, `output[i]` and named outputs. A name that is not
// an identifier is written in backticks: `hours-per-week` > 40.
//
//   witness::ExprScope scope;
//   scope.inputs = {{"weight", witness::ExprType::Number}, {"urgent", witness::ExprType::Bool}};
//   scope.outputs = {"p_low", "p_high"};
//   witness::Expr e = witness::parse_expression("weight in [0, 1000] && label == 1", scope);
//   // e.type == ExprType::Bool; e.uses_decision == true
//   witness::parse_expression("wieght > 3", scope);
//   // throws ExprError{column = 1, "unknown name 'wieght' (inputs: weight, urgent; ...)"}
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace witness {

enum class ExprType : std::uint8_t { Number, Bool };

// A parse or type error at a 1-based column of the expression text. Query files wrap it in an
// InputError that names the file, the line and the column in the file.
class ExprError : public std::runtime_error {
 public:
  ExprError(int column, const std::string& what) : std::runtime_error(what), column_(column) {}
  [[nodiscard]] int column() const { return column_; }

 private:
  int column_;
};

struct Expr {
  enum class Op : std::uint8_t {
    Number,  // text: the literal as written (exact in real semantics)
    Bool,    // index: 0 or 1
    Input,   // index: input position
    Output,  // index: output coordinate
    Label,   // the model's decision (class index)
    Neg,
    Not,
    Add,
    Sub,
    Mul,
    Div,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
    In,  // args: x, lo, hi; lo <= x && x <= hi
    Abs,
    Min,
    Max,
  };
  Op op = Op::Number;
  ExprType type = ExprType::Number;
  std::string text;
  int index = 0;
  int column = 1;
  std::vector<Expr> args;
  bool uses_decision = false;  // mentions label or an output (here or below)
  int height = 1;              // levels of the tree from here down (the parser bounds it)
};

struct ExprScope {
  struct Input {
    std::string name;
    ExprType type = ExprType::Number;
  };
  std::vector<Input> inputs;
  std::vector<std::string> outputs;  // names of the output coordinates
  bool allow_decision = true;        // false: label/outputs are errors (environment, state)
  std::vector<bool> allowed_inputs;  // empty: all; else which inputs this expression may name
  std::string allowed_reason;        // why a disallowed input is refused, for the message
};

// Parses and type-checks; the result of a constraint must be Bool (ExprError otherwise).
Expr parse_expression(std::string_view text, const ExprScope& scope);

}  // namespace witness
