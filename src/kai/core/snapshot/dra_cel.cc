#include "kai/core/snapshot/dra_cel.h"

#include <charconv>
#include <optional>
#include <vector>

#include "kai/core/resource/quantity.h"

namespace kai {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

// Splits at top-level && (outside string literals).
std::vector<std::string_view> Conjuncts(std::string_view e) {
  std::vector<std::string_view> out;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i + 1 < e.size(); ++i) {
    if (e[i] == '"') quoted = !quoted;
    if (!quoted && e[i] == '&' && e[i + 1] == '&') {
      out.push_back(Trim(e.substr(start, i - start)));
      start = i + 2;
      ++i;
    }
  }
  out.push_back(Trim(e.substr(start)));
  return out;
}

struct Comparison {
  std::string_view lhs, op, rhs;
};

std::optional<Comparison> SplitComparison(std::string_view e) {
  bool quoted = false;
  for (size_t i = 0; i < e.size(); ++i) {
    if (e[i] == '"') quoted = !quoted;
    if (quoted) continue;
    for (std::string_view op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (e.substr(i, op.size()) == op) {
        return Comparison{Trim(e.substr(0, i)), op, Trim(e.substr(i + op.size()))};
      }
    }
  }
  return std::nullopt;
}

template <class T>
bool Compare(const T& a, std::string_view op, const T& b) {
  if (op == "==") return a == b;
  if (op == "!=") return a != b;
  if (op == "<") return a < b;
  if (op == "<=") return a <= b;
  if (op == ">") return a > b;
  return a >= b;
}

std::optional<std::string> StringLiteral(std::string_view s) {
  if (s.size() < 2 || s.front() != '"' || s.back() != '"') return std::nullopt;
  return std::string(s.substr(1, s.size() - 2));
}

std::optional<int64_t> IntLiteral(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// `device.<map>["domain"].name` -> {domain, name}.
std::optional<std::pair<std::string, std::string>> MapRef(std::string_view lhs,
                                                          std::string_view map) {
  const std::string head = "device." + std::string(map) + "[\"";
  if (!lhs.starts_with(head)) return std::nullopt;
  lhs.remove_prefix(head.size());
  const size_t close = lhs.find("\"].");
  if (close == std::string_view::npos) return std::nullopt;
  std::string domain(lhs.substr(0, close));
  std::string name(lhs.substr(close + 3));
  if (name.empty()) return std::nullopt;
  return std::pair{std::move(domain), std::move(name)};
}

// A qualified name's entry: "name" in the driver's domain, or "domain/name".
template <class Map>
auto Lookup(const Map& m, const std::string& domain, const std::string& name,
            std::string_view driver) {
  auto it = m.find(domain + "/" + name);
  if (it == m.end() && domain == driver) it = m.find(name);
  return it;
}

CelOutcome Unsupported(std::string_view e) { return {false, std::string(e)}; }

CelOutcome DriverTerm(const Comparison& c, std::string_view driver, std::string_view e) {
  auto lit = StringLiteral(c.rhs);
  if (!lit || (c.op != "==" && c.op != "!=")) return Unsupported(e);
  return {Compare(std::string(driver), c.op, *lit), ""};
}

CelOutcome AttributeTerm(const Comparison& c, std::string_view driver, const SliceDevice& d,
                         std::string_view e) {
  auto ref = MapRef(c.lhs, "attributes");
  if (!ref) return Unsupported(e);
  auto it = Lookup(d.attributes, ref->first, ref->second, driver);
  if (it == d.attributes.end()) return {false, ""};  // CEL: no such key, the device is skipped
  const DeviceAttribute& a = it->second;
  if (auto s = StringLiteral(c.rhs)) {
    const bool text = a.kind == DeviceAttribute::Kind::kString;
    return {text && Compare(a.string_value, c.op, *s), ""};
  }
  if (c.rhs == "true" || c.rhs == "false") {
    if (c.op != "==" && c.op != "!=") return Unsupported(e);
    const bool is_bool = a.kind == DeviceAttribute::Kind::kBool;
    return {is_bool && Compare(a.bool_value, c.op, c.rhs == "true"), ""};
  }
  if (auto v = IntLiteral(c.rhs)) {
    return {a.kind == DeviceAttribute::Kind::kInt && Compare(a.int_value, c.op, *v), ""};
  }
  return Unsupported(e);
}

// device.capacity["d"].name.compareTo(quantity("X")) <op> 0
CelOutcome CapacityTerm(const Comparison& c, std::string_view driver, const SliceDevice& d,
                        std::string_view e) {
  const size_t call = c.lhs.find(".compareTo(quantity(\"");
  if (call == std::string_view::npos || c.rhs != "0" || !c.lhs.ends_with("\"))")) {
    return Unsupported(e);
  }
  auto ref = MapRef(c.lhs.substr(0, call), "capacity");
  const size_t qstart = call + std::string_view(".compareTo(quantity(\"").size();
  auto q = ParseQuantity(c.lhs.substr(qstart, c.lhs.size() - 3 - qstart), 0);
  if (!ref || !q.ok()) return Unsupported(e);
  auto it = Lookup(d.capacity, ref->first, ref->second, driver);
  if (it == d.capacity.end()) return {false, ""};
  return {Compare(it->second, c.op, q.value()), ""};
}

CelOutcome Term(std::string_view e, std::string_view driver, const SliceDevice& d) {
  if (e == "true") return {true, ""};
  auto c = SplitComparison(e);
  if (!c) return Unsupported(e);
  if (c->lhs == "device.driver") return DriverTerm(*c, driver, e);
  if (c->lhs.starts_with("device.attributes[")) return AttributeTerm(*c, driver, d, e);
  if (c->lhs.starts_with("device.capacity[")) return CapacityTerm(*c, driver, d, e);
  return Unsupported(e);
}

// CEL writes a string literal in single or double quotes (NVIDIA's DeviceClasses use single
// ones); the terms above read double-quoted ones, so single-quoted literals holding neither quote
// nor backslash are rewritten as double-quoted. Others stay as they are (and are unsupported).
std::string DoubleQuoted(std::string_view e) {
  std::string out;
  out.reserve(e.size());
  for (size_t i = 0; i < e.size(); ++i) {
    const char q = e[i];
    if (q != '"' && q != '\'') {
      out += q;
      continue;
    }
    const size_t close = e.find(q, i + 1);
    if (close == std::string_view::npos) return std::string(e);
    const std::string_view body = e.substr(i + 1, close - i - 1);
    if (q == '\'' && body.find_first_of("\"\\") != std::string_view::npos) return std::string(e);
    out += '"';
    out += body;
    out += '"';
    i = close;
  }
  return out;
}

CelOutcome EvalNormalized(std::string_view expression, std::string_view driver,
                          const SliceDevice& device) {
  std::string_view e = Trim(expression);
  if (e.size() >= 2 && e.front() == '(' && e.back() == ')') e = Trim(e.substr(1, e.size() - 2));
  if (e.find("||") != std::string_view::npos) return Unsupported(expression);
  CelOutcome all{true, ""};
  for (std::string_view t : Conjuncts(e)) {
    CelOutcome o = Term(t, driver, device);
    if (!o.unsupported.empty()) return o;
    all.matches = all.matches && o.matches;
  }
  return all;
}

}  // namespace

CelOutcome EvalDeviceSelector(std::string_view expression, std::string_view driver,
                              const SliceDevice& device) {
  if (expression.find('\'') == std::string_view::npos) {
    return EvalNormalized(expression, driver, device);  // the common case: nothing to rewrite
  }
  const std::string normalized = DoubleQuoted(expression);
  CelOutcome o = EvalNormalized(normalized, driver, device);
  if (!o.unsupported.empty() && normalized != expression) o.unsupported = std::string(expression);
  return o;
}

}  // namespace kai
