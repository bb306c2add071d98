#pragma once
// Label and field selectors as a watch query carries them (`labelSelector=...&fieldSelector=...`,
// URL-escaped), evaluated on an object here instead of by the API server. kai run's shared watch
// cache (informer/watch_hub.h) lists and watches each kind once and hands each component the
// objects its own query selects, with the server's semantics for the selectors kai's components
// send. Field selectors support the fields the API server supports for the kinds kai watches
// (metadata.name, metadata.namespace, spec.nodeName, spec.schedulerName, status.phase); any other
// field is an error at parse time, so a query is never matched approximately.
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/k8s/doc.h"
#include "kai/core/util/result.h"

namespace kai::k8s {

struct LabelRequirement {
  enum class Op : uint8_t { kEquals, kNotEquals, kIn, kNotIn, kExists, kNotExists };
  std::string key;
  Op op = Op::kEquals;
  std::vector<std::string> values;
};

struct FieldRequirement {
  std::string field;  // a dotted path, e.g. spec.nodeName
  bool equals = true;
  std::string value;
};

struct Selector {
  std::vector<LabelRequirement> labels;
  std::vector<FieldRequirement> fields;
};

// %XX and '+' decoding; an invalid escape is an error.
Result<std::string> UrlUnescape(std::string_view s);
// `k=v,k!=v,k in (a,b),k notin (a),k,!k` (the API server's label selector grammar, the subset
// without set-based whitespace quirks kai never sends).
Result<std::vector<LabelRequirement>> ParseLabelSelector(std::string_view text);
// `f=v,f==v,f!=v` for the supported fields.
Result<std::vector<FieldRequirement>> ParseFieldSelector(std::string_view text);
// A whole query string; parameters other than the two selectors are an error.
Result<Selector> ParseQuerySelector(std::string_view query);

// Whether the object (a Kubernetes JSON/YAML object) is selected. A field that the object lacks
// reads as "" (as the API server's field sets do).
bool Matches(const Selector& s, const doc::Node& object);

}  // namespace kai::k8s
