#include "kai/core/k8s/decode_fields.h"

#include <charconv>

#include "kai/core/k8s/keys.h"
#include "kai/core/resource/quantity.h"

namespace kai::decoding {
namespace {

// Parses a quantity into kai units for the named resource.
std::optional<int64_t> ResourceAmount(std::string_view name, const std::string& text,
                                      std::string_view path, ObjectContext& ctx) {
  const bool milli = name == "cpu" || name == keys::kGpuResource;
  auto r = ParseQuantity(text, milli ? 3 : 0);
  if (!r.ok()) {
    ctx.Fail(path, r.error().message);
    return std::nullopt;
  }
  const int64_t v = r.value();
  if (v < 0) {
    ctx.Fail(path, "negative quantity \"" + text + "\"");
    return std::nullopt;
  }
  if (v > kMaxAmount) {
    ctx.Fail(path, "quantity too large \"" + text + "\"");
    return std::nullopt;
  }
  return v;
}

void AddResource(Resources& res, std::string_view name, int64_t amount) {
  if (name == "cpu") {
    res.milli_cpu = amount;
  } else if (name == "memory") {
    res.memory = amount;
  } else if (name == keys::kGpuResource) {
    res.milli_gpu = amount;
  } else if (name == "pods") {
    res.pods = amount;
  } else {
    res.SetScalar(InternResource(name), amount);
  }
}

}  // namespace

// Reads an optional scalar string; reports a non-scalar.
std::optional<std::string> Str(const doc::Node& parent, std::string_view key, std::string_view path,
                               ObjectContext& ctx) {
  const doc::Node n = parent[key];
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  if (!n.IsScalar()) {
    ctx.Fail(Join(path, key), "expected a string");
    return std::nullopt;
  }
  return std::string(n.Scalar());
}

bool IsMapOrAbsent(const doc::Node& n, std::string_view path, ObjectContext& ctx) {
  if (!n.IsDefined() || n.IsNull()) return false;
  if (!n.IsMap()) {
    ctx.Fail(path, "expected a mapping");
    return false;
  }
  return true;
}

bool IsSeqOrAbsent(const doc::Node& n, std::string_view path, ObjectContext& ctx) {
  if (!n.IsDefined() || n.IsNull()) return false;
  if (!n.IsSequence()) {
    ctx.Fail(path, "expected a list");
    return false;
  }
  return true;
}

std::optional<int64_t> ParseWholeInteger(std::string_view text) {
  int64_t v = 0;
  const char* e = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), e, v);
  if (ec != std::errc() || p != e) return std::nullopt;
  return v;
}

std::optional<int64_t> Int(const doc::Node& parent, std::string_view key, std::string_view path,
                           ObjectContext& ctx) {
  auto s = Str(parent, key, path, ctx);
  if (!s) return std::nullopt;
  const std::optional<int64_t> parsed = ParseWholeInteger(*s);
  if (!parsed) {
    ctx.Fail(Join(path, key), "expected an integer, got \"" + *s + "\"");
    return std::nullopt;
  }
  const int64_t v = *parsed;
  if (v < -(int64_t{1} << 31) || v >= (int64_t{1} << 31)) {
    ctx.Fail(Join(path, key), "integer out of range: " + *s);
    return std::nullopt;
  }
  return v;
}

std::optional<bool> Bool(const doc::Node& parent, std::string_view key, std::string_view path,
                         ObjectContext& ctx) {
  auto s = Str(parent, key, path, ctx);
  if (!s) return std::nullopt;
  if (*s == "true" || *s == "True") return true;
  if (*s == "false" || *s == "False") return false;
  ctx.Fail(Join(path, key), "expected true or false, got \"" + *s + "\"");
  return std::nullopt;
}

std::optional<UnixSeconds> Time(const doc::Node& parent, std::string_view key,
                                std::string_view path, ObjectContext& ctx) {
  auto s = Str(parent, key, path, ctx);
  if (!s) return std::nullopt;
  auto t = ParseRfc3339(*s);
  if (!t) ctx.Fail(Join(path, key), "expected an RFC 3339 time, got \"" + *s + "\"");
  return t;
}

std::optional<int64_t> Duration(const doc::Node& parent, std::string_view key,
                                std::string_view path, ObjectContext& ctx) {
  auto s = Str(parent, key, path, ctx);
  if (!s) return std::nullopt;
  auto d = ParseGoDuration(*s);
  if (!d) ctx.Fail(Join(path, key), "expected a duration such as 60s or 5m, got \"" + *s + "\"");
  return d;
}

Labels StringMap(const doc::Node& n, std::string_view path, ObjectContext& ctx) {
  Labels out;
  if (!IsMapOrAbsent(n, path, ctx)) return out;
  for (const auto& [k, v] : n.Entries()) {
    const std::string key(k.Scalar());
    if (!v.IsScalar() && !v.IsNull()) {
      ctx.Fail(Join(path, key), "expected a string value");
      continue;
    }
    out[key] = std::string(v.Scalar());
  }
  return out;
}

std::vector<std::string> StringList(const doc::Node& n, std::string_view path, ObjectContext& ctx) {
  std::vector<std::string> out;
  if (!IsSeqOrAbsent(n, path, ctx)) return out;
  for (size_t i = 0; i < n.size(); ++i) {
    if (!n[i].IsScalar()) {
      ctx.Fail(Index(path, i), "expected a string");
      continue;
    }
    out.push_back(std::string(n[i].Scalar()));
  }
  return out;
}

Resources ResourceList(const doc::Node& n, std::string_view path, ObjectContext& ctx) {
  Resources res;
  if (!IsMapOrAbsent(n, path, ctx)) return res;
  for (const auto& [k, value] : n.Entries()) {
    const std::string name(k.Scalar());
    const std::string field = Join(path, name);
    if (!value.IsScalar()) {
      ctx.Fail(field, "expected a quantity");
      continue;
    }
    if (auto v = ResourceAmount(name, std::string(value.Scalar()), field, ctx)) {
      AddResource(res, name, *v);
    }
  }
  return res;
}

ObjectMeta DecodeMeta(const doc::Node& doc, const std::string& kind, bool namespaced,
                      const std::string& source, ObjectContext& ctx) {
  ObjectMeta m;
  m.kind = kind;
  m.source = source;
  const doc::Node md = doc["metadata"];
  if (!IsMapOrAbsent(md, "metadata", ctx)) {
    ctx.Fail("metadata.name", "missing");
    return m;
  }
  m.name = Str(md, "name", "metadata", ctx).value_or("");
  if (namespaced) m.ns = Str(md, "namespace", "metadata", ctx).value_or("default");
  ctx.SetRef(m.Ref());
  if (m.name.empty()) ctx.Fail("metadata.name", "missing");
  m.uid = Str(md, "uid", "metadata", ctx).value_or("");
  if (m.uid.empty()) m.uid = namespaced ? m.ns + "/" + m.name : m.name;
  m.labels = StringMap(md["labels"], "metadata.labels", ctx);
  m.annotations = StringMap(md["annotations"], "metadata.annotations", ctx);
  m.creation = Time(md, "creationTimestamp", "metadata", ctx);
  m.deletion = Time(md, "deletionTimestamp", "metadata", ctx);
  return m;
}

bool AddQuantity(Resources& res, std::string_view name, const std::string& text,
                 std::string_view path, ObjectContext& ctx) {
  const std::optional<int64_t> v = ResourceAmount(name, text, path, ctx);
  if (v) AddResource(res, name, *v);
  return v.has_value();
}

}  // namespace kai::decoding
