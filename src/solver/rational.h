// Exact rational numbers (GMP), used wherever a solver encoding must not round.
//
//   witness::Rational w = witness::Rational::from_double(0.1);   // 3602879701896397/36028797018963968
//   witness::Rational t = witness::Rational::parse("0.1");       // 1/10 exactly
//   bool above = w > t;                                          // true: the double 0.1 is above 1/10
//   double lo = (w * 3).to_double_down();                        // largest double <= 3 * w
//   double hi = (w * 3).to_double_up();                          // smallest double >= 3 * w
//   std::string s = (t / 4).to_string();                         // "1/40"
#pragma once

#include <gmpxx.h>

#include <compare>
#include <concepts>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <type_traits>

namespace witness {

class Rational {
 public:
  Rational() = default;  // 0
  // Any integer type except bool, exactly (implicit so that `x + 1` and `r == 0` read naturally).
  template <std::integral T>
  requires(!std::same_as<T, bool>) Rational(T v) {  // NOLINT(google-explicit-constructor)
    if constexpr (std::is_signed_v<T>) {
      value_ = mpq_class(static_cast<long>(v));
    } else {
      value_ = mpq_class(static_cast<unsigned long>(v));
    }
  }
  // num / den in lowest terms; InputError when den is 0.
  Rational(std::int64_t num, std::int64_t den);
  explicit Rational(mpq_class v);

  // The exact value of a finite double (every finite double is a dyadic rational).
  // NaN and infinities: InputError.
  static Rational from_double(double d);
  // "-3/4", "12", "0.1", "-.5", "1e-3", "2.5E+7": exact. Surrounding spaces are ignored;
  // anything else (empty, "1/0", "inf", "0x10", "1 2") is an InputError.
  static Rational parse(std::string_view text);

  // Nearest double, ties to even (what IEEE-754 division would give); +-inf beyond the range.
  [[nodiscard]] double to_double() const;
  // Largest double <= *this (may be -inf), and smallest double >= *this (may be +inf).
  [[nodiscard]] double to_double_down() const;
  [[nodiscard]] double to_double_up() const;

  [[nodiscard]] Rational floor() const;  // largest integer <= *this
  [[nodiscard]] Rational ceil() const;   // smallest integer >= *this
  [[nodiscard]] Rational abs() const;
  [[nodiscard]] bool is_integer() const;
  [[nodiscard]] int sign() const { return sgn(value_); }
  // The value as int64; InternalError unless it is an integer in range.
  [[nodiscard]] std::int64_t to_int64() const;

  // "p/q" in lowest terms with q > 0, or "p" when q == 1. parse(to_string()) == *this.
  [[nodiscard]] std::string to_string() const;
  [[nodiscard]] std::string numerator_string() const;    // signed
  [[nodiscard]] std::string denominator_string() const;  // positive
  [[nodiscard]] const mpq_class& gmp() const { return value_; }

  Rational& operator+=(const Rational& o);
  Rational& operator-=(const Rational& o);
  Rational& operator*=(const Rational& o);
  Rational& operator/=(const Rational& o);  // InternalError on division by zero
  friend Rational operator+(Rational a, const Rational& b) { return a += b; }
  friend Rational operator-(Rational a, const Rational& b) { return a -= b; }
  friend Rational operator*(Rational a, const Rational& b) { return a *= b; }
  friend Rational operator/(Rational a, const Rational& b) { return a /= b; }
  friend Rational operator-(const Rational& a) { return Rational(mpq_class(-a.value_)); }

  friend bool operator==(const Rational& a, const Rational& b) { return a.value_ == b.value_; }
  friend std::strong_ordering operator<=>(const Rational& a, const Rational& b) {
    const int c = cmp(a.value_, b.value_);
    return c < 0 ? std::strong_ordering::less : c > 0 ? std::strong_ordering::greater : std::strong_ordering::equal;
  }

 private:
  mpq_class value_;
};

std::ostream& operator<<(std::ostream& out, const Rational& r);

}  // namespace witness
