#include "kai/core/usage/usage_store.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>

#include "kai/core/k8s/doc.h"
#include "kai/core/resource/quantity.h"

namespace kai::usage {
namespace {

constexpr std::array<CoreResource, 3> kResources = {CoreResource::kCpu, CoreResource::kMemory,
                                                    CoreResource::kGpu};

}  // namespace

QueueUsage WeightedAmount(const std::vector<Interval>& intervals, UnixSeconds now,
                          const UsageParams& p) {
  std::array<double, 3> sum{};
  for (const Interval& in : intervals) {
    const double w = DecayedSeconds(in.start, in.duration_seconds, now, p);
    if (w <= 0) continue;
    for (size_t i = 0; i < kResources.size(); ++i) {
      sum[i] += w * static_cast<double>(in.amount.Get(kResources[i]));
    }
  }
  return sum;
}

double DecayedSeconds(UnixSeconds start, int64_t duration, UnixSeconds now, const UsageParams& p) {
  const double window_start = static_cast<double>(now - p.window_seconds);
  const double a = std::max(static_cast<double>(start), window_start);
  const double b = std::min(static_cast<double>(start + duration), static_cast<double>(now));
  if (b <= a) return 0;
  if (p.half_life_seconds <= 0) return b - a;
  // Integral of 2^(-(now - t)/h) dt from a to b = h/ln2 * (2^(-(now-b)/h) - 2^(-(now-a)/h)).
  const double h = static_cast<double>(p.half_life_seconds);
  const double n = static_cast<double>(now);
  return h / std::log(2.0) * (std::exp2(-(n - b) / h) - std::exp2(-(n - a) / h));
}

void UsageStore::RecordAllocation(const std::string& queue, Interval interval) {
  allocations_.emplace_back(queue, std::move(interval));
}

void UsageStore::RecordCapacity(Interval interval) { capacity_.push_back(std::move(interval)); }

std::map<std::string, QueueUsage> UsageStore::Usage(UnixSeconds now, const UsageParams& p) const {
  const auto capacity = WeightedAmount(capacity_, now, p);
  std::map<std::string, std::vector<Interval>> by_queue;
  for (const auto& [queue, in] : allocations_) by_queue[queue].push_back(in);
  std::map<std::string, QueueUsage> out;
  for (const auto& [queue, intervals] : by_queue) {
    const auto used = WeightedAmount(intervals, now, p);
    QueueUsage u{};
    for (size_t i = 0; i < u.size(); ++i) u[i] = capacity[i] > 0 ? used[i] / capacity[i] : 0;
    out[queue] = u;
  }
  return out;
}

namespace {

struct FileError {
  std::string message;
};

std::string Field(const std::string& path, const std::string& f) { return path + ": " + f; }

int64_t ReadDuration(const YAML::Node& n, const std::string& key, const std::string& where) {
  if (!n[key]) throw FileError{Field(where, key) + ": missing"};
  auto d = ParseGoDuration(n[key].as<std::string>());
  if (!d || *d < 0) {
    throw FileError{Field(where, key) + ": expected a duration such as 10h, got \"" +
                    n[key].as<std::string>() + "\""};
  }
  return *d;
}

Interval ReadInterval(const YAML::Node& n, const std::string& where) {
  Interval in;
  if (!n["start"]) throw FileError{Field(where, "start") + ": missing"};
  auto t = ParseRfc3339(n["start"].as<std::string>());
  if (!t) throw FileError{Field(where, "start") + ": expected an RFC 3339 time"};
  in.start = *t;
  in.duration_seconds = ReadDuration(n, "duration", where);
  const std::pair<const char*, int> fields[] = {{"gpu", 3}, {"cpu", 3}, {"memory", 0}};
  for (const auto& [key, scale] : fields) {
    if (!n[key]) continue;
    auto q = ParseQuantity(n[key].as<std::string>(), scale);
    if (!q.ok()) throw FileError{Field(where, key) + ": " + q.error().message};
    const int64_t v = q.value();
    if (v < 0) throw FileError{Field(where, key) + ": must not be negative"};
    const std::string k = key;
    if (k == "gpu") in.amount.milli_gpu = v;
    if (k == "cpu") in.amount.milli_cpu = v;
    if (k == "memory") in.amount.memory = v;
  }
  return in;
}

}  // namespace

Result<UsageStore> ParseUsage(const std::string& text, const std::string& source) {
  // yaml-cpp's node API has no limits of its own: doc::ParseYaml checks depth, size and alias
  // expansion first (the file is small; parsing it twice costs nothing that matters).
  if (auto checked = doc::ParseYaml(text); !checked.ok()) {
    return Error{source + ": " + checked.error().message};
  }
  try {
    const YAML::Node doc = YAML::Load(text);
    UsageStore store;
    UsageParams params;
    if (const YAML::Node p = doc["usageParams"]) {
      if (p["halfLifePeriod"])
        params.half_life_seconds = ReadDuration(p, "halfLifePeriod", source + ": usageParams");
      if (p["windowSize"])
        params.window_seconds = ReadDuration(p, "windowSize", source + ": usageParams");
    }
    store.set_params(params);
    const YAML::Node cap = doc["capacity"];
    for (size_t i = 0; cap && i < cap.size(); ++i) {
      store.RecordCapacity(ReadInterval(cap[i], source + ": capacity[" + std::to_string(i) + "]"));
    }
    const YAML::Node alloc = doc["allocations"];
    for (size_t i = 0; alloc && i < alloc.size(); ++i) {
      const std::string where = source + ": allocations[" + std::to_string(i) + "]";
      if (!alloc[i]["queue"]) throw FileError{Field(where, "queue") + ": missing"};
      store.RecordAllocation(alloc[i]["queue"].as<std::string>(), ReadInterval(alloc[i], where));
    }
    if (!cap || cap.size() == 0)
      throw FileError{source + ": capacity: at least one interval needed"};
    return store;
  } catch (const FileError& e) {
    return Error{e.message};
  } catch (const YAML::Exception& e) {
    return Error{source + ": " + e.what()};
  }
}

}  // namespace kai::usage
