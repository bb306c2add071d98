#include "kai/core/sim/output.h"

#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/writer.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "kai/core/resource/quantity.h"

namespace kai::sim {
namespace {

double Devices(int64_t milli) { return static_cast<double>(milli) / kMilliPerUnit; }

template <class W>
void WriteResources(W& w, const Resources& r) {
  w.StartObject();
  w.Key("gpu");
  w.Double(Devices(r.milli_gpu));
  w.Key("cpu");
  w.Double(Devices(r.milli_cpu));
  w.Key("memory");
  w.Int64(r.memory);
  w.EndObject();
}

template <class W>
void StringField(W& w, const char* key, const std::string& value) {
  if (value.empty()) return;
  w.Key(key);
  w.String(value.c_str());
}

template <class W>
void PlacedRequired(W& w, int placed, int required) {
  if (required <= 0) return;
  w.Key("placed");
  w.Int(placed);
  w.Key("required");
  w.Int(required);
}

// Each reason's typed fields, after its kind and message.
template <class W>
void WriteFields(W& w, const NodesReason& r) {
  StringField(w, "resource", r.resource);
  if (r.nodes > 0) {
    w.Key("nodes");
    w.Int(r.nodes);
    w.Key("neverFitsNodes");
    w.Int(r.never_nodes);
  }
  if (r.short_by > 0) StringField(w, "shortBy", FormatResourceAmount(r.resource, r.short_by));
}

template <class W>
void WriteFields(W& w, const GangReason& r) {
  PlacedRequired(w, r.placed, r.required);
}

template <class W>
void WriteFields(W& w, const QueueCapReason& r) {
  StringField(w, "resource", r.resource);
  StringField(w, "queue", r.queue);
  StringField(w, "requested", FormatResourceAmount(r.resource, r.requested));
  StringField(w, "available", FormatResourceAmount(r.resource, r.available));
}

template <class W>
void WriteFields(W& w, const QueueMissingReason& r) {
  StringField(w, "queue", r.queue);
}

template <class W>
void WriteFields(W& w, const NotReadyReason& r) {
  PlacedRequired(w, r.live, r.min_member);
}

template <class W>
void WriteFields(W&, const NoNodesReason&) {}

template <class W>
void WriteFields(W&, const PreemptionDelayReason&) {}

const char* OutcomeName(DisruptionOutcome o) {
  switch (o) {
    case DisruptionOutcome::kNotEligible:
      return "NotEligible";
    case DisruptionOutcome::kNoCandidates:
      return "NoCandidates";
    case DisruptionOutcome::kGaveUp:
      return "GaveUp";
    case DisruptionOutcome::kNoFit:
      return "NoFit";
  }
  return "Unknown";
}

template <class W>
void WriteFields(W& w, const DisruptionReason& r) {
  StringField(w, "action", r.action);
  StringField(w, "outcome", OutcomeName(r.outcome));
  StringField(w, "rule", r.rule);
  if (r.outcome != DisruptionOutcome::kGaveUp && r.outcome != DisruptionOutcome::kNoFit) return;
  w.Key("candidateJobs");
  w.Int(r.candidate_jobs);
  StringField(w, "candidateGpus", FormatMilli(r.candidate_milli_gpu));
  w.Key("scenariosTried");
  w.Int(r.scenarios_tried);
  w.Key("scenariosPruned");
  w.Int(r.scenarios_pruned);
  w.Key("searchWork");
  w.Int64(r.search_work);
  StringField(w, "bound", r.bound);
}

template <class W>
void WriteFields(W& w, const TopologyReason& r) {
  StringField(w, "resource", r.resource);
  PlacedRequired(w, r.placed, r.required);
  for (const auto& [key, value] : {std::pair{"topology", &r.topology}, std::pair{"level", &r.level},
                                   std::pair{"domain", &r.domain}, std::pair{"scope", &r.scope},
                                   std::pair{"subGroup", &r.sub_group}}) {
    StringField(w, key, *value);
  }
  if (r.scope.empty()) return;
  StringField(w, "scopeFree", FormatResourceAmount(r.resource, r.scope_free));
  if (!r.domain.empty() && r.required == 0) {
    StringField(w, "domainFree", FormatResourceAmount(r.resource, r.available));
  }
}

template <class W>
void WriteReason(W& w, const Reason& r) {
  w.StartObject();
  w.Key("kind");
  w.String(r.KindName().c_str());
  w.Key("message");
  w.String(r.Message().c_str());
  std::visit([&](const auto& payload) { WriteFields(w, payload); }, r.payload());
  w.EndObject();
}

// cpu, memory and GPUs as quantities; "unlimited" for a negative amount.
template <class W>
void WriteVector(W& w, const char* key, const QueueVector& v) {
  auto amount = [&](const char* name, int64_t x, const std::string& text) {
    w.Key(name);
    w.String(x < 0 ? "unlimited" : text.c_str());
  };
  w.Key(key);
  w.StartObject();
  amount("gpu", v.milli_gpu, FormatMilli(v.milli_gpu));
  amount("cpu", v.milli_cpu, FormatMilli(v.milli_cpu));
  amount("memory", v.memory, std::to_string(v.memory));
  w.EndObject();
}

template <class W>
void WriteQueueUse(W& w, const char* key, const QueueUse& q) {
  w.Key(key);
  w.StartObject();
  w.Key("name");
  w.String(q.name.c_str());
  WriteVector(w, "allocated", q.allocated);
  WriteVector(w, "quota", q.quota);
  WriteVector(w, "fairShare", q.fair_share);
  w.Key("priority");
  w.Int(q.priority);
  w.EndObject();
}

// The typed fields of the eviction, next to its line.
template <class W>
void WriteEvictionVerdict(W& w, const PodReport& p) {
  const EvictionVerdict& v = p.eviction_verdict;
  w.Key("eviction");
  w.StartObject();
  w.Key("kind");
  w.String(EvictionKindName(v.kind));
  w.Key("action");
  w.String(v.action.c_str());
  w.Key("preemptor");
  if (p.preemptor.empty()) {
    w.Null();
  } else {
    w.String(p.preemptor.c_str());
  }
  w.Key("rule");
  w.String(v.rule_text().c_str());
  w.Key("aboveSemiPreemptibleFloor");
  w.Bool(v.above_semi_preemptible_floor);
  if (v.queues) {
    WriteQueueUse(w, "victimQueue", v.queues->victim);
    WriteQueueUse(w, "reclaimerQueue", v.queues->reclaimer);
  }
  w.EndObject();
}

template <class W>
void WritePod(W& w, const PodReport& p) {
  w.StartObject();
  w.Key("namespace");
  w.String(p.ns.c_str());
  w.Key("name");
  w.String(p.name.c_str());
  w.Key("podGroup");
  w.String(p.pod_group.c_str());
  w.Key("queue");
  w.String(p.queue.c_str());
  w.Key("status");
  w.String(p.status.c_str());
  w.Key("node");
  if (p.node.empty()) {
    w.Null();
  } else {
    w.String(p.node.c_str());
  }
  w.Key("gpuGroups");
  w.StartArray();
  for (const auto& g : p.gpu_groups) w.String(g.c_str());
  w.EndArray();
  if (!p.numa_zones.empty()) {
    w.Key("numaZones");
    w.StartArray();
    for (const auto& z : p.numa_zones) w.String(z.c_str());
    w.EndArray();
  }
  w.Key("reasons");
  w.StartArray();
  for (const auto& r : p.reasons) WriteReason(w, r);
  w.EndArray();
  if (!p.eviction.empty()) {
    w.Key("evictedBy");
    w.String(p.eviction.c_str());
    WriteEvictionVerdict(w, p);
  }
  w.EndObject();
}

template <class W>
void WriteCycle(W& w, const CycleReport& c) {
  w.StartObject();
  w.Key("cycle");
  w.Int(c.cycle);
  w.Key("binds");
  w.Int(c.counts.binds);
  w.Key("evictions");
  w.Int(c.counts.evictions);
  w.Key("pipelines");
  w.Int(c.counts.pipelines);
  w.Key("pods");
  w.StartArray();
  for (const auto& p : c.pods) WritePod(w, p);
  w.EndArray();
  w.Key("nodes");
  w.StartArray();
  for (const auto& n : c.nodes) {
    w.StartObject();
    w.Key("name");
    w.String(n.name.c_str());
    w.Key("idleGpus");
    w.Double(Devices(n.idle_milli_gpus));
    w.Key("releasingGpus");  // KAI's figure: freed - promised
    w.Double(Devices(n.releasing_milli_gpus));
    w.Key("freedGpus");
    w.Double(Devices(n.releasing.freed));
    w.Key("pipelinedGpus");
    w.Double(Devices(n.releasing.promised));
    w.Key("pipelinedFromIdleGpus");
    w.Double(Devices(n.releasing.promised_from_idle));
    w.EndObject();
  }
  w.EndArray();
  w.Key("queues");
  w.StartArray();
  for (const auto& q : c.queues) {
    w.StartObject();
    w.Key("name");
    w.String(q.name.c_str());
    w.Key("parent");
    w.String(q.parent.c_str());
    w.Key("allocated");
    WriteResources(w, q.allocated);
    w.Key("fairShare");
    WriteResources(w, q.fair_share);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

}  // namespace

std::string ReasonsJson(const std::vector<Reason>& reasons) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartArray();
  for (const Reason& r : reasons) WriteReason(w, r);
  w.EndArray();
  return std::string(buffer.GetString(), buffer.GetSize());
}

void WriteJson(const std::vector<CycleReport>& cycles, std::ostream& out, std::string_view now) {
  rapidjson::OStreamWrapper os(out);
  rapidjson::Writer<rapidjson::OStreamWrapper> w(os);
  w.StartObject();
  if (!now.empty()) {
    w.Key("now");
    w.String(now.data(), static_cast<rapidjson::SizeType>(now.size()));
  }
  w.Key("cycles");
  w.StartArray();
  for (const auto& c : cycles) WriteCycle(w, c);
  w.EndArray();
  w.EndObject();
  out << "\n";
}

void WriteYaml(const std::vector<CycleReport>& cycles, std::ostream& out) {
  std::ostringstream json;
  WriteJson(cycles, json);
  // JSON is a subset of YAML; re-emit it in block style for readability.
  YAML::Node doc = YAML::Load(json.str());
  YAML::Emitter e;
  e << doc;
  out << e.c_str() << "\n";
}

void WriteTable(const std::vector<CycleReport>& cycles, std::ostream& out) {
  for (const auto& c : cycles) {
    out << "CYCLE " << c.cycle << ": " << c.counts.binds << " binds, " << c.counts.evictions
        << " evictions, " << c.counts.pipelines << " pipelines\n";
    out << Pad("NAMESPACE/POD", 34) << Pad("PODGROUP", 20) << Pad("QUEUE", 14) << Pad("STATUS", 12)
        << Pad("NODE", 12) << "REASON\n";
    for (const auto& p : c.pods) {
      out << Pad(p.ns + "/" + p.name, 34) << Pad(p.pod_group, 20) << Pad(p.queue, 14)
          << Pad(p.status, 12) << Pad(p.node.empty() ? "-" : p.node, 12)
          << (p.eviction.empty() ? JoinReasons(p.reasons) : p.eviction) << "\n";
    }
    // RELEASING is what Releasing pods free; PIPELINED what Pipelined pods were promised of it
    // and of idle; KAI RELEASING is KAI's own figure, the first less the second.
    out << "\n"
        << Pad("NODE", 16) << Pad("IDLE GPUS", 12) << Pad("RELEASING GPUS", 16)
        << Pad("PIPELINED GPUS", 24) << "KAI RELEASING\n";
    for (const auto& n : c.nodes) {
      const ReleasingGpus& r = n.releasing;
      std::string pipelined = FormatMilli(r.promised);
      if (r.promised_from_idle > 0) {
        pipelined += " (" + FormatMilli(r.promised_from_idle) + " of idle)";
      }
      out << Pad(n.name, 16) << Pad(FormatMilli(n.idle_milli_gpus), 12)
          << Pad(FormatMilli(r.freed), 16) << Pad(pipelined, 24)
          << FormatMilli(n.releasing_milli_gpus) << "\n";
    }
    out << "\n"
        << Pad("QUEUE", 16) << Pad("PARENT", 12) << Pad("GPU ALLOCATED", 15)
        << Pad("GPU FAIR SHARE", 16) << "GPU QUOTA/LIMIT\n";
    for (const auto& q : c.queues) {
      auto fmt = [](int64_t v) { return v < 0 ? std::string("unlimited") : FormatMilli(v); };
      out << Pad(q.name, 16) << Pad(q.parent.empty() ? "-" : q.parent, 12)
          << Pad(FormatMilli(q.allocated.milli_gpu), 15)
          << Pad(FormatMilli(q.fair_share.milli_gpu), 16) << fmt(q.gpu.quota) << "/"
          << fmt(q.gpu.limit) << "\n";
    }
    out << "\n";
  }
}

}  // namespace kai::sim
