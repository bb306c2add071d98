#pragma once
// For admission/'s tests only: requests built from YAML, a lookup over fixed queues, and an
// RFC 6902 applier (add, replace, remove) to run a mutation's patch on its pod.
#include <rapidjson/document.h>
#include <rapidjson/pointer.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "kai/core/admission/admission.h"
#include "kai/core/k8s/decode.h"

namespace kai::admission::testing {

// A request over objects parsed from YAML (held, so that the nodes stay valid).
struct Review {
  std::shared_ptr<doc::Document> object_doc, old_doc;
  Request request;
};

inline std::shared_ptr<doc::Document> ParseOrDie(std::string_view yaml) {
  auto d = doc::ParseYaml(yaml);
  if (!d.ok()) throw std::runtime_error(d.error().message);
  return std::make_shared<doc::Document>(std::move(d.value()));
}

inline Review MakeReview(Operation op, std::string_view object_yaml, std::string_view old_yaml = "",
                         std::string ns = "team-a") {
  Review r;
  r.request.operation = op;
  r.request.ns = std::move(ns);
  if (!object_yaml.empty()) {
    r.object_doc = ParseOrDie(object_yaml);
    r.request.object = r.object_doc->Roots()[0];
  }
  if (!old_yaml.empty()) {
    r.old_doc = ParseOrDie(old_yaml);
    r.request.old_object = r.old_doc->Roots()[0];
  }
  r.request.name = std::string(
      (r.request.object.IsDefined() ? r.request.object : r.request.old_object)["metadata"]["name"]
          .Scalar());
  return r;
}

inline Review Json(Operation op, const std::string& json, std::string ns = "team-a") {
  Review r;
  auto d = doc::ParseJson(json);
  if (!d.ok()) throw std::runtime_error(d.error().message);
  r.object_doc = std::make_shared<doc::Document>(std::move(d.value()));
  r.request = {op, std::move(ns), "", r.object_doc->Roots()[0], {}};
  r.request.name = std::string(r.request.object["metadata"]["name"].Scalar());
  return r;
}

// Queues by name, decoded from YAML; child lists from their parentQueue.
class FakeLookup : public ClusterLookup {
 public:
  void AddQueue(std::string_view yaml) {
    ClusterState s;
    auto d = ParseOrDie(yaml);
    const Status decoded = DecodeObject(d->Roots()[0], "scheduling.run.ai/v2", "Queue", "test", s);
    if (!decoded.ok()) throw std::runtime_error(decoded.error().message);
    queues_[s.queues[0].meta.name] = s.queues[0];
  }
  void SetRunning(bool running) { running_ = running; }
  mutable int pod_lookups = 0;  // PodGroupRunning calls (each lists a namespace's pods)
  void FailWith(std::string message) { failure_ = std::move(message); }

  Result<std::optional<QueueObject>> FindQueue(std::string_view name) const override {
    if (!failure_.empty()) return Error{failure_};
    auto it = queues_.find(std::string(name));
    if (it == queues_.end()) return std::optional<QueueObject>();
    return std::optional<QueueObject>(it->second);
  }
  Result<std::vector<std::string>> ChildQueues(std::string_view name) const override {
    if (!failure_.empty()) return Error{failure_};
    std::vector<std::string> out;
    for (const auto& [n, q] : queues_) {
      if (q.parent == name) out.push_back(n);
    }
    return out;
  }
  Result<bool> PodGroupRunning(std::string_view, std::string_view) const override {
    ++pod_lookups;
    if (!failure_.empty()) return Error{failure_};
    return running_;
  }

 private:
  std::map<std::string, QueueObject> queues_;
  bool running_ = false;
  std::string failure_;
};

// doc -> rapidjson, every scalar as a string (what the pod rules read are strings).
inline void ToRapid(const doc::Node& n, rapidjson::Value& out,
                    rapidjson::Document::AllocatorType& a) {
  if (n.IsMap()) {
    out.SetObject();
    for (const auto& e : n.Entries()) {
      rapidjson::Value k(std::string(e.first.Scalar()).c_str(), a), v;
      ToRapid(e.second, v, a);
      out.AddMember(k, v, a);
    }
  } else if (n.IsSequence()) {
    out.SetArray();
    for (size_t i = 0; i < n.size(); ++i) {
      rapidjson::Value v;
      ToRapid(n[i], v, a);
      out.PushBack(v, a);
    }
  } else if (n.IsScalar()) {
    out.SetString(std::string(n.Scalar()).c_str(), a);
  } else {
    out.SetNull();
  }
}

inline std::string Unescape(std::string token) {
  std::string out;
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size()) {
      out += token[++i] == '1' ? '/' : '~';
    } else {
      out += token[i];
    }
  }
  return out;
}

inline void ApplyOp(rapidjson::Document& d, const PatchOp& op) {
  auto& a = d.GetAllocator();
  const size_t slash = op.path.rfind('/');
  const std::string parent_path = op.path.substr(0, slash);
  const std::string token = Unescape(op.path.substr(slash + 1));
  rapidjson::Value* parent = rapidjson::Pointer(parent_path.c_str()).Get(d);
  if (!parent) throw std::runtime_error("no parent for " + op.path);
  rapidjson::Document value(&a);
  if (!op.value_json.empty()) value.Parse(op.value_json.c_str());
  if (parent->IsArray()) {
    if (token == "-" && op.op == "add") {
      parent->PushBack(rapidjson::Value(value, a), a);
      return;
    }
    const size_t i = std::stoul(token);
    if (i > parent->Size() || (op.op != "add" && i == parent->Size())) {
      throw std::runtime_error("index out of range: " + op.path);
    }
    if (op.op == "replace") {
      (*parent)[static_cast<rapidjson::SizeType>(i)] = rapidjson::Value(value, a);
    } else if (op.op == "remove") {
      parent->Erase(parent->Begin() + i);
    } else {
      parent->PushBack(rapidjson::Value(), a);
      for (size_t j = parent->Size() - 1; j > i; --j) {
        (*parent)[static_cast<rapidjson::SizeType>(j)] =
            (*parent)[static_cast<rapidjson::SizeType>(j - 1)];
      }
      (*parent)[static_cast<rapidjson::SizeType>(i)] = rapidjson::Value(value, a);
    }
    return;
  }
  if (!parent->IsObject()) throw std::runtime_error("parent is not a container: " + op.path);
  const bool exists = parent->HasMember(token.c_str());
  if (op.op == "replace" && !exists) throw std::runtime_error("replace of a missing " + op.path);
  if (exists) parent->RemoveMember(token.c_str());
  if (op.op == "remove") return;
  parent->AddMember(rapidjson::Value(token.c_str(), a), rapidjson::Value(value, a), a);
}

// The request's object with `ops` applied, as JSON text.
inline std::string Apply(const Request& r, const std::vector<PatchOp>& ops) {
  rapidjson::Document d;
  ToRapid(r.object, d, d.GetAllocator());
  for (const PatchOp& op : ops) ApplyOp(d, op);
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  d.Accept(w);
  return buf.GetString();
}

}  // namespace kai::admission::testing
