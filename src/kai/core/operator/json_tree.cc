#include "kai/core/operator/json_tree.h"

#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <regex>

namespace kai::op {
namespace {

bool IsInteger(const std::string& s) {
  static const std::regex re("[-+]?[0-9]+");
  return std::regex_match(s, re);
}

bool IsFloat(const std::string& s) {
  static const std::regex re("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  return std::regex_match(s, re);
}

Json PlainScalar(const std::string& s, Alloc& a) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return Json();
  if (s == "true" || s == "True" || s == "TRUE") return Json(true);
  if (s == "false" || s == "False" || s == "FALSE") return Json(false);
  if (IsInteger(s)) {
    int64_t v = 0;
    const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
    if (std::from_chars(begin, s.data() + s.size(), v).ec == std::errc()) return Json(v);
  }
  if (IsFloat(s)) return Json(std::stod(s));
  return Str(s, a);
}

Json Convert(const YAML::Node& n, Alloc& a) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      return n.Tag() == "!" ? Str(n.Scalar(), a) : PlainScalar(n.Scalar(), a);
    case YAML::NodeType::Sequence: {
      Json out(rapidjson::kArrayType);
      for (const YAML::Node& e : n) out.PushBack(Convert(e, a), a);
      return out;
    }
    case YAML::NodeType::Map: {
      Json out(rapidjson::kObjectType);
      for (const auto& kv : n) out.AddMember(Str(kv.first.Scalar(), a), Convert(kv.second, a), a);
      return out;
    }
    default:
      return Json();
  }
}

}  // namespace

Result<bool> YamlToJson(std::string_view yaml, JsonDoc& out) {
  try {
    const YAML::Node n = YAML::Load(std::string(yaml));
    out.SetObject();
    Json v = Convert(n, out.GetAllocator());
    static_cast<Json&>(out) = v;
    return true;
  } catch (const YAML::Exception& e) {
    return Error{std::string("YAML: ") + e.what()};
  }
}

Result<JsonDoc> ParseJson(std::string_view text, std::string_view what) {
  JsonDoc d;
  d.Parse(text.data(), text.size());
  if (d.HasParseError()) {
    return Error{std::string(what) + ": invalid JSON at offset " +
                 std::to_string(d.GetErrorOffset()) + ": " +
                 rapidjson::GetParseError_En(d.GetParseError())};
  }
  return d;
}

std::string ToJson(const Json& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

namespace {
// The member's value, or null. (RapidJSON's member iterators compare ambiguously under C++20 in
// clang, so the lookup walks the members with < instead.)
Json* FindMutable(Json& object, std::string_view key) {
  for (auto it = object.MemberBegin(); it < object.MemberEnd(); ++it) {
    if (std::string_view(it->name.GetString(), it->name.GetStringLength()) == key)
      return &it->value;
  }
  return nullptr;
}
}  // namespace

Json& Member(Json& object, std::string_view key, rapidjson::Type kind, Alloc& a) {
  Json* found = FindMutable(object, key);
  if (found == nullptr) {
    object.AddMember(Str(key, a), Json(kind), a);
    return (object.MemberEnd() - 1)->value;
  }
  if (found->GetType() != kind) *found = Json(kind);
  return *found;
}

const Json* Find(const Json& object, std::string_view key) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(rapidjson::StringRef(key.data(), key.size()));
  return it == object.MemberEnd() ? nullptr : &it->value;
}

const Json* FindPath(const Json& object, std::initializer_list<std::string_view> path) {
  const Json* at = &object;
  for (std::string_view key : path) {
    at = Find(*at, key);
    if (at == nullptr) return nullptr;
  }
  return at;
}

Json Str(std::string_view s, Alloc& a) {
  return Json(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

void Set(Json& object, std::string_view key, Json& value, Alloc& a) {
  if (Json* found = FindMutable(object, key); found != nullptr) {
    *found = value;
    return;
  }
  object.AddMember(Str(key, a), value, a);
}

}  // namespace kai::op
