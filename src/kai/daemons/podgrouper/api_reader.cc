#include "kai/daemons/podgrouper/api_reader.h"

#include <algorithm>

namespace kai::podgrouperd {
namespace {

using podgrouper::Fetched;
using podgrouper::FetchStatus;
using podgrouper::Object;

std::string Prefix(std::string_view api_version) {
  return api_version.find('/') == std::string_view::npos ? "/api/" + std::string(api_version)
                                                         : "/apis/" + std::string(api_version);
}

std::string LabelSelector(const Labels& selector) {
  std::string out;
  for (const auto& [k, v] : selector) out += (out.empty() ? "" : ",") + k + "=" + v;
  return out;
}

Result<std::shared_ptr<const doc::Document>> ParseBody(const std::string& body,
                                                       const std::string& what) {
  auto parsed = doc::ParseJson(body);
  if (!parsed.ok()) return Error{what + ": " + parsed.error().message};
  if (parsed->Roots().empty()) return Error{what + ": empty answer"};
  return std::shared_ptr<const doc::Document>(
      std::make_shared<doc::Document>(std::move(parsed.value())));
}

}  // namespace

Result<podgrouper::Object> ParseObject(const std::string& body, const std::string& what,
                                       std::string_view api_version, std::string_view kind) {
  auto doc = ParseBody(body, what);
  if (!doc.ok()) return doc.error();
  return podgrouper::DecodeObject((*doc)->Roots()[0], *doc, api_version, kind);
}

Result<const ApiReader::GroupVersion*> ApiReader::Discover(std::string_view api_version) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (auto it = discovered_.find(api_version); it != discovered_.end()) {
    if (it->second.served || now - it->second.read_at < std::chrono::minutes(1)) {
      return &it->second;
    }
  }
  const std::string path = Prefix(api_version);
  k8s::HttpResponse r = client_.Get(path);
  GroupVersion gv;
  gv.read_at = now;
  if (r.ok()) {
    auto doc = ParseBody(r.body, "GET " + path);
    if (!doc.ok()) return doc.error();
    const doc::Node resources = (*doc)->Roots()[0]["resources"];
    for (size_t i = 0; i < resources.size(); ++i) {
      const std::string_view name = resources[i]["name"].Scalar();
      if (name.find('/') != std::string_view::npos) continue;  // a subresource
      gv.kinds[std::string(resources[i]["kind"].Scalar())] = {
          std::string(name), resources[i]["namespaced"].Scalar() == "true"};
    }
    gv.served = true;
  } else if (r.status != 404) {
    return Error{k8s::Describe({"GET", path}, r)};
  }
  auto& slot = discovered_[std::string(api_version)];
  slot = std::move(gv);
  return &slot;
}

Result<std::string> ApiReader::PathOf(std::string_view api_version, std::string_view kind,
                                      std::string_view ns, std::string_view name) const {
  auto gv = Discover(api_version);
  if (!gv.ok()) return gv.error();
  auto it = (*gv)->kinds.find(kind);
  if (it == (*gv)->kinds.end()) {
    return Error{"no API serves " + std::string(kind) + " " + std::string(api_version) +
                 " (is its CRD installed?)"};
  }
  std::string path = Prefix(api_version);
  if (it->second.namespaced && !ns.empty()) path += "/namespaces/" + std::string(ns);
  path += "/" + it->second.plural;
  if (!name.empty()) path += "/" + std::string(name);
  return path;
}

Fetched ApiReader::Get(const podgrouper::ObjectKey& key) const {
  Fetched out;
  auto path = PathOf(key.api_version, key.kind, key.ns, key.name);
  if (!path.ok()) {
    out.status = FetchStatus::kNotFound;
    out.message = path.error().message;
    return out;
  }
  k8s::HttpResponse r = client_.GetCached(*path);
  if (!r.ok()) {
    out.status = r.status == 404   ? FetchStatus::kNotFound
                 : r.status == 403 ? FetchStatus::kForbidden
                                   : FetchStatus::kFailed;
    out.message = k8s::Describe({"GET", *path}, r);
    return out;
  }
  auto obj = ParseObject(r.body, "GET " + *path, key.api_version, key.kind);
  if (!obj.ok()) {
    out.status = FetchStatus::kFailed;
    out.message = obj.error().message;
    return out;
  }
  out.status = FetchStatus::kFound;
  out.object = std::move(obj.value());
  return out;
}

// One read of the whole collection from the watch cache (which serves it in one answer), so that
// every item's node stays valid with the document the objects share.
Result<std::vector<Object>> ApiReader::List(std::string_view api_version, std::string_view kind,
                                            std::string_view ns, const Labels& selector) const {
  auto path = PathOf(api_version, kind, ns, "");
  if (!path.ok()) return std::vector<Object>{};  // nothing of a kind no API serves
  std::string query = "?resourceVersion=0";
  if (!selector.empty()) query += "&labelSelector=" + k8s::UrlEscape(LabelSelector(selector));
  k8s::HttpResponse r = client_.Get(*path + query);
  if (!r.ok()) return Error{k8s::Describe({"GET", *path + query}, r)};
  auto doc = ParseBody(r.body, "GET " + *path);
  if (!doc.ok()) return doc.error();
  const doc::Node items = (*doc)->Roots()[0]["items"];
  std::vector<Object> out;
  for (size_t i = 0; i < items.size(); ++i) {
    auto o = podgrouper::DecodeObject(items[i], *doc, api_version, kind);
    if (!o.ok()) return o.error();
    out.push_back(std::move(o.value()));
  }
  std::sort(out.begin(), out.end(),
            [](const Object& a, const Object& b) { return a.name < b.name; });
  return out;
}

}  // namespace kai::podgrouperd
