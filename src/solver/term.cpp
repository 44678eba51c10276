#include "solver/term.h"

#include <unordered_map>

#include "core/error.h"

namespace witness {

struct ConstraintBuilder {
  static Constraint make(Constraint::Kind kind, Term term, std::vector<Constraint> args) {
    auto node = std::make_shared<ConstraintNode>();
    node->kind = kind;
    node->term = std::move(term);
    node->args = std::move(args);
    return Constraint(std::move(node));
  }
};

namespace {

const std::shared_ptr<const ConstraintNode>& true_node() {
  static const auto node = [] {
    auto n = std::make_shared<ConstraintNode>();
    n->kind = Constraint::Kind::True;
    return std::shared_ptr<const ConstraintNode>(std::move(n));
  }();
  return node;
}

// Folds `t op 0` when t is a constant.
Constraint relation(Constraint::Kind kind, Term t) {
  if (t.is_constant()) {
    const int s = t.constant().sign();
    const bool holds = kind == Constraint::Kind::Le ? s <= 0 : kind == Constraint::Kind::Lt ? s < 0 : s == 0;
    return Constraint::constant(holds);
  }
  return ConstraintBuilder::make(kind, std::move(t), {});
}

// And/Or with flattening and constant folding. `unit` is the neutral element's kind.
Constraint junction(Constraint::Kind kind, const std::vector<Constraint>& cs) {
  const Constraint::Kind unit = kind == Constraint::Kind::And ? Constraint::Kind::True : Constraint::Kind::False;
  const Constraint::Kind zero = kind == Constraint::Kind::And ? Constraint::Kind::False : Constraint::Kind::True;
  std::vector<Constraint> args;
  args.reserve(cs.size());
  for (const Constraint& c : cs) {
    if (c.kind() == unit) continue;
    if (c.kind() == zero) return Constraint::constant(zero == Constraint::Kind::True);
    if (c.kind() == kind) {
      args.insert(args.end(), c.args().begin(), c.args().end());
    } else {
      args.push_back(c);
    }
  }
  if (args.empty()) return Constraint::constant(unit == Constraint::Kind::True);
  if (args.size() == 1) return args.front();
  return ConstraintBuilder::make(kind, Term(), std::move(args));
}

class Evaluator {
 public:
  explicit Evaluator(const std::function<Rational(int)>& value_of) : value_of_(value_of) {}

  Rational term(const Term& t) {
    Rational sum = t.constant();
    for (const auto& [id, coeff] : t.vars()) sum += coeff * value_of_(id);
    for (const auto& [coeff, node] : t.nodes()) sum += coeff * this->node(*node);
    return sum;
  }

  bool constraint(const Constraint& c) {
    using K = Constraint::Kind;
    switch (c.kind()) {
      case K::True: return true;
      case K::False: return false;
      case K::Le: return term(c.term()).sign() <= 0;
      case K::Lt: return term(c.term()).sign() < 0;
      case K::Eq: return term(c.term()).sign() == 0;
      case K::Not: return !cached(c.args().front());
      case K::And:
        for (const Constraint& a : c.args()) {
          if (!cached(a)) return false;
        }
        return true;
      case K::Or:
        for (const Constraint& a : c.args()) {
          if (cached(a)) return true;
        }
        return false;
    }
    throw InternalError("evaluate: unknown constraint kind");
  }

 private:
  bool cached(const Constraint& c) {
    if (c.kind() == Constraint::Kind::Not) return !cached(c.args().front());
    const auto it = constraints_.find(c.node());
    if (it != constraints_.end()) return it->second;
    const bool v = constraint(c);
    constraints_.emplace(c.node(), v);
    return v;
  }

  Rational node(const TermNode& n) {
    const auto it = nodes_.find(&n);
    if (it != nodes_.end()) return it->second;
    Rational v;
    switch (n.kind) {
      case TermNode::Kind::Ite: v = cached(n.conditions.at(0)) ? term(n.args.at(0)) : term(n.args.at(1)); break;
    }
    nodes_.emplace(&n, v);
    return v;
  }

  const std::function<Rational(int)>& value_of_;
  std::unordered_map<const TermNode*, Rational> nodes_;
  std::unordered_map<const ConstraintNode*, bool> constraints_;
};

}  // namespace

Term::Term(Rational constant) : constant_(std::move(constant)) {}

Term Term::var(int id) {
  if (id < 0) throw InternalError("Term::var: negative variable id " + std::to_string(id));
  Term t;
  t.vars_.emplace(id, Rational(1));
  return t;
}

Term Term::from_node(std::shared_ptr<const TermNode> node) {
  if (!node) throw InternalError("Term::from_node: null node");
  Term t;
  t.nodes_.emplace_back(Rational(1), std::move(node));
  return t;
}

Term& Term::operator+=(const Term& o) {
  constant_ += o.constant_;
  for (const auto& [id, coeff] : o.vars_) {
    auto [it, inserted] = vars_.emplace(id, coeff);
    if (!inserted) {
      it->second += coeff;
      if (it->second.sign() == 0) vars_.erase(it);
    }
  }
  // Merge repeated non-linear nodes while that is cheap (relu(a) - relu(a)); otherwise append:
  // a repeated node is still correct, only less tidy.
  const bool merge = nodes_.size() * o.nodes_.size() <= 64;
  for (const auto& [coeff, node] : o.nodes_) {
    bool merged = false;
    if (merge) {
      for (auto it = nodes_.begin(); it != nodes_.end(); ++it) {
        if (it->second != node) continue;
        it->first += coeff;
        if (it->first.sign() == 0) nodes_.erase(it);
        merged = true;
        break;
      }
    }
    if (!merged) nodes_.emplace_back(coeff, node);
  }
  return *this;
}

Term& Term::operator-=(const Term& o) { return *this += -o; }

Term& Term::operator*=(const Rational& k) {
  if (k.sign() == 0) {
    *this = Term();
    return *this;
  }
  constant_ *= k;
  for (auto& [id, coeff] : vars_) coeff *= k;
  for (auto& [coeff, node] : nodes_) coeff *= k;
  return *this;
}

Constraint::Constraint() : node_(true_node()) {}

Constraint Constraint::constant(bool value) {
  if (value) return Constraint();
  return ConstraintBuilder::make(Kind::False, Term(), {});
}

Constraint::Kind Constraint::kind() const { return node_->kind; }
const Term& Constraint::term() const { return node_->term; }
const std::vector<Constraint>& Constraint::args() const { return node_->args; }

Constraint le(const Term& a, const Term& b) { return relation(Constraint::Kind::Le, a - b); }
Constraint lt(const Term& a, const Term& b) { return relation(Constraint::Kind::Lt, a - b); }
Constraint ge(const Term& a, const Term& b) { return le(b, a); }
Constraint gt(const Term& a, const Term& b) { return lt(b, a); }
Constraint eq(const Term& a, const Term& b) { return relation(Constraint::Kind::Eq, a - b); }
Constraint ne(const Term& a, const Term& b) { return negation(eq(a, b)); }

Constraint conjunction(const std::vector<Constraint>& cs) { return junction(Constraint::Kind::And, cs); }
Constraint disjunction(const std::vector<Constraint>& cs) { return junction(Constraint::Kind::Or, cs); }

Constraint negation(const Constraint& c) {
  using K = Constraint::Kind;
  switch (c.kind()) {
    case K::True: return Constraint::constant(false);
    case K::False: return Constraint::constant(true);
    case K::Le: return relation(K::Lt, -c.term());  // not(t <= 0)  <=>  -t < 0
    case K::Lt: return relation(K::Le, -c.term());  // not(t < 0)   <=>  -t <= 0
    case K::Not: return c.args().front();
    case K::Eq:
    case K::And:
    case K::Or: return ConstraintBuilder::make(K::Not, Term(), {c});
  }
  throw InternalError("negation: unknown constraint kind");
}

Constraint implies(const Constraint& a, const Constraint& b) { return disjunction({negation(a), b}); }

Term ite(const Constraint& c, const Term& a, const Term& b) {
  if (c.kind() == Constraint::Kind::True) return a;
  if (c.kind() == Constraint::Kind::False) return b;
  auto node = std::make_shared<TermNode>();
  node->kind = TermNode::Kind::Ite;
  node->conditions = {c};
  node->args = {a, b};
  return Term::from_node(std::move(node));
}

Rational evaluate(const Term& t, const std::function<Rational(int)>& value_of) { return Evaluator(value_of).term(t); }

bool evaluate(const Constraint& c, const std::function<Rational(int)>& value_of) {
  return Evaluator(value_of).constraint(c);
}

}  // namespace witness
