#include "domain/constraint_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>

#include "core/error.h"
#include "domain/schema.h"

namespace witness {
namespace {

constexpr std::size_t kMaxRuleLength = 100000;  // a rule of a few hundred allowed combinations fits
constexpr int kMaxDepth = 64;                   // nesting of not, and, or, ->, parentheses

struct Token {
  enum class Kind : std::uint8_t { Name, String, Number, Symbol, End };
  Kind kind = Kind::End;
  std::string text;
  std::size_t column = 0;  // 1-based, in the rule
};

class RuleParser {
 public:
  RuleParser(const std::string& text, const Schema& schema, std::string file, std::string where)
      : text_(text), schema_(schema), file_(std::move(file)), where_(std::move(where)) {
    if (text.size() > kMaxRuleLength) fail(fmt::format("a rule longer than {} characters", kMaxRuleLength));
    tokenize();
  }

  void parse(Constraints& out) {
    out_ = &out;
    if (peek().kind == Token::Kind::Name && peek(1).text == "=" &&
        (peek(2).text == "bucket" || peek(2).text == "map") && peek(3).text == "(") {
      derived();
    } else {
      Formula f = formula(0);
      expect_end();
      out.add_rule(std::move(f), text_, where_);
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what, std::size_t column = 0) const {
    const std::string at = column > 0 ? fmt::format(" (at column {} of the rule)", column) : std::string();
    throw InputError(file_, where_, fmt::format("constraint '{}': {}{}", text_, what, at));
  }

  // --- tokens ---
  void tokenize() {
    std::size_t i = 0;
    const std::string& s = text_;
    auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.'; };
    while (i < s.size()) {
      const char c = s[i];
      if (std::isspace(static_cast<unsigned char>(c)) != 0) {
        ++i;
        continue;
      }
      Token t;
      t.column = i + 1;
      if (std::isdigit(static_cast<unsigned char>(c)) != 0 ||
          (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])) != 0)) {
        const char* begin = s.c_str() + i;
        char* end = nullptr;
        (void)std::strtod(begin, &end);
        t.kind = Token::Kind::Number;
        std::size_t j = i + static_cast<std::size_t>(end - begin);
        // A label that starts with digits (10th, 1st-4th) is a name.
        if (j < s.size() && (std::isalpha(static_cast<unsigned char>(s[j])) != 0 || s[j] == '_')) {
          t.kind = Token::Kind::Name;
          while (j < s.size() && (name_char(s[j]) || (s[j] == '-' && j + 1 < s.size() && name_char(s[j + 1])))) ++j;
        }
        t.text = s.substr(i, j - i);
        i = j;
      } else if (c == '"' || c == '\'' || c == '`') {
        const std::size_t close = s.find(c, i + 1);
        if (close == std::string::npos) fail(fmt::format("unclosed {}", c), i + 1);
        t.kind = c == '`' ? Token::Kind::Name : Token::Kind::String;
        t.text = s.substr(i + 1, close - i - 1);
        i = close + 1;
      } else if (std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_') {
        // Names may hold '-' (education-num): a minus between names needs spaces around it.
        std::size_t j = i;
        while (j < s.size() && (name_char(s[j]) || (s[j] == '-' && j + 1 < s.size() && name_char(s[j + 1])))) ++j;
        t.kind = Token::Kind::Name;
        t.text = s.substr(i, j - i);
        i = j;
      } else {
        static const char* const kTwo[] = {"->", "<=", ">=", "==", "!="};
        t.kind = Token::Kind::Symbol;
        for (const char* two : kTwo) {
          if (s.compare(i, 2, two) == 0) t.text = two;
        }
        if (t.text.empty()) {
          if (std::string("()[]{},:+-*<>=").find(c) == std::string::npos)
            fail(fmt::format("unexpected character '{}'", c), i + 1);
          t.text = std::string(1, c);
        }
        i += t.text.size();
      }
      tokens_.push_back(std::move(t));
    }
    Token end;
    end.column = s.size() + 1;
    tokens_.push_back(end);
  }

  [[nodiscard]] const Token& peek(std::size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  const Token& next() {
    const Token& t = peek();
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool accept(const char* symbol) {
    if (peek().kind == Token::Kind::String || peek().text != symbol) return false;
    ++pos_;
    return true;
  }
  void expect(const char* symbol) {
    if (!accept(symbol)) fail(fmt::format("expected '{}' but found {}", symbol, describe(peek())), peek().column);
  }
  void expect_end() {
    if (peek().kind != Token::Kind::End) fail(fmt::format("unexpected {}", describe(peek())), peek().column);
  }
  static std::string describe(const Token& t) {
    return t.kind == Token::Kind::End ? std::string("the end") : fmt::format("'{}'", t.text);
  }

  // --- names and values ---
  int feature() {
    const Token& t = next();
    if (t.kind != Token::Kind::Name) fail(fmt::format("expected a feature name but found {}", describe(t)), t.column);
    if (const int f = index_of(t.text); f >= 0) return f;
    std::string known;
    for (const Feature& f : schema_.features()) known += (known.empty() ? "" : ", ") + f.name;
    // "age-education-num": a subtraction written without spaces reads as one name.
    const std::size_t dash = t.text.find('-');
    const bool subtraction = dash != std::string::npos && index_of(t.text.substr(0, dash)) >= 0;
    fail(fmt::format("unknown feature '{}' (known: {}){}", t.text, known,
                     subtraction ? "; a minus between names needs spaces around it" : ""),
         t.column);
  }
  [[nodiscard]] int index_of(const std::string& name) const {
    for (int f = 0; f < schema_.size(); ++f) {
      if (schema_.feature(f).name == name) return f;
    }
    return -1;
  }
  double value_of(int f) {
    const Token& t = next();
    if (t.kind == Token::Kind::End || t.kind == Token::Kind::Symbol) {
      if (t.text == "-" && peek().kind == Token::Kind::Number) return -number_for(f, next());
      fail(fmt::format("expected a value of '{}' but found {}", schema_.feature(f).name, describe(t)), t.column);
    }
    return number_for(f, t);
  }
  double number_for(int f, const Token& t) const {
    double v = 0;
    const std::string err = schema_.try_parse_value(f, t.text, v);
    if (!err.empty()) fail(err, t.column);
    return v;
  }
  double number() {
    const bool minus = accept("-");
    const Token& t = next();
    if (t.kind != Token::Kind::Number) fail(fmt::format("expected a number but found {}", describe(t)), t.column);
    const double v = finite(t);
    return minus ? -v : v;
  }
  // A number token's value; 1e999 and the like are refused rather than read as infinite.
  double finite(const Token& t) const {
    const double v = std::strtod(t.text.c_str(), nullptr);
    if (!std::isfinite(v) || std::abs(v) > 1e15)
      fail(fmt::format("the number {} is too large (at most 1e15 in magnitude)", t.text), t.column);
    return v;
  }
  // `a <= 3 and b >= 2`: the word after a number ends the sum, it is no implicit product.
  static bool keyword(const Token& t) { return t.text == "and" || t.text == "or" || t.text == "not" || t.text == "in"; }
  bool numeric(int f) const { return schema_.feature(f).kind != FeatureKind::Categorical; }

  // --- derived features ---
  void derived() {
    DerivedFeature d;
    d.text = text_;
    d.where = where_;
    const std::size_t target_column = peek().column;
    d.target = feature();
    expect("=");
    const bool bucket = next().text == "bucket";
    expect("(");
    const std::size_t source_column = peek().column;
    d.source = feature();
    if (d.source == d.target) fail("a feature cannot be derived from itself", source_column);
    if (out_->derivation_of(d.target) != nullptr)
      fail(fmt::format("'{}' is derived twice", schema_.feature(d.target).name), target_column);
    expect(",");
    if (bucket) {
      d.kind = DerivedFeature::Kind::Bucket;
      if (!numeric(d.source))
        fail(fmt::format("bucket() needs a numeric source; '{}' is categorical: use map()",
                         schema_.feature(d.source).name),
             source_column);
      expect("[");
      if (!accept("]")) {
        do {
          const std::size_t column = peek().column;
          d.edges.push_back(number());
          if (d.edges.size() > 1 && d.edges.back() <= d.edges[d.edges.size() - 2])
            fail("bucket edges must be ascending", column);
        } while (accept(","));
        expect("]");
      }
      expect(",");
      expect("[");
      do {
        d.values.push_back(value_of(d.target));
      } while (accept(","));
      const std::size_t column = peek().column;
      expect("]");
      if (d.values.size() != d.edges.size() + 1)
        fail(fmt::format("{} edges make {} buckets, but {} values are given", d.edges.size(), d.edges.size() + 1,
                         d.values.size()),
             column);
    } else {
      d.kind = DerivedFeature::Kind::Map;
      expect("{");
      std::set<double> keys;
      do {
        const std::size_t column = peek().column;
        const double key = value_of(d.source);
        if (!keys.insert(key).second) fail(fmt::format("'{}' is mapped twice", schema_.display(d.source, key)), column);
        expect(":");
        d.table.emplace_back(key, value_of(d.target));
      } while (accept(","));
      expect("}");
      std::sort(d.table.begin(), d.table.end());
    }
    expect(")");
    expect_end();
    out_->add_derived(std::move(d));
  }

  // --- validity rules ---
  Formula formula(int depth) {
    if (depth > kMaxDepth) fail(fmt::format("nested more than {} deep", kMaxDepth), peek().column);
    Formula left = disjunction(depth + 1);
    if (!accept("->")) return left;
    Formula f;
    f.op = Formula::Op::Implies;
    f.children.push_back(std::move(left));
    f.children.push_back(formula(depth + 1));
    return f;
  }
  Formula disjunction(int depth) {
    Formula first = conjunction(depth);
    if (peek().text != "or" || peek().kind != Token::Kind::Name) return first;
    Formula f;
    f.op = Formula::Op::Or;
    f.children.push_back(std::move(first));
    while (peek().kind == Token::Kind::Name && peek().text == "or") {
      next();
      f.children.push_back(conjunction(depth));
    }
    return f;
  }
  Formula conjunction(int depth) {
    Formula first = unary(depth);
    if (peek().text != "and" || peek().kind != Token::Kind::Name) return first;
    Formula f;
    f.op = Formula::Op::And;
    f.children.push_back(std::move(first));
    while (peek().kind == Token::Kind::Name && peek().text == "and") {
      next();
      f.children.push_back(unary(depth));
    }
    return f;
  }
  Formula unary(int depth) {
    if (depth > kMaxDepth) fail(fmt::format("nested more than {} deep", kMaxDepth), peek().column);
    if (peek().kind == Token::Kind::Name && peek().text == "not" && peek(1).text != "in") {
      next();
      Formula f;
      f.op = Formula::Op::Not;
      f.children.push_back(unary(depth + 1));
      return f;
    }
    if (peek().text == "(" && peek().kind == Token::Kind::Symbol) {
      if (tuple_ahead()) return tuple_set();
      next();
      Formula f = formula(depth + 1);
      expect(")");
      return f;
    }
    return atom();
  }
  // "(a, b) in {...}": a parenthesised list of names followed by `in` or `not in`.
  [[nodiscard]] bool tuple_ahead() const {
    std::size_t i = 1;
    while (peek(i).kind == Token::Kind::Name && peek(i + 1).text == ",") i += 2;
    return i > 1 && peek(i).kind == Token::Kind::Name && peek(i + 1).text == ")" &&
           (peek(i + 2).text == "in" || (peek(i + 2).text == "not" && peek(i + 3).text == "in"));
  }
  bool accept_in() {  // "in" -> false, "not in" -> true
    const bool negated = peek().text == "not";
    if (negated) next();
    next();  // "in"
    return negated;
  }
  Formula set_formula(SetAtom a) {
    for (const int f : a.features) {
      if (schema_.feature(f).kind == FeatureKind::Real)
        fail(
            fmt::format("'{}' is real-valued: sets are for categories, booleans and integers; compare it with <= "
                        "and >=",
                        schema_.feature(f).name));
    }
    Formula f;
    f.op = Formula::Op::Set;
    f.atom = out_->add_set(std::move(a));
    return f;
  }
  Formula tuple_set() {
    expect("(");
    SetAtom a;
    do {
      a.features.push_back(feature());
    } while (accept(","));
    expect(")");
    a.negated = accept_in();
    expect("{");
    do {
      expect("(");
      std::vector<double> t;
      for (std::size_t i = 0; i < a.features.size(); ++i) {
        if (i > 0) expect(",");
        t.push_back(value_of(a.features[i]));
      }
      expect(")");
      a.tuples.push_back(std::move(t));
    } while (accept(","));
    expect("}");
    return set_formula(std::move(a));
  }
  Formula atom() {
    // "f in {...}" / "f not in {...}"
    if (peek().kind == Token::Kind::Name && (peek(1).text == "in" || (peek(1).text == "not" && peek(2).text == "in"))) {
      SetAtom a;
      a.features.push_back(feature());
      a.negated = accept_in();
      expect("{");
      do {
        a.tuples.push_back({value_of(a.features[0])});
      } while (accept(","));
      expect("}");
      return set_formula(std::move(a));
    }
    // "category == value" / "category != value"
    if (peek().kind == Token::Kind::Name && (peek(1).text == "==" || peek(1).text == "!=")) {
      const int f = index_of(peek().text);  // not a feature: the arithmetic below says so
      if (f >= 0 && !numeric(f)) {
        next();
        const bool equal = next().text == "==";
        SetAtom a;
        a.features.push_back(f);
        a.tuples.push_back({value_of(f)});
        a.negated = !equal;
        return set_formula(std::move(a));
      }
    }
    LinearAtom a = linear();
    const Token& op = next();
    static const std::pair<const char*, Comparison> kOps[] = {
        {"<", Comparison::Less},      {"<=", Comparison::LessEqual},    {"==", Comparison::Equal},
        {"!=", Comparison::NotEqual}, {">=", Comparison::GreaterEqual}, {">", Comparison::Greater}};
    const auto it = std::find_if(std::begin(kOps), std::end(kOps), [&](const auto& o) { return op.text == o.first; });
    if (op.kind != Token::Kind::Symbol || it == std::end(kOps))
      fail(fmt::format("expected a comparison (<, <=, ==, !=, >=, >) but found {}", describe(op)), op.column);
    LinearAtom right = linear();
    for (auto [f, c] : right.terms) a.terms.emplace_back(f, -c);
    a.constant -= right.constant;
    a.comparison = it->second;
    // One coefficient per feature.
    std::sort(a.terms.begin(), a.terms.end());
    std::vector<std::pair<int, double>> merged;
    for (const auto& [f, c] : a.terms) {
      if (!merged.empty() && merged.back().first == f)
        merged.back().second += c;
      else
        merged.emplace_back(f, c);
    }
    std::erase_if(merged, [](const auto& t) { return t.second == 0; });
    a.terms = std::move(merged);
    Formula f;
    f.op = Formula::Op::Linear;
    f.atom = out_->add_linear(std::move(a));
    return f;
  }
  // sum of [number [*]] feature | number, with + and -.
  LinearAtom linear() {
    LinearAtom a;
    double sign = accept("-") ? -1.0 : 1.0;
    for (;;) {
      double coefficient = sign;
      const bool has_number = peek().kind == Token::Kind::Number;
      if (has_number) coefficient *= finite(next());
      if (has_number) (void)accept("*");
      if ((peek().kind == Token::Kind::Name && !keyword(peek())) || !has_number) {
        const std::size_t column = peek().column;
        const int f = feature();
        if (!numeric(f))
          fail(fmt::format("'{}' is categorical: compare it with == or in {{...}}, not in arithmetic",
                           schema_.feature(f).name),
               column);
        if (accept("*")) coefficient *= number();
        a.terms.emplace_back(f, coefficient);
      } else {
        a.constant += coefficient;
      }
      if (accept("+")) {
        sign = 1.0;
      } else if (accept("-")) {
        sign = -1.0;
      } else {
        return a;
      }
    }
  }

  const std::string& text_;
  const Schema& schema_;
  std::string file_, where_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  Constraints* out_ = nullptr;
};

}  // namespace

void parse_constraint(const std::string& text, const Schema& schema, const std::string& file, const std::string& where,
                      Constraints& out) {
  RuleParser(text, schema, file, where).parse(out);
}

}  // namespace witness
