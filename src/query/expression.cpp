#include "query/expression.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <optional>

#include "core/error.h"
#include "solver/rational.h"

namespace witness {
namespace {

struct Token {
  enum class Kind : std::uint8_t { Number, Name, QuotedName, Punct, End };
  Kind kind = Kind::End;
  std::string text;
  int column = 1;
};

std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int column = static_cast<int>(i) + 1;
    if (std::isspace(c) != 0) {
      ++i;
      continue;
    }
    if (std::isdigit(c) != 0 || (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      std::size_t j = i;
      while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) != 0 || s[j] == '.')) ++j;
      if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
        std::size_t k = j + 1;
        if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
        if (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k])) != 0) {
          j = k;
          while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])) != 0) ++j;
        }
      }
      std::string text(s.substr(i, j - i));
      if (text.find('.') != text.rfind('.')) throw ExprError(column, fmt::format("malformed number '{}'", text));
      if (j < s.size() && (std::isalpha(static_cast<unsigned char>(s[j])) != 0 || s[j] == '_')) {
        throw ExprError(column, fmt::format("malformed number '{}{}'", text, s[j]));
      }
      try {
        (void)Rational::parse(text);  // range: exact rationals hold any exponent GMP can
      } catch (const InputError& e) {
        throw ExprError(column, e.what());
      }
      out.push_back({Token::Kind::Number, std::move(text), column});
      i = j;
      continue;
    }
    if (std::isalpha(c) != 0 || c == '_') {
      std::size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) != 0 || s[j] == '_')) ++j;
      out.push_back({Token::Kind::Name, std::string(s.substr(i, j - i)), column});
      i = j;
      continue;
    }
    if (c == '`') {  // `hours-per-week`: a name that is not an identifier (never a keyword)
      const std::size_t end = s.find('`', i + 1);
      if (end == std::string_view::npos) throw ExprError(column, "unterminated quoted name: close it with '`'");
      if (end == i + 1) throw ExprError(column, "empty quoted name ``");
      out.push_back({Token::Kind::QuotedName, std::string(s.substr(i + 1, end - i - 1)), column});
      i = end + 1;
      continue;
    }
    static constexpr std::string_view two[] = {"<=", ">=", "==", "!=", "&&", "||"};
    bool matched = false;
    for (std::string_view op : two) {
      if (s.substr(i, 2) == op) {
        out.push_back({Token::Kind::Punct, std::string(op), column});
        i += 2;
        matched = true;
        break;
      }
    }
    if (matched) continue;
    if (std::string_view("+-*/<>!()[],").find(static_cast<char>(c)) != std::string_view::npos) {
      out.push_back({Token::Kind::Punct, std::string(1, static_cast<char>(c)), column});
      ++i;
      continue;
    }
    if (c == '=') throw ExprError(column, "'=' is not an operator here; write '==' to compare");
    if (c == '&' || c == '|') throw ExprError(column, fmt::format("write '{0}{0}' for the logical operator", s[i]));
    if (c >= 0x20 && c < 0x7f) throw ExprError(column, fmt::format("unexpected character '{}'", s[i]));
    throw ExprError(column, fmt::format("unexpected byte 0x{:02x}", c));
  }
  out.push_back({Token::Kind::End, "", static_cast<int>(s.size()) + 1});
  return out;
}

// A name as an expression must spell it: bare if it is an identifier and no keyword, else in
// backticks.
std::string quoted_if_needed(const std::string& name) {
  const bool identifier = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) != 0 || name[0] == '_') &&
                          std::all_of(name.begin(), name.end(), [](char ch) {
                            return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_';
                          });
  static constexpr std::string_view keywords[] = {"in", "true", "false", "abs", "min", "max", "label", "output"};
  const bool keyword = std::find(std::begin(keywords), std::end(keywords), name) != std::end(keywords);
  return identifier && !keyword ? name : "`" + name + "`";
}

std::string type_name(ExprType t) { return t == ExprType::Bool ? "a condition" : "a number"; }

class Parser {
 public:
  Parser(std::string_view text, const ExprScope& scope) : tokens_(tokenize(text)), scope_(scope) {}

  Expr parse() {
    if (peek().kind == Token::Kind::End) throw ExprError(1, "empty expression");
    Expr e = disjunction();
    if (peek().kind != Token::Kind::End) {
      throw ExprError(peek().column, fmt::format("unexpected '{}' after a complete expression", peek().text));
    }
    return e;
  }

 private:
  const Token& peek() const { return tokens_[pos_]; }
  bool accept(std::string_view punct) {
    if (peek().kind == Token::Kind::Punct && peek().text == punct) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(std::string_view punct, std::string_view context) {
    if (accept(punct)) return;
    const Token& t = peek();
    throw ExprError(t.column, fmt::format("expected '{}' {}, found {}", punct, context,
                                          t.kind == Token::Kind::End ? "the end" : "'" + t.text + "'"));
  }

  static Expr make(Expr::Op op, ExprType type, int column, std::vector<Expr> args) {
    Expr e;
    e.op = op;
    e.type = type;
    e.column = column;
    for (const Expr& a : args) {
      e.uses_decision = e.uses_decision || a.uses_decision;
      e.height = std::max(e.height, a.height + 1);
    }
    // Everything that walks the tree recurses over its height: a chain of operators counts as
    // much as nesting (`x + x + ... + x` is a tree as tall as it has terms).
    if (e.height > kMaxHeight) {
      throw ExprError(column, fmt::format("the expression is more than {} operators deep (chained or nested); "
                                          "split it over several constraints",
                                          kMaxHeight));
    }
    e.args = std::move(args);
    return e;
  }
  // The operands moved into their vector (a braced list would copy each whole subtree).
  template <typename... A>
  static std::vector<Expr> operands(A&&... a) {
    std::vector<Expr> v;
    v.reserve(sizeof...(a));
    (v.push_back(std::forward<A>(a)), ...);
    return v;
  }
  static void require(const Expr& e, ExprType want, std::string_view context) {
    if (e.type != want) {
      throw ExprError(e.column, fmt::format("{} needs {} here, not {}", context, type_name(want), type_name(e.type)));
    }
  }

  // One left-associative precedence level: operands come from `next`, operators from `ops`.
  template <typename Next>
  Expr left_assoc(Next next, std::initializer_list<std::pair<std::string_view, Expr::Op>> ops, ExprType type) {
    Expr left = (this->*next)();
    for (;;) {
      const Token& t = peek();
      const auto it = std::find_if(ops.begin(), ops.end(), [&](const auto& o) { return o.first == t.text; });
      if (t.kind != Token::Kind::Punct || it == ops.end()) return left;
      const int column = t.column;
      const std::string text = "'" + t.text + "'";
      ++pos_;
      Expr right = (this->*next)();
      require(left, type, text);
      require(right, type, text);
      left = make(it->second, type, column, operands(std::move(left), std::move(right)));
    }
  }
  Expr disjunction() { return left_assoc(&Parser::conjunction, {{"||", Expr::Op::Or}}, ExprType::Bool); }
  Expr conjunction() { return left_assoc(&Parser::comparison, {{"&&", Expr::Op::And}}, ExprType::Bool); }

  static std::optional<Expr::Op> comparison_op(const Token& t) {
    if (t.kind != Token::Kind::Punct) return std::nullopt;
    if (t.text == "<") return Expr::Op::Lt;
    if (t.text == "<=") return Expr::Op::Le;
    if (t.text == ">") return Expr::Op::Gt;
    if (t.text == ">=") return Expr::Op::Ge;
    if (t.text == "==") return Expr::Op::Eq;
    if (t.text == "!=") return Expr::Op::Ne;
    return std::nullopt;
  }

  Expr comparison() {
    Expr left = sum();
    if (peek().kind == Token::Kind::Name && peek().text == "in") {
      const int column = peek().column;
      ++pos_;
      require(left, ExprType::Number, "'in'");
      expect("[", "after 'in'");
      Expr lo = disjunction();
      require(lo, ExprType::Number, "the lower end of the interval");
      expect(",", "between the ends of the interval");
      Expr hi = disjunction();
      require(hi, ExprType::Number, "the upper end of the interval");
      expect("]", "to close the interval");
      return make(Expr::Op::In, ExprType::Bool, column, operands(std::move(left), std::move(lo), std::move(hi)));
    }
    const auto op = comparison_op(peek());
    if (!op) return left;
    const Token& t = peek();
    const int column = t.column;
    const std::string text = t.text;
    ++pos_;
    Expr right = sum();
    if (*op == Expr::Op::Eq || *op == Expr::Op::Ne) {
      if (left.type != right.type) {
        throw ExprError(column,
                        fmt::format("'{}' compares {} with {}", text, type_name(left.type), type_name(right.type)));
      }
    } else {
      require(left, ExprType::Number, "'" + text + "'");
      require(right, ExprType::Number, "'" + text + "'");
    }
    if (comparison_op(peek())) {
      throw ExprError(peek().column, "comparisons do not chain; join them with '&&' (or write 'x in [a, b]')");
    }
    return make(*op, ExprType::Bool, column, operands(std::move(left), std::move(right)));
  }

  Expr sum() { return left_assoc(&Parser::product, {{"+", Expr::Op::Add}, {"-", Expr::Op::Sub}}, ExprType::Number); }
  Expr product() { return left_assoc(&Parser::unary, {{"*", Expr::Op::Mul}, {"/", Expr::Op::Div}}, ExprType::Number); }

  // Recursion guard: a query is written by a person; thousands of nested levels are an error,
  // not a reason to overflow the stack.
  void enter(int column) {
    if (++depth_ > kMaxDepth) throw ExprError(column, fmt::format("nested more than {} levels deep", kMaxDepth));
  }

  Expr unary() {
    const Token& t = peek();
    const int column = t.column;
    enter(column);
    struct Leave {
      int& d;
      ~Leave() { --d; }
    } leave{depth_};
    if (accept("-")) {
      Expr a = unary();
      require(a, ExprType::Number, "'-'");
      return make(Expr::Op::Neg, ExprType::Number, column, operands(std::move(a)));
    }
    if (accept("!")) {
      Expr a = unary();
      require(a, ExprType::Bool, "'!'");
      return make(Expr::Op::Not, ExprType::Bool, column, operands(std::move(a)));
    }
    return primary();
  }

  Expr primary() {
    const Token t = peek();
    if (t.kind == Token::Kind::End) throw ExprError(t.column, "expression ends too early");
    if (t.kind == Token::Kind::Number) {
      ++pos_;
      Expr e = make(Expr::Op::Number, ExprType::Number, t.column, {});
      e.text = t.text;
      return e;
    }
    if (accept("(")) {
      Expr e = disjunction();
      expect(")", "to close the '('");
      return e;
    }
    if (t.kind == Token::Kind::QuotedName) {
      ++pos_;
      return named(t);
    }
    if (t.kind != Token::Kind::Name) throw ExprError(t.column, fmt::format("unexpected '{}'", t.text));
    ++pos_;
    if (t.text == "true" || t.text == "false") {
      Expr e = make(Expr::Op::Bool, ExprType::Bool, t.column, {});
      e.index = t.text == "true" ? 1 : 0;
      return e;
    }
    if (t.text == "abs" || t.text == "min" || t.text == "max") return call(t);
    if (t.text == "label") return decision(t, Expr::Op::Label, 0);
    if (t.text == "output") {
      expect("[", "after 'output'");
      const Token& i = peek();
      if (i.kind != Token::Kind::Number || i.text.find_first_not_of("0123456789") != std::string::npos) {
        throw ExprError(i.column, "expected an output index (0, 1, ...)");
      }
      const long index = i.text.size() > 9 ? -1 : std::stol(i.text);
      if (index < 0 || index >= static_cast<long>(scope_.outputs.size())) {
        throw ExprError(i.column, fmt::format("output index {} is out of range: the model has {} output{}", i.text,
                                              scope_.outputs.size(), scope_.outputs.size() == 1 ? "" : "s"));
      }
      ++pos_;
      expect("]", "after the output index");
      return decision(t, Expr::Op::Output, static_cast<int>(index));
    }
    return named(t);
  }

  // An input or a named output.
  Expr named(const Token& t) const {
    for (std::size_t i = 0; i < scope_.inputs.size(); ++i) {
      if (scope_.inputs[i].name != t.text) continue;
      if (!scope_.allowed_inputs.empty() && !scope_.allowed_inputs[i]) {
        throw ExprError(t.column, fmt::format("'{}' {}", t.text, scope_.allowed_reason));
      }
      Expr e = make(Expr::Op::Input, scope_.inputs[i].type, t.column, {});
      e.index = static_cast<int>(i);
      e.text = t.text;
      return e;
    }
    for (std::size_t i = 0; i < scope_.outputs.size(); ++i) {
      if (scope_.outputs[i] == t.text) return decision(t, Expr::Op::Output, static_cast<int>(i));
    }
    throw ExprError(t.column, fmt::format("unknown name '{}' ({})", t.text, known_names()));
  }

  Expr decision(const Token& t, Expr::Op op, int index) const {
    if (!scope_.allow_decision) {
      throw ExprError(t.column, fmt::format("'{}' is the model's decision; only 'behavior' may use it", t.text));
    }
    Expr e = make(op, ExprType::Number, t.column, {});
    e.index = index;
    e.text = t.text;
    e.uses_decision = true;
    return e;
  }

  Expr call(const Token& name) {
    expect("(", fmt::format("after '{}'", name.text));
    std::vector<Expr> args;
    if (!accept(")")) {
      do {
        Expr a = disjunction();
        require(a, ExprType::Number, "'" + name.text + "'");
        args.push_back(std::move(a));
      } while (accept(","));
      expect(")", fmt::format("to close '{}('", name.text));
    }
    const std::size_t want = name.text == "abs" ? 1 : 2;
    if (name.text == "abs" ? args.size() != 1 : args.size() < 2) {
      throw ExprError(name.column, fmt::format("'{}' takes {} argument{}, got {}", name.text,
                                               want == 1 ? "one" : "two or more", want == 1 ? "" : "s", args.size()));
    }
    const auto op = name.text == "abs" ? Expr::Op::Abs : name.text == "min" ? Expr::Op::Min : Expr::Op::Max;
    return make(op, ExprType::Number, name.column, std::move(args));
  }

  [[nodiscard]] std::string known_names() const {
    std::string in;
    for (const auto& i : scope_.inputs) in += (in.empty() ? "" : ", ") + quoted_if_needed(i.name);
    std::string out = fmt::format("inputs: {}", in.empty() ? "none" : in);
    if (scope_.allow_decision) {
      std::string outs;
      for (const auto& o : scope_.outputs) outs += (outs.empty() ? "" : ", ") + quoted_if_needed(o);
      out += fmt::format("; decision: label, output[i]{}", outs.empty() ? "" : ", " + outs);
    }
    return out;
  }

  static constexpr int kMaxDepth = 200;    // parentheses and unary operators nested
  static constexpr int kMaxHeight = 2000;  // the tree: nesting and chains together
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  const ExprScope& scope_;
};

}  // namespace

Expr parse_expression(std::string_view text, const ExprScope& scope) {
  Parser p(text, scope);
  Expr e = p.parse();
  if (e.type != ExprType::Bool) {
    throw ExprError(e.column, "the expression is a number; a constraint must be a condition (compare it: '... > 0')");
  }
  return e;
}

}  // namespace witness
