#include "kai/core/podgrouper/object.h"

#include <charconv>

namespace kai::podgrouper {
namespace {

std::string JoinPath(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  return std::string(a) + "." + std::string(b);
}

std::string_view TypeName(const doc::Node& n) {
  switch (n.type()) {
    case doc::Type::kMap:
      return "an object";
    case doc::Type::kSequence:
      return "a list";
    case doc::Type::kScalar:
      return "a scalar";
    default:
      return "nothing";
  }
}

bool Absent(const doc::Node& n) { return !n.IsDefined() || n.IsNull(); }

// A string map (labels, annotations): scalar values only.
Result<Labels> StringMap(const Object& o, const doc::Node& n, std::string_view path) {
  Labels out;
  if (Absent(n)) return out;
  if (!n.IsMap()) return FieldError(o, path, "expected an object, got " + std::string(TypeName(n)));
  for (const auto& [k, v] : n.Entries()) {
    if (v.IsNull()) {
      out.insert_or_assign(InternedString(k.Scalar()), "");
      continue;
    }
    if (!v.IsScalar()) {
      return FieldError(o, JoinPath(path, k.Scalar()),
                        "expected a string, got " + std::string(TypeName(v)));
    }
    out.insert_or_assign(InternedString(k.Scalar()), std::string(v.Scalar()));
  }
  return out;
}

Result<std::string> MetaString(const Object& o, const doc::Node& parent, std::string_view key,
                               std::string_view path) {
  const doc::Node v = parent[key];
  if (Absent(v)) return std::string();
  if (!v.IsScalar()) {
    return FieldError(o, JoinPath(path, key), "expected a string, got " + std::string(TypeName(v)));
  }
  return std::string(v.Scalar());
}

Result<std::vector<OwnerReference>> OwnerRefs(const Object& o, const doc::Node& n) {
  std::vector<OwnerReference> out;
  const std::string path = "metadata.ownerReferences";
  if (Absent(n)) return out;
  if (!n.IsSequence())
    return FieldError(o, path, "expected a list, got " + std::string(TypeName(n)));
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    if (!n[i].IsMap()) {
      return FieldError(o, p, "expected an object, got " + std::string(TypeName(n[i])));
    }
    OwnerReference ref;
    for (auto [field, key] : {std::pair{&ref.api_version, "apiVersion"},
                              {&ref.kind, "kind"},
                              {&ref.name, "name"},
                              {&ref.uid, "uid"}}) {
      auto v = MetaString(o, n[i], key, p);
      if (!v) return v.error();
      *field = std::move(*v);
    }
    if (ref.kind.empty() || ref.name.empty()) return FieldError(o, p, "needs a kind and a name");
    out.push_back(std::move(ref));
  }
  return out;
}

}  // namespace

std::string_view Object::Group() const {
  const size_t slash = api_version.find('/');
  return slash == std::string::npos ? std::string_view()
                                    : std::string_view(api_version).substr(0, slash);
}

std::string_view Object::Version() const {
  const size_t slash = api_version.find('/');
  return slash == std::string::npos ? std::string_view(api_version)
                                    : std::string_view(api_version).substr(slash + 1);
}

std::string Object::GroupKind() const {
  const std::string_view group = Group();
  return group.empty() ? kind : kind + "." + std::string(group);
}

std::string Object::Ref() const {
  return (kind.empty() ? std::string("object") : kind) + " " +
         (ns.empty() ? name : ns + "/" + name);
}

const std::string* Object::Label(std::string_view key) const {
  auto it = labels.find(key);
  return it == labels.end() ? nullptr : &it->second;
}

const std::string* Object::Annotation(std::string_view key) const {
  auto it = annotations.find(key);
  return it == annotations.end() ? nullptr : &it->second;
}

Error FieldError(const Object& o, std::string_view path, std::string_view message) {
  std::string text = o.Ref() + ": ";
  if (!path.empty()) text += std::string(path) + ": ";
  text += message;
  return Error{std::move(text)};
}

Result<Object> DecodeObject(doc::Node node, std::shared_ptr<const doc::Document> document,
                            std::string_view default_api_version, std::string_view default_kind) {
  Object o;
  o.node = node;
  o.document = std::move(document);
  if (!node.IsMap())
    return FieldError(o, "", "expected an object, got " + std::string(TypeName(node)));
  const doc::Node meta = node["metadata"];
  // Name the object as early as possible: every later error carries it.
  if (meta.IsMap()) {
    o.name = std::string(meta["name"].Scalar());
    o.ns = std::string(meta["namespace"].Scalar());
  }
  for (auto [field, key, fallback] : {std::tuple{&o.api_version, "apiVersion", default_api_version},
                                      {&o.kind, "kind", default_kind}}) {
    auto v = MetaString(o, node, key, "");
    if (!v) return v.error();
    *field = v->empty() ? std::string(fallback) : std::move(*v);
  }
  if (!meta.IsMap()) {
    return FieldError(
        o, "metadata",
        Absent(meta) ? "missing" : "expected an object, got " + std::string(TypeName(meta)));
  }
  for (auto [field, key] : {std::pair{&o.name, "name"}, {&o.ns, "namespace"}, {&o.uid, "uid"}}) {
    auto v = MetaString(o, meta, key, "metadata");
    if (!v) return v.error();
    *field = std::move(*v);
  }
  if (o.name.empty()) return FieldError(o, "metadata.name", "missing");
  auto labels = StringMap(o, meta["labels"], "metadata.labels");
  if (!labels) return labels.error();
  o.labels = std::move(*labels);
  auto annotations = StringMap(o, meta["annotations"], "metadata.annotations");
  if (!annotations) return annotations.error();
  o.annotations = std::move(*annotations);
  auto refs = OwnerRefs(o, meta["ownerReferences"]);
  if (!refs) return refs.error();
  o.owner_refs = std::move(*refs);
  o.deleting = !Absent(meta["deletionTimestamp"]);
  return o;
}

Result<std::vector<Object>> DecodeObjects(std::shared_ptr<const doc::Document> document) {
  std::vector<Object> out;
  for (const doc::Node& root : document->Roots()) {
    if (Absent(root)) continue;  // an empty document of the stream
    if (root["kind"].Scalar() == "List" || root["items"].IsSequence()) {
      const doc::Node items = root["items"];
      for (size_t i = 0; i < items.size(); ++i) {
        auto o = DecodeObject(items[i], document);
        if (!o) return o.error();
        out.push_back(std::move(*o));
      }
      continue;
    }
    auto o = DecodeObject(root, document);
    if (!o) return o.error();
    out.push_back(std::move(*o));
  }
  return out;
}

Result<std::vector<Object>> ParseObjects(std::string_view yaml, std::string_view source) {
  auto parsed = doc::ParseYaml(yaml);
  if (!parsed) return Error{std::string(source) + ": " + parsed.error().message};
  auto document = std::make_shared<const doc::Document>(std::move(*parsed));
  auto objects = DecodeObjects(document);
  if (!objects) return Error{std::string(source) + ": " + objects.error().message};
  return objects;
}

Result<std::optional<Field>> NestedField(const Object& o, const Field& from, Keys keys) {
  Field at = from;
  for (std::string_view key : keys) {
    if (Absent(at.node)) return std::optional<Field>();
    if (!at.node.IsMap()) {
      return FieldError(o, at.path.empty() ? "(root)" : at.path,
                        "expected an object, got " + std::string(TypeName(at.node)));
    }
    at = Field{at.node[key], JoinPath(at.path, key)};
  }
  if (Absent(at.node)) return std::optional<Field>();
  return std::optional<Field>(std::move(at));
}

namespace {

std::string FullPath(const Field& from, Keys keys) {
  std::string path = from.path;
  for (std::string_view k : keys) path = JoinPath(path, k);
  return path;
}

}  // namespace

Result<std::optional<std::string>> NestedString(const Object& o, const Field& from, Keys keys) {
  auto f = NestedField(o, from, keys);
  if (!f) return f.error();
  if (!f->has_value()) return std::optional<std::string>();
  const Field& v = **f;
  if (!v.node.IsScalar()) {
    return FieldError(o, v.path, "expected a string, got " + std::string(TypeName(v.node)));
  }
  return std::optional<std::string>(std::string(v.node.Scalar()));
}

Result<std::optional<int64_t>> NestedInt(const Object& o, const Field& from, Keys keys) {
  auto f = NestedField(o, from, keys);
  if (!f) return f.error();
  if (!f->has_value()) return std::optional<int64_t>();
  const Field& v = **f;
  if (!v.node.IsScalar()) {
    return FieldError(o, v.path, "expected an integer, got " + std::string(TypeName(v.node)));
  }
  const std::string_view text = v.node.Scalar();
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || p != end || text.empty()) {
    return FieldError(o, v.path, "expected an integer, got \"" + std::string(text) + "\"");
  }
  if (value < -(int64_t{1} << 31) || value >= (int64_t{1} << 31)) {
    return FieldError(o, v.path, "integer out of range: " + std::string(text));
  }
  return std::optional<int64_t>(value);
}

Result<std::optional<bool>> NestedBool(const Object& o, const Field& from, Keys keys) {
  auto f = NestedField(o, from, keys);
  if (!f) return f.error();
  if (!f->has_value()) return std::optional<bool>();
  const Field& v = **f;
  const std::string_view text = v.node.IsScalar() ? v.node.Scalar() : std::string_view();
  if (text == "true") return std::optional<bool>(true);
  if (text == "false") return std::optional<bool>(false);
  return FieldError(o, v.path,
                    v.node.IsScalar()
                        ? "expected true or false, got \"" + std::string(text) + "\""
                        : "expected true or false, got " + std::string(TypeName(v.node)));
}

Result<std::optional<Field>> NestedMap(const Object& o, const Field& from, Keys keys) {
  auto f = NestedField(o, from, keys);
  if (!f) return f.error();
  if (f->has_value() && !(*f)->node.IsMap()) {
    return FieldError(o, (*f)->path,
                      "expected an object, got " + std::string(TypeName((*f)->node)));
  }
  return f;
}

Result<std::optional<std::vector<Field>>> NestedSequence(const Object& o, const Field& from,
                                                         Keys keys) {
  auto f = NestedField(o, from, keys);
  if (!f) return f.error();
  if (!f->has_value()) return std::optional<std::vector<Field>>();
  const Field& v = **f;
  if (!v.node.IsSequence()) {
    return FieldError(o, v.path.empty() ? FullPath(from, keys) : v.path,
                      "expected a list, got " + std::string(TypeName(v.node)));
  }
  std::vector<Field> items;
  items.reserve(v.node.size());
  for (size_t i = 0; i < v.node.size(); ++i) {
    items.push_back(Field{v.node[i], v.path + "[" + std::to_string(i) + "]"});
  }
  return std::optional<std::vector<Field>>(std::move(items));
}

std::string ScalarAt(const Object& o, Keys keys) {
  doc::Node n = o.node;
  for (std::string_view k : keys) n = n[k];
  return n.IsScalar() ? std::string(n.Scalar()) : std::string();
}

}  // namespace kai::podgrouper
