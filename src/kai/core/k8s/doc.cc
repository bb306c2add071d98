#include "kai/core/k8s/doc.h"

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <cctype>
#include <map>
#include <optional>
#include <span>
#include <sstream>

namespace kai::doc {

// Nodes live in one vector; a container's children are contiguous in `children` (a map stores
// key, value, key, value, ...); scalar text lives in one character arena.
struct NodeData {
  Type type = Type::kUndefined;
  bool quoted = false;  // scalar: written as a string
  uint32_t begin = 0;   // scalar: offset into chars; container: offset into children
  uint32_t count = 0;   // scalar: length; map: entries; sequence: elements
};

struct Document::Data {
  std::vector<NodeData> nodes;
  std::vector<uint32_t> children;
  std::string chars;
  std::vector<uint32_t> roots;
};

Document::Document() : d_(std::make_unique<Data>()) {}
Document::~Document() = default;
Document::Document(Document&&) noexcept = default;
Document& Document::operator=(Document&&) noexcept = default;

std::vector<Node> Document::Roots() const {
  std::vector<Node> out;
  out.reserve(d_->roots.size());
  for (uint32_t r : d_->roots) out.push_back(Node(this, r));
  return out;
}

uint32_t Document::AddScalar(std::string_view text, bool quoted) {
  NodeData n{Type::kScalar, quoted, static_cast<uint32_t>(d_->chars.size()),
             static_cast<uint32_t>(text.size())};
  d_->chars.append(text);
  d_->nodes.push_back(n);
  return static_cast<uint32_t>(d_->nodes.size() - 1);
}

uint32_t Document::AddNull() {
  d_->nodes.push_back(NodeData{Type::kNull, false, 0, 0});
  return static_cast<uint32_t>(d_->nodes.size() - 1);
}

uint32_t Document::BeginContainer(Type type) {
  d_->nodes.push_back(NodeData{type, false, 0, 0});
  return static_cast<uint32_t>(d_->nodes.size() - 1);
}

void Document::EndContainer(uint32_t index, const std::vector<uint32_t>& children) {
  NodeData& n = d_->nodes[index];
  n.begin = static_cast<uint32_t>(d_->children.size());
  n.count = static_cast<uint32_t>(n.type == Type::kMap ? children.size() / 2 : children.size());
  d_->children.insert(d_->children.end(), children.begin(), children.end());
}

void Document::AddRoot(uint32_t index) { d_->roots.push_back(index); }

void Document::ShrinkToFit() {
  d_->nodes.shrink_to_fit();
  d_->children.shrink_to_fit();
  d_->chars.shrink_to_fit();
  d_->roots.shrink_to_fit();
}

Type Node::type() const { return doc_ ? doc_->d_->nodes[index_].type : Type::kUndefined; }

std::string_view Node::Scalar() const {
  if (!IsScalar()) return {};
  const NodeData& n = doc_->d_->nodes[index_];
  return std::string_view(doc_->d_->chars).substr(n.begin, n.count);
}

bool Node::IsQuoted() const { return IsScalar() && doc_->d_->nodes[index_].quoted; }

size_t Node::size() const {
  const Type t = type();
  return t == Type::kMap || t == Type::kSequence ? doc_->d_->nodes[index_].count : 0;
}

Node Node::operator[](std::string_view key) const {
  if (!IsMap()) return {};
  const NodeData& n = doc_->d_->nodes[index_];
  const uint32_t* kv = doc_->d_->children.data() + n.begin;
  for (uint32_t i = 0; i < n.count; ++i) {
    const Node k(doc_, kv[2 * i]);
    if (k.IsScalar() && k.Scalar() == key) return Node(doc_, kv[2 * i + 1]);
  }
  return {};
}

Node Node::operator[](size_t index) const {
  if (!IsSequence() || index >= size()) return {};
  return Node(doc_, doc_->d_->children[doc_->d_->nodes[index_].begin + index]);
}

std::vector<Node::Entry> Node::Entries() const {
  std::vector<Entry> out;
  if (!IsMap()) return out;
  const NodeData& n = doc_->d_->nodes[index_];
  out.reserve(n.count);
  const uint32_t* kv = doc_->d_->children.data() + n.begin;
  for (uint32_t i = 0; i < n.count; ++i) {
    out.push_back(Entry{Node(doc_, kv[2 * i]), Node(doc_, kv[2 * i + 1])});
  }
  return out;
}

namespace {

std::string DepthError(uint32_t max_depth) {
  return "nested deeper than the limit of " + std::to_string(max_depth) + " levels";
}

// Shared by both parsers: a stack of open containers, each collecting its children's indices.
// Open refuses to go past the depth limit (the parser then stops with DepthError).
class TreeBuilder {
 public:
  TreeBuilder(Document& doc, uint32_t max_depth) : doc_(doc), max_depth_(max_depth) {}
  void Add(uint32_t node) {
    if (open_.empty()) {
      doc_.AddRoot(node);
    } else {
      open_.back().children.push_back(node);
    }
  }
  uint32_t Scalar(std::string_view text, bool quoted = false) {
    const uint32_t n = doc_.AddScalar(text, quoted);
    Add(n);
    return n;
  }
  uint32_t Null() {
    const uint32_t n = doc_.AddNull();
    Add(n);
    return n;
  }
  std::optional<uint32_t> Open(Type type) {
    if (open_.size() >= max_depth_) return std::nullopt;
    const uint32_t n = doc_.BeginContainer(type);
    open_.push_back(Open_{n, {}});
    return n;
  }
  void Close() {
    Open_ top = std::move(open_.back());
    open_.pop_back();
    doc_.EndContainer(top.node, top.children);
    Add(top.node);
  }
  bool Balanced() const { return open_.empty(); }

 private:
  struct Open_ {
    uint32_t node;
    std::vector<uint32_t> children;
  };
  Document& doc_;
  uint32_t max_depth_;
  std::vector<Open_> open_;
};

// Thrown from inside the YAML event handler (its callbacks return nothing) when a limit is passed.
struct YamlLimit {
  std::string message;
  YAML::Mark mark;
};

// Besides building the tree, counts what aliases would expand to: each node's weight is itself
// plus its children's (an alias weighs what its anchored node does), and the weights of all
// aliases together may not pass Limits::max_alias_nodes.
class YamlHandler : public YAML::EventHandler {
 public:
  YamlHandler(Document& doc, const Limits& limits)
      : tree_(doc, limits.max_depth), limits_(limits) {}
  int document_start = -1;

  void OnDocumentStart(const YAML::Mark& mark) override { document_start = mark.pos; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override {
    Remember(anchor, tree_.Null(), 1);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {
      tree_.Null();
      Weigh(1);
      return;
    }
    const uint64_t weight = it->second.weight;
    alias_nodes_ += weight;
    if (alias_nodes_ > limits_.max_alias_nodes) {
      throw YamlLimit{"aliases expand to more than the limit of " +
                          std::to_string(limits_.max_alias_nodes) + " nodes",
                      mark};
    }
    tree_.Add(it->second.node);  // the tree is read-only, so an alias shares the anchored node
    Weigh(weight);
  }
  // yaml-cpp tags a quoted or block scalar "!" and a plain one "?".
  void OnScalar(const YAML::Mark&, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    const bool quoted = tag == "!" || tag == "tag:yaml.org,2002:str";
    Remember(anchor, tree_.Scalar(value, quoted), 1);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    OpenContainer(Type::kSequence, anchor, mark);
  }
  void OnSequenceEnd() override { CloseContainer(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    OpenContainer(Type::kMap, anchor, mark);
  }
  void OnMapEnd() override { CloseContainer(); }

 private:
  struct Anchored {
    uint32_t node;
    uint64_t weight;
  };
  struct Pending {
    YAML::anchor_t anchor;
    uint32_t node;
    uint64_t weight;  // 1 + the children's weights so far
  };
  void Weigh(uint64_t weight) {
    if (!pending_.empty()) pending_.back().weight += weight;
  }
  void Remember(YAML::anchor_t anchor, uint32_t node, uint64_t weight) {
    if (anchor != YAML::NullAnchor) anchors_[anchor] = Anchored{node, weight};
    Weigh(weight);
  }
  void OpenContainer(Type type, YAML::anchor_t anchor, const YAML::Mark& mark) {
    const std::optional<uint32_t> node = tree_.Open(type);
    if (!node) throw YamlLimit{DepthError(limits_.max_depth), mark};
    pending_.push_back(Pending{anchor, *node, 1});
  }
  void CloseContainer() {
    const Pending top = pending_.back();
    pending_.pop_back();
    tree_.Close();
    Remember(top.anchor, top.node, top.weight);
  }
  TreeBuilder tree_;
  const Limits& limits_;
  uint64_t alias_nodes_ = 0;
  std::map<YAML::anchor_t, Anchored> anchors_;
  std::vector<Pending> pending_;
};

// RapidJSON SAX handler; numbers arrive as their text (kParseNumbersAsStringsFlag).
class JsonHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, JsonHandler> {
 public:
  JsonHandler(Document& doc, uint32_t max_depth) : tree_(doc, max_depth) {}
  bool too_deep = false;  // the parser stopped at the depth limit
  bool Null() {
    tree_.Null();
    return true;
  }
  bool Bool(bool b) {
    tree_.Scalar(b ? "true" : "false");
    return true;
  }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    tree_.Scalar(std::string_view(s, n));
    return true;
  }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    tree_.Scalar(std::string_view(s, n), true);
    return true;
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    tree_.Scalar(std::string_view(s, n), true);
    return true;
  }
  bool StartObject() { return Open(Type::kMap); }
  bool EndObject(rapidjson::SizeType) {
    tree_.Close();
    return true;
  }
  bool StartArray() { return Open(Type::kSequence); }
  bool EndArray(rapidjson::SizeType) {
    tree_.Close();
    return true;
  }
  // Integers are reported as RawNumber with kParseNumbersAsStringsFlag; these stay for safety.
  bool Default() { return false; }

 private:
  bool Open(Type type) {
    too_deep = !tree_.Open(type).has_value();
    return !too_deep;
  }
  TreeBuilder tree_;
};

std::optional<std::string> TooLarge(std::string_view text, const Limits& limits) {
  if (text.size() <= limits.max_bytes) return std::nullopt;
  return "a document of " + std::to_string(text.size()) + " bytes is larger than the limit of " +
         std::to_string(limits.max_bytes) + " bytes";
}

}  // namespace

Result<Document> ParseYaml(std::string_view text, const Limits& limits) {
  if (auto err = TooLarge(text, limits)) return Error{"invalid YAML: " + *err};
  Document doc;
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    YamlHandler handler(doc, limits);
    // yaml-cpp 0.7 can loop forever on some malformed streams (a document that is just ","),
    // returning empty documents without consuming input: stop when the stream stops moving.
    int last = -2;
    int stalls = 0;
    while (parser.HandleNextDocument(handler)) {
      if (handler.document_start == last) {
        if (++stalls > 2) return Error{"invalid YAML: the parser made no progress"};
      } else {
        stalls = 0;
      }
      last = handler.document_start;
    }
  } catch (const YAML::Exception& e) {
    return Error{"invalid YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
                 std::to_string(e.mark.column + 1) + ": " + e.msg};
  } catch (const YamlLimit& e) {
    return Error{"invalid YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
                 std::to_string(e.mark.column + 1) + ": " + e.message};
  }
  return doc;
}

Result<Document> ParseJson(std::string_view text, const Limits& limits) {
  if (auto err = TooLarge(text, limits)) return Error{"invalid JSON: " + *err};
  Document doc;
  JsonHandler handler(doc, limits.max_depth);
  rapidjson::Reader reader;
  rapidjson::MemoryStream in(text.data(), text.size());
  constexpr unsigned kFlags =
      rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseIterativeFlag;
  const rapidjson::ParseResult ok = reader.Parse<kFlags>(in, handler);
  if (!ok) {
    const std::string what =
        handler.too_deep ? DepthError(limits.max_depth) : rapidjson::GetParseError_En(ok.Code());
    return Error{"invalid JSON at offset " + std::to_string(ok.Offset()) + ": " + what};
  }
  return doc;
}

namespace {

// `drop`: the rest of the path to leave out below `n` (empty: keep everything).
uint32_t CopyInto(Document& out, const Node& n, std::span<const std::string_view> drop) {
  switch (n.type()) {
    case Type::kScalar:
      return out.AddScalar(n.Scalar(), n.IsQuoted());
    case Type::kMap: {
      const uint32_t c = out.BeginContainer(Type::kMap);
      std::vector<uint32_t> children;
      for (const auto& e : n.Entries()) {
        const bool on_path = !drop.empty() && e.first.Scalar() == drop.front();
        if (on_path && drop.size() == 1) continue;
        children.push_back(CopyInto(out, e.first, {}));
        children.push_back(CopyInto(out, e.second, on_path ? drop.subspan(1) : decltype(drop){}));
      }
      out.EndContainer(c, children);
      return c;
    }
    case Type::kSequence: {
      const uint32_t c = out.BeginContainer(Type::kSequence);
      std::vector<uint32_t> children;
      for (size_t i = 0; i < n.size(); ++i) children.push_back(CopyInto(out, n[i], {}));
      out.EndContainer(c, children);
      return c;
    }
    case Type::kNull:
    case Type::kUndefined:
      break;
  }
  return out.AddNull();
}

}  // namespace

Document CopyOf(const Node& node, std::initializer_list<std::string_view> drop) {
  Document out;
  out.AddRoot(CopyInto(out, node, std::span<const std::string_view>(drop.begin(), drop.size())));
  out.ShrinkToFit();
  return out;
}

namespace {

// A JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
bool IsJsonNumber(std::string_view t) {
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
    return i > start;
  };
  if (i < t.size() && t[i] == '-') ++i;
  if (i < t.size() && t[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < t.size() && t[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == t.size();
}

using CompactWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void PlainScalar(CompactWriter& w, std::string_view t) {
  if (t == "true" || t == "True" || t == "TRUE") {
    w.Bool(true);
  } else if (t == "false" || t == "False" || t == "FALSE") {
    w.Bool(false);
  } else if (IsJsonNumber(t)) {
    w.RawValue(t.data(), t.size(), rapidjson::kNumberType);
  } else {
    w.String(t.data(), static_cast<rapidjson::SizeType>(t.size()));
  }
}

// False once the text passes `max_bytes` (the walk stops there: aliases cannot make it long).
bool WriteCompact(CompactWriter& w, const rapidjson::StringBuffer& buf, const Node& n,
                  size_t max_bytes) {
  if (buf.GetSize() > max_bytes) return false;
  switch (n.type()) {
    case Type::kScalar: {
      const std::string_view t = n.Scalar();
      if (n.IsQuoted()) {
        w.String(t.data(), static_cast<rapidjson::SizeType>(t.size()));
      } else {
        PlainScalar(w, t);
      }
      break;
    }
    case Type::kMap:
      w.StartObject();
      for (const auto& e : n.Entries()) {
        const std::string_view k = e.first.Scalar();
        w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
        if (!WriteCompact(w, buf, e.second, max_bytes)) return false;
      }
      w.EndObject();
      break;
    case Type::kSequence:
      w.StartArray();
      for (size_t i = 0; i < n.size(); ++i) {
        if (!WriteCompact(w, buf, n[i], max_bytes)) return false;
      }
      w.EndArray();
      break;
    case Type::kNull:
    case Type::kUndefined:
      w.Null();
      break;
  }
  return buf.GetSize() <= max_bytes;
}

}  // namespace

std::optional<std::string> ToCompactJson(const Node& node, size_t max_bytes) {
  rapidjson::StringBuffer buf;
  CompactWriter w(buf);
  if (!WriteCompact(w, buf, node, max_bytes)) return std::nullopt;
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace kai::doc
