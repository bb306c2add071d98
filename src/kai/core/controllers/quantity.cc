#include "kai/core/controllers/quantity.h"

#include <array>
#include <cctype>

namespace kai::controllers {
namespace {

using i128 = __int128;
constexpr i128 kNano = 1000000000;
// Every value stays under 2^120, so one more factor of 1024 or 100 never overflows.
constexpr i128 kLimit = i128(1) << 120;

i128 Pow10(int n) {
  i128 p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

std::string ToString(i128 v) {
  if (v == 0) return "0";
  std::string s;
  while (v > 0) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  return s;
}

struct Number {
  bool negative = false;
  i128 digits = 0;
  int frac = 0;  // digits after the point
  size_t end = 0;
};

Error Bad(std::string_view text, std::string_view why) {
  return Error{"invalid quantity \"" + std::string(text) + "\": " + std::string(why)};
}

Result<Number> ReadNumber(std::string_view t) {
  Number n;
  size_t i = 0;
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) n.negative = t[i++] == '-';
  bool point = false, any = false;
  int count = 0;
  for (; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    if (++count > 36) return Bad(t, "too many digits");
    n.digits = n.digits * 10 + (c - '0');
    n.frac += point ? 1 : 0;
    any = true;
  }
  if (!any) return Bad(t, "no number");
  n.end = i;
  return n;
}

struct Suffix {
  int exp10 = 0, exp2 = 0;
  QuantityFormat format = QuantityFormat::kDecimalSI;
};

Result<Suffix> ReadExponent(std::string_view text, std::string_view s) {
  size_t i = 1;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i == s.size() || s.size() - i > 3) return Bad(text, "bad exponent");
  int e = 0;
  for (; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return Bad(text, "bad exponent");
    e = e * 10 + (s[i] - '0');
  }
  return Suffix{negative ? -e : e, 0, QuantityFormat::kDecimalExponent};
}

Result<Suffix> ReadSuffix(std::string_view text, std::string_view s) {
  static constexpr std::array<std::pair<std::string_view, int>, 6> kBinary{
      {{"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}}};
  static constexpr std::array<std::pair<std::string_view, int>, 10> kDecimal{{{"", 0},
                                                                              {"n", -9},
                                                                              {"u", -6},
                                                                              {"m", -3},
                                                                              {"k", 3},
                                                                              {"M", 6},
                                                                              {"G", 9},
                                                                              {"T", 12},
                                                                              {"P", 15},
                                                                              {"E", 18}}};
  for (const auto& [name, e] : kBinary) {
    if (s == name) return Suffix{0, e, QuantityFormat::kBinarySI};
  }
  for (const auto& [name, e] : kDecimal) {
    if (s == name) return Suffix{e, 0, QuantityFormat::kDecimalSI};
  }
  if (s[0] == 'e' || s[0] == 'E') return ReadExponent(text, s);
  return Bad(text, "unknown suffix \"" + std::string(s) + "\"");
}

// digits * 2^exp2 * 10^exp10, rounded up (in magnitude) to an integer, as apimachinery rounds a
// parsed value up to nano units.
Result<i128> Scale(std::string_view text, i128 v, int exp2, int exp10) {
  for (int i = 0; i < exp2; ++i) {
    if (v > kLimit / 2) return Bad(text, "out of range");
    v *= 2;
  }
  if (exp10 >= 0) {
    for (int i = 0; i < exp10; ++i) {
      if (v > kLimit / 10) return Bad(text, "out of range");
      v *= 10;
    }
    return v;
  }
  if (-exp10 > 37) return v == 0 ? i128(0) : i128(1);
  const i128 d = Pow10(-exp10);
  return v / d + (v % d != 0 ? 1 : 0);
}

std::string_view DecimalSuffix(int exponent, QuantityFormat f, std::string& buf) {
  if (f == QuantityFormat::kDecimalSI) {
    switch (exponent) {
      case -9:
        return "n";
      case -6:
        return "u";
      case -3:
        return "m";
      case 0:
        return "";
      case 3:
        return "k";
      case 6:
        return "M";
      case 9:
        return "G";
      case 12:
        return "T";
      case 15:
        return "P";
      case 18:
        return "E";
      default:
        break;
    }
  }
  if (exponent == 0) return "";
  buf = "e" + std::to_string(exponent);
  return buf;
}

std::string DecimalText(i128 magnitude, QuantityFormat f) {
  int exponent = -9;
  while (magnitude % 10 == 0) {
    magnitude /= 10;
    ++exponent;
  }
  const int r = ((exponent % 3) + 3) % 3;
  magnitude *= Pow10(r);
  exponent -= r;
  std::string buf;
  return ToString(magnitude) + std::string(DecimalSuffix(exponent, f, buf));
}

std::string BinaryText(i128 units) {
  static constexpr std::array<std::string_view, 7> kSuffix{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  size_t step = 0;
  while (step + 1 < kSuffix.size() && units % 1024 == 0) {
    units /= 1024;
    ++step;
  }
  return ToString(units) + std::string(kSuffix[step]);
}

}  // namespace

Result<KubeQuantity> ParseKubeQuantity(std::string_view text) {
  auto n = ReadNumber(text);
  if (!n.ok()) return n.error();
  auto suffix = ReadSuffix(text, text.substr(n->end));
  if (!suffix.ok()) return suffix.error();
  auto v = Scale(text, n->digits, suffix->exp2, suffix->exp10 + 9 - n->frac);
  if (!v.ok()) return v.error();
  return KubeQuantity{n->negative ? -*v : *v, suffix->format};
}

std::string CanonicalText(const KubeQuantity& q) {
  if (q.nano == 0) return "0";
  const i128 magnitude = q.nano < 0 ? -q.nano : q.nano;
  const std::string sign = q.nano < 0 ? "-" : "";
  const bool binary =
      q.format == QuantityFormat::kBinarySI && magnitude >= 1024 * kNano && magnitude % kNano == 0;
  if (binary) return sign + BinaryText(magnitude / kNano);
  const QuantityFormat f =
      q.format == QuantityFormat::kBinarySI ? QuantityFormat::kDecimalSI : q.format;
  return sign + DecimalText(magnitude, f);
}

void AddTo(KubeQuantity& q, const KubeQuantity& y) {
  if (q.nano == 0) q.format = y.format;
  q.nano += y.nano;
}

double RoundedTo4Decimals(const KubeQuantity& q) {
  constexpr i128 kStep = 100000;  // 10^-4 in nano units
  const i128 magnitude = q.nano < 0 ? -q.nano : q.nano;
  const i128 steps = (magnitude + kStep / 2) / kStep;
  const double v = static_cast<double>(steps) / 10000.0;
  return q.nano < 0 ? -v : v;
}

ResourceList Sum(const ResourceList& left, const ResourceList& right) {
  ResourceList total = left;
  for (const auto& [name, q] : right) {
    auto it = total.find(name);
    if (it == total.end()) {
      total.emplace(name, q);
    } else {
      AddTo(it->second, q);
    }
  }
  return total;
}

std::map<std::string, std::string, std::less<>> Texts(const ResourceList& list) {
  std::map<std::string, std::string, std::less<>> out;
  for (const auto& [name, q] : list) out.emplace(name, CanonicalText(q));
  return out;
}

Result<ResourceList> ParseList(const std::map<std::string, std::string, std::less<>>& texts,
                               const std::string& what) {
  ResourceList out;
  for (const auto& [name, text] : texts) {
    auto q = ParseKubeQuantity(text);
    if (!q.ok()) return Error{what + "." + name + ": " + q.error().message};
    out.emplace(name, *q);
  }
  return out;
}

}  // namespace kai::controllers
