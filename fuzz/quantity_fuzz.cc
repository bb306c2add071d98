// libFuzzer target for kai::ParseQuantity and kai::FormatMilli.
//
// Every input is used three ways:
//   1. as raw text, parsed at every scale, checking cross-scale invariants;
//   2. as a recipe for a well-formed quantity whose value is recomputed by a slow, independent
//      decimal-string reference and compared at every scale;
//   3. as an int64 for FormatMilli round trips.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "kai/core/resource/quantity.h"

namespace {

constexpr int kScales = kai::kMaxQuantityScale - kai::kMinQuantityScale + 1;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

void Require(bool condition, const char* what, std::string_view text, int scale) {
  if (condition) return;
  std::fprintf(stderr, "invariant failed: %s (text=\"%.*s\" scale=%d)\n", what,
               static_cast<int>(text.size()), text.data(), scale);
  std::abort();
}

struct Outcome {
  bool ok = false;
  int64_t value = 0;
  std::string error;
};

Outcome Run(std::string_view text, int scale) {
  const kai::Result<int64_t> result = kai::ParseQuantity(text, scale);
  if (result.ok()) return {true, result.value(), ""};
  return {false, 0, result.error().message};
}

bool IsRangeError(const Outcome& o) {
  return !o.ok && o.error.find("out of range") != std::string::npos;
}

__int128 Pow10(int k) {
  __int128 p = 1;
  while (k-- > 0) p *= 10;
  return p;
}

// ceil(a / b) for b > 0 (C++ division truncates toward zero).
__int128 CeilDiv(__int128 a, __int128 b) {
  const __int128 q = a / b;
  return (a % b != 0 && a > 0) ? q + 1 : q;
}

int ScaleAt(int i) { return kai::kMinQuantityScale + i; }

// A syntax error is the same at every scale; a range error at scale s implies one at s + 1.
void CheckErrorConsistency(std::string_view text, const Outcome (&out)[kScales]) {
  for (int i = 0; i < kScales; ++i) {
    const bool syntax_error = !out[i].ok && !IsRangeError(out[i]);
    Require(!out[i].error.empty() || out[i].ok, "errors carry a message", text, ScaleAt(i));
    if (syntax_error) {
      Require(!out[0].ok && out[0].error == out[i].error, "syntax errors do not depend on scale",
              text, ScaleAt(i));
    }
    if (i > 0 && out[i].ok) {
      Require(out[i - 1].ok, "fits at scale s implies fits at s - 1", text, ScaleAt(i));
    }
  }
}

// ceil(ceil(y) / m) == ceil(y / m), so v(s) == ceil(v(t) / 10^(t - s)) for s < t.
void CheckScalesAgree(std::string_view text, const Outcome (&out)[kScales]) {
  for (int t = 0; t < kScales; ++t) {
    if (!out[t].ok) continue;
    for (int s = 0; s < t; ++s) {
      Require(out[s].ok, "smaller scale must fit", text, ScaleAt(s));
      Require(out[s].value == CeilDiv(out[t].value, Pow10(t - s)), "scales agree", text,
              ScaleAt(s));
    }
  }
}

void CheckSignAndMilli(std::string_view text, const Outcome (&out)[kScales]) {
  const bool negative = !text.empty() && text[0] == '-';
  for (int i = 0; i < kScales; ++i) {
    if (!out[i].ok) continue;
    Require(negative ? out[i].value <= 0 : out[i].value >= 0, "sign", text, ScaleAt(i));
  }
  const Outcome& base = out[0 - kai::kMinQuantityScale];
  const Outcome& milli = out[3 - kai::kMinQuantityScale];
  if (!milli.ok) return;
  // A milli value v3 = ceil(1000x) satisfies 1000 * (v0 - 1) < v3 <= 1000 * v0.
  const __int128 v0 = base.value;
  Require(milli.value <= 1000 * v0 && milli.value > 1000 * (v0 - 1), "milli vs base", text, 3);
  const std::string formatted = kai::FormatMilli(milli.value);
  const Outcome again = Run(formatted, 3);
  Require(again.ok && again.value == milli.value, "FormatMilli round trip", formatted, 3);
}

void CheckRawInvariants(std::string_view text) {
  Outcome out[kScales];
  for (int i = 0; i < kScales; ++i) out[i] = Run(text, ScaleAt(i));
  CheckErrorConsistency(text, out);
  CheckScalesAgree(text, out);
  CheckSignAndMilli(text, out);
  Require(!Run(text, kai::kMaxQuantityScale + 1).ok, "scale 19 rejected", text, 19);
  Require(!Run(text, kai::kMinQuantityScale - 1).ok, "scale -19 rejected", text, -19);
}

// ---- Structured mode: a well-formed quantity and an independent reference. ----

class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t Next() { return pos_ < size_ ? data_[pos_++] : 0; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

struct Recipe {
  bool negative = false;
  std::string text;
  std::string digits;  // int digits then frac digits
  int64_t frac_len = 0;
  int64_t exp10 = 0;
  int exp2 = 0;
};

struct NamedSuffix {
  const char* name;
  int exp10;
  int exp2;
};
constexpr NamedSuffix kNamed[] = {
    {"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
    {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
    {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
};
constexpr int kNamedCount = sizeof(kNamed) / sizeof(kNamed[0]);

std::string TakeDigits(Bytes& bytes, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += static_cast<char>('0' + bytes.Next() % 10);
  return out;
}

void AppendExponent(Bytes& bytes, Recipe& r) {
  const uint8_t style = bytes.Next();
  const int magnitude = bytes.Next() % 46;
  const bool negative = style & 2;
  r.text += (style & 1) ? 'E' : 'e';
  if (negative) r.text += '-';
  if (!negative && (style & 4)) r.text += '+';
  if (style & 8) r.text += "00";
  r.text += std::to_string(magnitude);
  r.exp10 = negative ? -magnitude : magnitude;
}

Recipe BuildRecipe(Bytes& bytes) {
  Recipe r;
  const uint8_t sign = bytes.Next() % 3;
  r.negative = sign == 2;
  if (sign != 0) r.text += r.negative ? '-' : '+';
  const std::string int_digits = TakeDigits(bytes, bytes.Next() % 31);
  const uint8_t frac_choice = bytes.Next();
  const std::string frac_digits = TakeDigits(bytes, frac_choice % 31);
  r.text += int_digits;
  if (!frac_digits.empty() || (frac_choice & 0x80)) r.text += '.';
  r.text += frac_digits;
  r.digits = int_digits + frac_digits;
  r.frac_len = static_cast<int64_t>(frac_digits.size());
  const uint8_t suffix = bytes.Next() % (kNamedCount + 1);
  if (suffix == kNamedCount) {
    AppendExponent(bytes, r);
  } else {
    r.text += kNamed[suffix].name;
    r.exp10 = kNamed[suffix].exp10;
    r.exp2 = kNamed[suffix].exp2;
  }
  return r;
}

std::string Double(const std::string& digits) {
  std::string out(digits.size(), '0');
  int carry = 0;
  for (size_t i = digits.size(); i-- > 0;) {
    const int t = (digits[i] - '0') * 2 + carry;
    out[i] = static_cast<char>('0' + t % 10);
    carry = t / 10;
  }
  return carry ? "1" + out : out;
}

// ceil(value * 10^scale) via decimal strings, or nullopt when outside int64.
std::optional<int64_t> Reference(const Recipe& r, int scale) {
  std::string digits = r.digits;
  for (int i = 0; i < r.exp2; ++i) digits = Double(digits);
  const int64_t e = r.exp10 + scale - r.frac_len;
  std::string int_part;
  std::string frac_part;
  if (e >= 0) {
    int_part = digits + std::string(static_cast<size_t>(e), '0');
  } else {
    const int64_t point = static_cast<int64_t>(digits.size()) + e;
    const size_t split = point > 0 ? static_cast<size_t>(point) : 0;
    int_part = digits.substr(0, split);
    frac_part = digits.substr(split);
  }
  int_part.erase(0, std::min(int_part.find_first_not_of('0'), int_part.size()));
  const bool inexact = frac_part.find_first_not_of('0') != std::string::npos;
  if (int_part.size() > 19) return std::nullopt;
  uint64_t floor = 0;
  for (char c : int_part) floor = floor * 10 + static_cast<uint64_t>(c - '0');
  if (r.negative) {
    if (floor > static_cast<uint64_t>(kInt64Max) + 1) return std::nullopt;
    return static_cast<int64_t>(0 - floor);
  }
  const unsigned __int128 ceil = static_cast<unsigned __int128>(floor) + (inexact ? 1 : 0);
  if (ceil > static_cast<uint64_t>(kInt64Max)) return std::nullopt;
  return static_cast<int64_t>(ceil);
}

void CheckAgainstReference(const Recipe& r) {
  for (int scale = kai::kMinQuantityScale; scale <= kai::kMaxQuantityScale; ++scale) {
    const Outcome got = Run(r.text, scale);
    if (r.digits.empty()) {
      Require(!got.ok && !IsRangeError(got), "no digits is a syntax error", r.text, scale);
      continue;
    }
    const std::optional<int64_t> want = Reference(r, scale);
    if (!want) {
      Require(IsRangeError(got), "reference says out of range", r.text, scale);
    } else {
      Require(got.ok && got.value == *want, "matches reference", r.text, scale);
    }
  }
}

// ---- FormatMilli. ----

void CheckFormatMilli(int64_t milli) {
  const std::string text = kai::FormatMilli(milli);
  const size_t dot = text.find('.');
  if (dot != std::string::npos) {
    Require(text.size() - dot - 1 <= 3 && text.back() != '0', "no trailing zeros", text, 3);
  }
  const Outcome parsed = Run(text, 3);
  Require(parsed.ok && parsed.value == milli, "FormatMilli parses back", text, 3);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckRawInvariants(text);

  Bytes bytes(data, size);
  const Recipe recipe = BuildRecipe(bytes);
  CheckAgainstReference(recipe);
  CheckRawInvariants(recipe.text);

  int64_t milli = 0;
  std::memcpy(&milli, data, std::min(size, sizeof(milli)));
  CheckFormatMilli(milli);
  return 0;
}
