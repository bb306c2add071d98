#pragma once
// The operator's object trees: RapidJSON documents, which keep what the API server's JSON says a
// value is (a string "true" stays a string), built from deploy/'s YAML and edited in place.
// Internal to core/operator/.
#include <rapidjson/document.h>

#include <string>
#include <string_view>

#include "kai/core/util/result.h"

namespace kai::op {

using Json = rapidjson::Value;
using JsonDoc = rapidjson::Document;
using Alloc = rapidjson::Document::AllocatorType;

// One YAML document as JSON: quoted scalars are strings; plain ones null, booleans, integers or
// floats when they read as such (YAML 1.2's core schema), else strings.
Result<bool> YamlToJson(std::string_view yaml, JsonDoc& out);
Result<JsonDoc> ParseJson(std::string_view text, std::string_view what);
std::string ToJson(const Json& v);

// The member `key` of an object, made (as `kind`) when absent or of another type.
Json& Member(Json& object, std::string_view key, rapidjson::Type kind, Alloc& a);
const Json* Find(const Json& object, std::string_view key);
const Json* FindPath(const Json& object, std::initializer_list<std::string_view> path);
Json Str(std::string_view s, Alloc& a);
// Sets `key` to `value`, which is moved from (RapidJSON values move on assignment).
void Set(Json& object, std::string_view key, Json& value, Alloc& a);
inline void Set(Json& object, std::string_view key, Json&& value, Alloc& a) {
  Set(object, key, value, a);
}

}  // namespace kai::op
