#include "solver/rational.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <ostream>

#include "core/error.h"

namespace witness {

static_assert(sizeof(long) == 8, "Rational converts 64-bit integers through long (LP64)");

namespace {

// The three doubles around a positive rational n/d: `down` <= n/d <= `up`, both neighbours in the
// double grid (equal when n/d is a double), and `nearest` (ties to even).
struct Bracket {
  double down;
  double up;
  double nearest;
};

Bracket bracket_positive(const mpz_class& n, const mpz_class& d) {
  constexpr long kMinExp = -1074;  // exponent of the smallest subnormal
  constexpr long kMaxExp = 971;    // (2^53 - 1) * 2^971 is the largest double
  // n/d lies in (2^(ln-ld-1), 2^(ln-ld+1)), so with e = ln - ld - 53 the scaled value
  // n/d * 2^-e lies in (2^52, 2^54); subnormals clamp e (and then the scaled value is < 2^53).
  const long ln = static_cast<long>(mpz_sizeinbase(n.get_mpz_t(), 2));
  const long ld = static_cast<long>(mpz_sizeinbase(d.get_mpz_t(), 2));
  long e = std::max(ln - ld - 53, kMinExp);
  mpz_class q;
  mpz_class r;
  mpz_class den;
  const mpz_class two53 = mpz_class(1) << 53;
  for (;;) {
    mpz_class num = n;
    den = d;
    if (e < 0) {
      mpz_mul_2exp(num.get_mpz_t(), num.get_mpz_t(), static_cast<mp_bitcnt_t>(-e));
    } else {
      mpz_mul_2exp(den.get_mpz_t(), den.get_mpz_t(), static_cast<mp_bitcnt_t>(e));
    }
    mpz_fdiv_qr(q.get_mpz_t(), r.get_mpz_t(), num.get_mpz_t(), den.get_mpz_t());
    if (q < two53) break;
    ++e;  // at most once: the scaled value was in [2^53, 2^54)
  }
  const double inf = std::numeric_limits<double>::infinity();
  if (e > kMaxExp) return {std::numeric_limits<double>::max(), inf, inf};
  // q < 2^53 converts exactly, and q * 2^e is representable (normal, or a multiple of 2^-1074).
  const double down = std::ldexp(q.get_d(), static_cast<int>(e));
  if (r == 0) return {down, down, down};
  // q + 1 <= 2^53 is still exact; 2^53 * 2^971 overflows to inf, which is the right answer.
  const double up = std::ldexp(mpz_class(q + 1).get_d(), static_cast<int>(e));
  const int half = cmp(mpz_class(r * 2), den);
  const bool q_even = mpz_even_p(q.get_mpz_t()) != 0;
  const double nearest = half < 0 ? down : half > 0 ? up : (q_even ? down : up);
  return {down, up, nearest};
}

Bracket bracket(const mpq_class& v) {
  const int s = sgn(v);
  if (s == 0) return {0.0, 0.0, 0.0};
  if (s > 0) return bracket_positive(v.get_num(), v.get_den());
  const mpz_class n = -v.get_num();
  const Bracket b = bracket_positive(n, v.get_den());
  return {-b.up, -b.down, -b.nearest};
}

bool all_digits(std::string_view s) {
  for (char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
  }
  return true;
}

mpz_class parse_digits(std::string_view s) {
  mpz_class z;
  if (s.empty()) return z;
  // Digits were validated, so GMP's tolerance for embedded spaces never comes into play.
  mpz_set_str(z.get_mpz_t(), std::string(s).c_str(), 10);
  return z;
}

[[noreturn]] void bad_number(std::string_view text, const std::string& why) {
  throw InputError("", "number '" + std::string(text) + "'", why);
}

}  // namespace

Rational::Rational(std::int64_t num, std::int64_t den) {
  if (den == 0) throw InputError("rational " + std::to_string(num) + "/0: zero denominator");
  value_ = mpq_class(static_cast<long>(num), 1);
  value_ /= mpq_class(static_cast<long>(den));  // also canonicalises
}

Rational::Rational(mpq_class v) : value_(std::move(v)) { value_.canonicalize(); }

Rational Rational::from_double(double d) {
  if (!std::isfinite(d)) {
    throw InputError("", "", "cannot make an exact rational from the non-finite double " + std::to_string(d));
  }
  // mpq_set_d is exact for finite doubles.
  return Rational(mpq_class(d));
}

Rational Rational::parse(std::string_view text) {
  const std::string_view original = text;
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  if (text.empty()) bad_number(original, "expected a number such as -3/4, 0.1 or 1e-3");
  bool negative = false;
  std::string_view body = text;
  if (body.front() == '+' || body.front() == '-') {
    negative = body.front() == '-';
    body.remove_prefix(1);
  }
  mpq_class value;
  if (const auto slash = body.find('/'); slash != std::string_view::npos) {
    const std::string_view num = body.substr(0, slash);
    const std::string_view den = body.substr(slash + 1);
    if (num.empty() || den.empty() || !all_digits(num) || !all_digits(den)) {
      bad_number(original, "expected a fraction p/q of decimal integers");
    }
    const mpz_class d = parse_digits(den);
    if (d == 0) bad_number(original, "zero denominator");
    value = mpq_class(parse_digits(num), d);
  } else {
    // mantissa: digits [. digits], at least one digit; then optional e[+-]digits
    std::string_view mantissa = body;
    std::string_view exponent;
    bool has_exponent = false;
    if (const auto epos = body.find_first_of("eE"); epos != std::string_view::npos) {
      mantissa = body.substr(0, epos);
      exponent = body.substr(epos + 1);
      has_exponent = true;
    }
    std::string_view int_part = mantissa;
    std::string_view frac_part;
    if (const auto dot = mantissa.find('.'); dot != std::string_view::npos) {
      int_part = mantissa.substr(0, dot);
      frac_part = mantissa.substr(dot + 1);
    }
    if ((int_part.empty() && frac_part.empty()) || !all_digits(int_part) || !all_digits(frac_part)) {
      bad_number(original, "expected a number such as -3/4, 0.1 or 1e-3");
    }
    long exp10 = 0;
    if (has_exponent) {
      bool exp_negative = false;
      if (!exponent.empty() && (exponent.front() == '+' || exponent.front() == '-')) {
        exp_negative = exponent.front() == '-';
        exponent.remove_prefix(1);
      }
      if (exponent.empty() || !all_digits(exponent)) bad_number(original, "expected digits after the exponent mark");
      // Bounded so that a hostile "1e999999999" cannot exhaust memory; doubles need |e| <= 324.
      constexpr long kMaxExponent = 100000;
      while (!exponent.empty() && exponent.front() == '0') exponent.remove_prefix(1);
      if (exponent.size() > 6) bad_number(original, "exponent out of range");
      for (char c : exponent) exp10 = exp10 * 10 + (c - '0');
      if (exp10 > kMaxExponent) bad_number(original, "exponent out of range");
      if (exp_negative) exp10 = -exp10;
    }
    mpz_class digits = parse_digits(std::string(int_part) + std::string(frac_part));
    exp10 -= static_cast<long>(frac_part.size());
    mpz_class scale;
    mpz_ui_pow_ui(scale.get_mpz_t(), 10, static_cast<unsigned long>(exp10 < 0 ? -exp10 : exp10));
    value = exp10 < 0 ? mpq_class(digits, scale) : mpq_class(mpz_class(digits * scale));
  }
  value.canonicalize();
  if (negative) value = -value;
  return Rational(value);
}

double Rational::to_double() const { return bracket(value_).nearest; }
double Rational::to_double_down() const { return bracket(value_).down; }
double Rational::to_double_up() const { return bracket(value_).up; }

Rational Rational::floor() const {
  mpz_class q;
  mpz_fdiv_q(q.get_mpz_t(), value_.get_num_mpz_t(), value_.get_den_mpz_t());
  return Rational(mpq_class(q));
}

Rational Rational::ceil() const {
  mpz_class q;
  mpz_cdiv_q(q.get_mpz_t(), value_.get_num_mpz_t(), value_.get_den_mpz_t());
  return Rational(mpq_class(q));
}

Rational Rational::abs() const { return Rational(mpq_class(::abs(value_))); }

bool Rational::is_integer() const { return value_.get_den() == 1; }

std::int64_t Rational::to_int64() const {
  if (!is_integer() || !value_.get_num().fits_slong_p()) {
    throw InternalError("rational " + to_string() + " is not a 64-bit integer");
  }
  return value_.get_num().get_si();
}

std::string Rational::to_string() const {
  if (is_integer()) return numerator_string();
  return numerator_string() + "/" + denominator_string();
}

std::string Rational::numerator_string() const { return value_.get_num().get_str(10); }
std::string Rational::denominator_string() const { return value_.get_den().get_str(10); }

Rational& Rational::operator+=(const Rational& o) {
  value_ += o.value_;
  return *this;
}

Rational& Rational::operator-=(const Rational& o) {
  value_ -= o.value_;
  return *this;
}

Rational& Rational::operator*=(const Rational& o) {
  value_ *= o.value_;
  return *this;
}

Rational& Rational::operator/=(const Rational& o) {
  if (o.sign() == 0) throw InternalError("rational division by zero: " + to_string() + " / 0");
  value_ /= o.value_;
  return *this;
}

std::ostream& operator<<(std::ostream& out, const Rational& r) { return out << r.to_string(); }

}  // namespace witness
