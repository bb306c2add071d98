#pragma once
// One read-only document tree for both formats kai reads Kubernetes objects in: YAML manifests
// (and `kubectl get -o yaml` dumps) and the API server's JSON. The decoder (decode.h) walks this
// tree, so one piece of code knows what a Pod field means whatever the format.
//
// Scalars keep their text as written: JSON numbers and booleans become the scalar "12", "true",
// exactly as YAML writes them, so the decoder parses both alike. A Document owns every node;
// a Node is a small view (document pointer + index) and must not outlive its Document.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/util/result.h"

namespace kai::doc {

enum class Type : uint8_t { kUndefined, kNull, kScalar, kMap, kSequence };

class Document;

class Node {
 public:
  Node() = default;  // undefined: what a lookup of a missing key returns

  Type type() const;
  bool IsDefined() const { return type() != Type::kUndefined; }
  bool IsNull() const { return type() == Type::kNull; }
  bool IsScalar() const { return type() == Type::kScalar; }
  bool IsMap() const { return type() == Type::kMap; }
  bool IsSequence() const { return type() == Type::kSequence; }

  // The text of a scalar; empty for any other node.
  std::string_view Scalar() const;
  // Whether a scalar was written as a string: a JSON string, a quoted YAML scalar or one tagged
  // !!str. Plain scalars (JSON numbers and booleans, unquoted YAML) are not; nor is any other node.
  bool IsQuoted() const;
  // Entries of a map or elements of a sequence; 0 for any other node.
  size_t size() const;
  // A map's value for `key` (the first such entry); undefined when absent or not a map.
  Node operator[](std::string_view key) const;
  // A sequence's element; undefined when out of range or not a sequence.
  Node operator[](size_t index) const;

  struct Entry;
  // A map's entries in document order (empty for any other node).
  std::vector<Entry> Entries() const;

 private:
  friend class Document;
  Node(const Document* doc, uint32_t index) : doc_(doc), index_(index) {}
  const Document* doc_ = nullptr;
  uint32_t index_ = 0;
};

struct Node::Entry {
  Node first, second;  // key and value
};

class Document {
 public:
  Document();
  ~Document();
  Document(Document&&) noexcept;
  Document& operator=(Document&&) noexcept;

  // The top-level nodes: one per YAML document of a stream, one for JSON.
  std::vector<Node> Roots() const;

  // Building (used by the parsers): a node's children are added between Begin and End.
  uint32_t AddScalar(std::string_view text, bool quoted = false);
  uint32_t AddNull();
  uint32_t BeginContainer(Type type);
  void EndContainer(uint32_t index, const std::vector<uint32_t>& children);
  void AddRoot(uint32_t index);
  // Returns the builders' spare capacity (for documents kept long, such as a watch cache's).
  void ShrinkToFit();

 private:
  friend class Node;
  struct Data;
  std::unique_ptr<Data> d_;
};

// What a parser accepts: past any of these it stops with an error naming the limit, so that no
// input -- a webhook body, an API answer, a watch line, a file -- can exhaust the stack (both
// parsers are iterative or depth-guarded) or the memory. Kubernetes objects nest a few dozen
// levels at most; the API server refuses bodies above 3 MiB, but a list of 100,000 pods is ~1 GiB.
struct Limits {
  size_t max_bytes = size_t{1} << 30;  // the text itself (node offsets are 32-bit)
  uint32_t max_depth = 256;            // nested maps and sequences
  // YAML only: nodes a reader would visit through aliases ("billion laughs": a few lines whose
  // aliases of aliases expand to 10^9 nodes). Aliases share their node, so the document stays
  // small, but every walk over it (decoding, copying) would pay the expansion.
  uint64_t max_alias_nodes = 1'000'000;
};

// A multi-document YAML stream. The error names the line and column, or the limit.
Result<Document> ParseYaml(std::string_view text, const Limits& limits = {});
// One JSON value (an object, a list response, a watch event). The error names the offset, or
// the limit. The parser is iterative: depth costs heap (bounded by max_depth), never stack.
Result<Document> ParseJson(std::string_view text, const Limits& limits = {});

// `node` as compact JSON (map keys in document order), or nullopt when that is longer than
// `max_bytes`. A quoted scalar is a string; a plain one keeps its text when that is a JSON number
// or true/false (YAML's True/TRUE/False/FALSE are booleans too) and is a string otherwise; a null
// or undefined node is null. What an opaque DRA configuration's parameters are kept as.
std::optional<std::string> ToCompactJson(const Node& node, size_t max_bytes);

// A document of its own holding a deep copy of `node` as its one root, so the copy outlives the
// document `node` views (a watch cache keeps objects past the event that brought them). The map
// entry at `drop` (a path of keys, e.g. {"metadata", "managedFields"}) is left out when given.
Document CopyOf(const Node& node, std::initializer_list<std::string_view> drop = {});

}  // namespace kai::doc
