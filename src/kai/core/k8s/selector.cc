#include "kai/core/k8s/selector.h"

#include <algorithm>
#include <array>
#include <optional>

namespace kai::k8s {
namespace {

constexpr std::array<std::string_view, 5> kFields = {
    "metadata.name", "metadata.namespace", "spec.nodeName", "spec.schedulerName", "status.phase"};

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Splits on commas outside parentheses.
std::vector<std::string_view> SplitTerms(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      out.push_back(Trim(text.substr(start, i - start)));
      start = i + 1;
    } else if (text[i] == '(') {
      ++depth;
    } else if (text[i] == ')') {
      --depth;
    }
  }
  return out;
}

Result<std::vector<std::string>> ParseValueSet(std::string_view term, std::string_view rest) {
  rest = Trim(rest);
  if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') {
    return Error{"label selector term \"" + std::string(term) + "\": expected (values)"};
  }
  std::vector<std::string> values;
  for (std::string_view v : SplitTerms(rest.substr(1, rest.size() - 2))) values.emplace_back(v);
  return values;
}

// `key in (a,b)` or `key notin (a,b)`; nullopt when the term has neither word.
std::optional<Result<LabelRequirement>> ParseSetTerm(std::string_view term) {
  for (auto [word, op] : {std::pair{std::string_view(" notin "), LabelRequirement::Op::kNotIn},
                          std::pair{std::string_view(" in "), LabelRequirement::Op::kIn}}) {
    const size_t at = term.find(word);
    if (at == std::string_view::npos) continue;
    auto values = ParseValueSet(term, term.substr(at + word.size()));
    if (!values.ok()) return Result<LabelRequirement>(values.error());
    return Result<LabelRequirement>(
        LabelRequirement{std::string(Trim(term.substr(0, at))), op, std::move(*values)});
  }
  return std::nullopt;
}

Result<LabelRequirement> ParseLabelTerm(std::string_view term) {
  if (term.empty()) return Error{"label selector: empty term"};
  if (auto set = ParseSetTerm(term)) return std::move(*set);
  LabelRequirement r;
  if (const size_t at = term.find("!="); at != std::string_view::npos) {
    r = {std::string(Trim(term.substr(0, at))),
         LabelRequirement::Op::kNotEquals,
         {std::string(Trim(term.substr(at + 2)))}};
  } else if (const size_t eq = term.find('='); eq != std::string_view::npos) {
    const size_t skip = term.substr(eq).starts_with("==") ? 2 : 1;
    r = {std::string(Trim(term.substr(0, eq))),
         LabelRequirement::Op::kEquals,
         {std::string(Trim(term.substr(eq + skip)))}};
  } else if (term.front() == '!') {
    r = {std::string(Trim(term.substr(1))), LabelRequirement::Op::kNotExists, {}};
  } else {
    r = {std::string(term), LabelRequirement::Op::kExists, {}};
  }
  if (r.key.empty()) return Error{"label selector term \"" + std::string(term) + "\": no key"};
  return r;
}

Result<FieldRequirement> ParseFieldTerm(std::string_view term) {
  FieldRequirement r;
  size_t at = term.find("!=");
  size_t skip = 2;
  r.equals = at == std::string_view::npos;
  if (r.equals) {
    at = term.find('=');
    if (at == std::string_view::npos) {
      return Error{"field selector term \"" + std::string(term) + "\": expected field=value"};
    }
    skip = term.substr(at).starts_with("==") ? 2 : 1;
  }
  r.field = std::string(Trim(term.substr(0, at)));
  r.value = std::string(Trim(term.substr(at + skip)));
  if (std::find(kFields.begin(), kFields.end(), r.field) == kFields.end()) {
    return Error{"field selector: field \"" + r.field + "\" is not supported"};
  }
  return r;
}

template <class T, class F>
Result<std::vector<T>> ParseTerms(std::string_view text, F parse) {
  std::vector<T> out;
  if (Trim(text).empty()) return out;
  for (std::string_view term : SplitTerms(text)) {
    auto r = parse(term);
    if (!r.ok()) return r.error();
    out.push_back(std::move(*r));
  }
  return out;
}

doc::Node FieldNode(const doc::Node& object, std::string_view path) {
  doc::Node n = object;
  while (!path.empty()) {
    const size_t dot = path.find('.');
    n = n[path.substr(0, dot)];
    path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
  }
  return n;
}

bool LabelMatches(const LabelRequirement& r, const doc::Node& labels) {
  const doc::Node v = labels[r.key];
  const bool has = v.IsScalar();
  const auto in = [&] {
    return has && std::find(r.values.begin(), r.values.end(), v.Scalar()) != r.values.end();
  };
  switch (r.op) {
    case LabelRequirement::Op::kEquals:
    case LabelRequirement::Op::kIn:
      return in();
    case LabelRequirement::Op::kNotEquals:
    case LabelRequirement::Op::kNotIn:
      return !in();
    case LabelRequirement::Op::kExists:
      return has;
    case LabelRequirement::Op::kNotExists:
      return !has;
  }
  return false;
}

}  // namespace

Result<std::string> UrlUnescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out.push_back(' ');
    } else if (s[i] != '%') {
      out.push_back(s[i]);
    } else {
      const int hi = i + 2 < s.size() ? HexDigit(s[i + 1]) : -1;
      const int lo = hi >= 0 ? HexDigit(s[i + 2]) : -1;
      if (lo < 0) return Error{"query: invalid escape in \"" + std::string(s) + "\""};
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    }
  }
  return out;
}

Result<std::vector<LabelRequirement>> ParseLabelSelector(std::string_view text) {
  return ParseTerms<LabelRequirement>(text, ParseLabelTerm);
}

Result<std::vector<FieldRequirement>> ParseFieldSelector(std::string_view text) {
  return ParseTerms<FieldRequirement>(text, ParseFieldTerm);
}

Result<Selector> ParseQuerySelector(std::string_view query) {
  Selector s;
  size_t start = 0;
  while (start < query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view param = query.substr(start, end - start);
    start = end + 1;
    if (param.empty()) continue;
    const size_t eq = param.find('=');
    const std::string_view name = param.substr(0, eq);
    auto value = UrlUnescape(eq == std::string_view::npos ? "" : param.substr(eq + 1));
    if (!value.ok()) return value.error();
    if (name == "labelSelector") {
      auto l = ParseLabelSelector(*value);
      if (!l.ok()) return l.error();
      s.labels.insert(s.labels.end(), l->begin(), l->end());
    } else if (name == "fieldSelector") {
      auto f = ParseFieldSelector(*value);
      if (!f.ok()) return f.error();
      s.fields.insert(s.fields.end(), f->begin(), f->end());
    } else {
      return Error{"query: parameter \"" + std::string(name) + "\" is not a selector"};
    }
  }
  return s;
}

bool Matches(const Selector& s, const doc::Node& object) {
  const doc::Node labels = object["metadata"]["labels"];
  for (const auto& r : s.labels) {
    if (!LabelMatches(r, labels)) return false;
  }
  for (const auto& f : s.fields) {
    if ((FieldNode(object, f.field).Scalar() == f.value) != f.equals) return false;
  }
  return true;
}

}  // namespace kai::k8s
