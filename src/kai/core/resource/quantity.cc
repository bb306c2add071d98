#include "kai/core/resource/quantity.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace kai {
namespace {

// |exponent| after "e"/"E" saturates here; anything this large already decides the result.
constexpr int64_t kExponentCap = 1'000'000'000'000'000;
// 10^19 > 2^63, so a magnitude with 20 or more integer digits never fits in int64.
constexpr int64_t kMaxIntegerDigits = 19;
constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
constexpr uint64_t kInt64MinMagnitude = kInt64Max + 1;

struct Suffix {
  std::string_view name;
  int exp10;
  int exp2;
};

constexpr Suffix kSuffixes[] = {
    {"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
    {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
    {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
};

// A syntactically valid quantity: +-(int_digits "." frac_digits) * 10^exp10 * 2^exp2.
struct Parsed {
  bool negative = false;
  std::string_view int_digits;
  std::string_view frac_digits;
  int64_t exp10 = 0;
  int exp2 = 0;
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsSign(char c) { return c == '+' || c == '-'; }

// Reads `text` left to right.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}
  bool AtEnd() const { return pos_ == text_.size(); }
  char Peek() const { return text_[pos_]; }
  void Advance() { ++pos_; }
  bool Consume(char c) {
    if (AtEnd() || Peek() != c) return false;
    Advance();
    return true;
  }
  template <class Pred>
  std::string_view TakeWhile(Pred pred) {
    const size_t start = pos_;
    while (!AtEnd() && pred(Peek())) Advance();
    return text_.substr(start, pos_ - start);
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

bool IsPrintable(char c) { return c >= 0x20 && c < 0x7f; }

// "\xNN" for a byte that is not printable ASCII.
std::string HexEscape(char c) {
  constexpr char kHex[] = "0123456789abcdef";
  const auto u = static_cast<unsigned char>(c);
  return std::string("\\x") + kHex[u >> 4] + kHex[u & 0xf];
}

std::string DescribeChar(char c) {
  std::string out = "'";
  out += IsPrintable(c) ? std::string(1, c) : HexEscape(c);
  out += '\'';
  return out;
}

// Makes arbitrary bytes safe to show inside double quotes.
std::string Escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += IsPrintable(c) ? std::string(1, c) : HexEscape(c);
  }
  return out;
}

Error MakeError(std::string_view text, std::string_view detail) {
  return Error{"invalid quantity \"" + Escape(text) + "\": " + std::string(detail)};
}

std::string Unexpected(const Cursor& cursor) {
  return "unexpected character " + DescribeChar(cursor.Peek());
}

// Parses "[+-]digits" after an exponent marker; saturates at +-kExponentCap.
std::optional<std::string> ParseExponent(Cursor& cursor, int64_t& exponent) {
  const bool negative = cursor.Consume('-');
  if (!negative) cursor.Consume('+');
  const std::string_view digits = cursor.TakeWhile(IsDigit);
  if (digits.empty()) {
    return cursor.AtEnd() ? std::string("missing exponent digits") : Unexpected(cursor);
  }
  if (!cursor.AtEnd()) return Unexpected(cursor);
  int64_t magnitude = 0;
  for (char c : digits) magnitude = std::min(kExponentCap, magnitude * 10 + (c - '0'));
  exponent = negative ? -magnitude : magnitude;
  return std::nullopt;
}

// Parses the text after the number: a named suffix or an exponent.
std::optional<std::string> ParseSuffix(Cursor& cursor, Parsed& parsed) {
  const std::string_view letters = cursor.TakeWhile(IsLetter);
  const bool exponent_marker = letters == "e" || letters == "E";
  if (exponent_marker && !cursor.AtEnd() && (IsDigit(cursor.Peek()) || IsSign(cursor.Peek()))) {
    return ParseExponent(cursor, parsed.exp10);
  }
  if (!cursor.AtEnd()) return Unexpected(cursor);
  if (letters == "e") return std::string("missing exponent digits");
  for (const Suffix& suffix : kSuffixes) {
    if (suffix.name == letters) {
      parsed.exp10 = suffix.exp10;
      parsed.exp2 = suffix.exp2;
      return std::nullopt;
    }
  }
  return "unknown suffix \"" + Escape(letters) + "\"";
}

std::optional<std::string> ParseSyntax(std::string_view text, Parsed& parsed) {
  if (text.empty()) return std::string("empty string");
  Cursor cursor(text);
  parsed.negative = cursor.Consume('-');
  if (!parsed.negative) cursor.Consume('+');
  parsed.int_digits = cursor.TakeWhile(IsDigit);
  if (cursor.Consume('.')) parsed.frac_digits = cursor.TakeWhile(IsDigit);
  if (parsed.int_digits.empty() && parsed.frac_digits.empty()) {
    return cursor.AtEnd() ? std::string("missing number") : Unexpected(cursor);
  }
  return ParseSuffix(cursor, parsed);
}

// The mantissa digits int_digits ++ frac_digits without leading zeros, as one sequence.
class Digits {
 public:
  Digits(std::string_view int_part, std::string_view frac_part) : a_(int_part), b_(frac_part) {
    a_.remove_prefix(std::min(a_.find_first_not_of('0'), a_.size()));
    if (a_.empty()) b_.remove_prefix(std::min(b_.find_first_not_of('0'), b_.size()));
  }
  int64_t size() const { return static_cast<int64_t>(a_.size() + b_.size()); }
  unsigned At(int64_t i) const {
    const auto index = static_cast<size_t>(i);
    const char c = index < a_.size() ? a_[index] : b_[index - a_.size()];
    return static_cast<unsigned>(c - '0');
  }

 private:
  std::string_view a_;
  std::string_view b_;
};

// floor(|value|) and whether |value| has a nonzero fractional part.
struct Magnitude {
  unsigned __int128 floor = 0;
  bool inexact = false;
};

// The integer part: digits [0, min(int_len, n)) followed by (int_len - n) zeros.
// Requires int_len <= kMaxIntegerDigits, so the result is below 10^19 < 2^64.
uint64_t IntegerPart(const Digits& digits, int64_t int_len) {
  uint64_t value = 0;
  for (int64_t i = 0; i < int_len; ++i) value = value * 10 + (i < digits.size() ? digits.At(i) : 0);
  return value;
}

// floor(F * 2^exp2) and whether it is inexact, where F = 0.(zeros)(digits[first, n)) and
// `zeros` counts the implicit zeros between the point and digits[first]. Long multiplication
// from the least significant digit; carries stay below 2^exp2 <= 2^60, so t fits in uint64.
Magnitude FractionPart(const Digits& digits, int64_t first, int64_t zeros, int exp2) {
  uint64_t carry = 0;
  bool nonzero = false;
  for (int64_t i = digits.size() - 1; i >= first; --i) {
    const uint64_t t = (static_cast<uint64_t>(digits.At(i)) << exp2) + carry;
    nonzero = nonzero || t % 10 != 0;
    carry = t / 10;
  }
  for (int64_t k = 0; k < zeros && carry != 0; ++k) {
    nonzero = nonzero || carry % 10 != 0;
    carry /= 10;
  }
  return Magnitude{carry, nonzero};
}

// |value| = digits * 10^exp10 * 2^exp2; nullopt when it is certainly >= 10^19.
std::optional<Magnitude> ComputeMagnitude(const Digits& digits, int64_t exp10, int exp2) {
  if (digits.size() == 0) return Magnitude{};
  const int64_t int_len = digits.size() + exp10;  // digits left of the decimal point
  if (int_len > kMaxIntegerDigits) return std::nullopt;
  const unsigned __int128 integer = IntegerPart(digits, int_len);
  const int64_t first_frac = std::max<int64_t>(int_len, 0);
  const int64_t zeros = std::max<int64_t>(-int_len, 0);
  Magnitude m = FractionPart(digits, first_frac, zeros, exp2);
  m.floor += integer << exp2;
  return m;
}

// ceil(+-magnitude) as int64, or nullopt when out of range.
std::optional<int64_t> CeilToInt64(const Magnitude& m, bool negative) {
  if (negative) {
    if (m.floor > kInt64MinMagnitude) return std::nullopt;
    return static_cast<int64_t>(0 - static_cast<uint64_t>(m.floor));
  }
  const unsigned __int128 ceil = m.floor + (m.inexact ? 1 : 0);
  if (ceil > kInt64Max) return std::nullopt;
  return static_cast<int64_t>(ceil);
}

}  // namespace

Result<int64_t> ParseQuantity(std::string_view text, int scale_exp10) {
  if (scale_exp10 < kMinQuantityScale || scale_exp10 > kMaxQuantityScale) {
    return MakeError(text, "scale " + std::to_string(scale_exp10) + " outside [-18, 18]");
  }
  Parsed parsed;
  if (auto error = ParseSyntax(text, parsed)) return MakeError(text, *error);
  const Digits digits(parsed.int_digits, parsed.frac_digits);
  const int64_t exp10 =
      parsed.exp10 + scale_exp10 - static_cast<int64_t>(parsed.frac_digits.size());
  const std::optional<Magnitude> magnitude = ComputeMagnitude(digits, exp10, parsed.exp2);
  std::optional<int64_t> value;
  if (magnitude) value = CeilToInt64(*magnitude, parsed.negative);
  if (!value) {
    return MakeError(
        text, "out of range: does not fit in int64 at scale 10^" + std::to_string(scale_exp10));
  }
  return *value;
}

std::string FormatMilli(int64_t milli) {
  const bool negative = milli < 0;
  const uint64_t magnitude =
      negative ? 0 - static_cast<uint64_t>(milli) : static_cast<uint64_t>(milli);
  std::string out = negative ? "-" : "";
  out += std::to_string(magnitude / 1000);
  uint64_t fraction = magnitude % 1000;
  if (fraction == 0) return out;
  int width = 3;
  while (fraction % 10 == 0) {
    fraction /= 10;
    --width;
  }
  const std::string digits = std::to_string(fraction);
  out += '.';
  out.append(static_cast<size_t>(width) - digits.size(), '0');
  out += digits;
  return out;
}

}  // namespace kai
