#include "kai/core/podgrouper/jq_path.h"

#include <cctype>
#include <charconv>

namespace kai::podgrouper {
namespace {

bool IdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IdentChar(char c) { return IdentStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

// A recursive-descent reader over one expression; every error names the expression and offset.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<std::vector<JqPath::Step>> Pipeline() {
    std::vector<JqPath::Step> steps;
    for (;;) {
      SkipSpace();
      if (auto s = Path(steps); !s) return s.error();
      SkipSpace();
      if (AtEnd()) return steps;
      if (Peek() != '|') return Fail("expected '|' or the end");
      ++pos_;
    }
  }

 private:
  Error Fail(std::string_view what) const {
    return Error{"jq expression \"" + std::string(text_) + "\" at offset " + std::to_string(pos_) +
                 ": " + std::string(what) +
                 " (kai evaluates jq paths only: .key, .\"key\", [\"key\"], [n], [], ?, |)"};
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  void SkipSpace() {
    while (!AtEnd() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  // One path: `.` then keys, indexes and iterations; `.` alone is the identity.
  Status Path(std::vector<JqPath::Step>& steps) {
    if (Peek() != '.') return Fail("a path starts with '.'");
    ++pos_;
    bool first = true;
    for (;;) {
      const char c = Peek();
      if (IdentStart(c) && first) {
        steps.push_back({JqPath::Step::Kind::kKey, Ident(), 0, false});
      } else if (c == '"' && first) {
        auto key = Quoted();
        if (!key) return key.error();
        steps.push_back({JqPath::Step::Kind::kKey, std::move(*key), 0, false});
      } else if (c == '[') {
        if (auto s = Bracket(steps); !s) return s.error();
      } else if (c == '.' && !first) {
        ++pos_;
        if (!IdentStart(Peek()) && Peek() != '"' && Peek() != '[') return Fail("expected a key");
        first = true;
        continue;
      } else if (c == '?' && !steps.empty()) {
        ++pos_;
        steps.back().optional = true;
      } else {
        return Ok();
      }
      first = false;
    }
  }

  std::string Ident() {
    const size_t start = pos_;
    while (!AtEnd() && IdentChar(text_[pos_])) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  Result<std::string> Quoted() {
    ++pos_;  // the opening quote
    std::string out;
    while (!AtEnd() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c == '\\') {
        if (AtEnd()) break;
        c = text_[pos_++];
        if (c == 'n')
          c = '\n';
        else if (c == 't')
          c = '\t';
        else if (c != '"' && c != '\\' && c != '/')
          return Fail("unsupported escape in a string");
      }
      out.push_back(c);
    }
    if (AtEnd()) return Fail("unterminated string");
    ++pos_;
    return out;
  }

  Status Bracket(std::vector<JqPath::Step>& steps) {
    ++pos_;
    SkipSpace();
    if (Peek() == ']') {
      ++pos_;
      steps.push_back({JqPath::Step::Kind::kIterate, "", 0, false});
      return Ok();
    }
    if (Peek() == '"') {
      auto key = Quoted();
      if (!key) return key.error();
      steps.push_back({JqPath::Step::Kind::kKey, std::move(*key), 0, false});
    } else {
      const size_t start = pos_;
      if (Peek() == '-') ++pos_;
      while (!AtEnd() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      long long n = 0;
      const char* b = text_.data() + start;
      const char* e = text_.data() + pos_;
      auto [p, ec] = std::from_chars(b, e, n);
      if (ec != std::errc() || p != e || b == e) return Fail("expected an index or a key");
      steps.push_back({JqPath::Step::Kind::kIndex, "", n, false});
    }
    SkipSpace();
    if (Peek() != ']') return Fail("expected ']'");
    ++pos_;
    return Ok();
  }

  std::string_view text_;
  size_t pos_ = 0;
};

const char* TypeName(doc::Node n) {
  switch (n.type()) {
    case doc::Type::kMap:
      return "object";
    case doc::Type::kSequence:
      return "array";
    case doc::Type::kScalar:
      return "scalar";
    default:
      return "null";
  }
}

bool IsNull(doc::Node n) { return !n.IsDefined() || n.IsNull(); }

// One step over one input, appending its results to `out`; the jq error when it fails.
std::optional<std::string> Apply(const JqPath::Step& step, doc::Node in,
                                 std::vector<doc::Node>& out) {
  using Kind = JqPath::Step::Kind;
  if (step.kind != Kind::kIterate && IsNull(in)) {
    out.push_back(doc::Node());
    return std::nullopt;
  }
  if (step.kind == Kind::kKey) {
    if (!in.IsMap())
      return std::string("cannot index ") + TypeName(in) + " with \"" + step.key + "\"";
    out.push_back(in[step.key]);
    return std::nullopt;
  }
  if (step.kind == Kind::kIndex) {
    if (!in.IsSequence()) return std::string("cannot index ") + TypeName(in) + " with a number";
    const long long size = static_cast<long long>(in.size());
    const long long i = step.index < 0 ? size + step.index : step.index;
    out.push_back(i >= 0 && i < size ? in[static_cast<size_t>(i)] : doc::Node());
    return std::nullopt;
  }
  if (in.IsSequence()) {
    for (size_t i = 0; i < in.size(); ++i) out.push_back(in[i]);
    return std::nullopt;
  }
  if (in.IsMap()) {
    for (const auto& entry : in.Entries()) out.push_back(entry.second);
    return std::nullopt;
  }
  return std::string("cannot iterate over ") + TypeName(in);
}

}  // namespace

Result<JqPath> JqPath::Parse(std::string_view expression) {
  Parser p(expression);
  auto steps = p.Pipeline();
  if (!steps) return steps.error();
  JqPath path;
  path.text_ = std::string(expression);
  path.steps_ = std::move(*steps);
  return path;
}

Result<std::vector<doc::Node>> JqPath::Evaluate(doc::Node input) const {
  std::vector<doc::Node> current = {input};
  for (const Step& step : steps_) {
    std::vector<doc::Node> next;
    for (doc::Node n : current) {
      std::vector<doc::Node> produced;
      if (auto error = Apply(step, n, produced)) {
        if (!step.optional) return Error{"jq expression \"" + text_ + "\": " + *error};
        continue;
      }
      next.insert(next.end(), produced.begin(), produced.end());
    }
    current = std::move(next);
  }
  return current;
}

std::optional<std::string> JqScalarText(doc::Node n) {
  if (!n.IsScalar()) return std::nullopt;
  return std::string(n.Scalar());
}

}  // namespace kai::podgrouper
