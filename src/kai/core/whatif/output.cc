#include "kai/core/whatif/output.h"

#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/prettywriter.h>

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "kai/core/resource/quantity.h"

namespace kai::whatif {

std::string FormatSpan(int64_t s) {
  if (s < 60) return std::to_string(s) + "s";
  struct Unit {
    int64_t seconds;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}};
  for (size_t i = 0; i + 1 < std::size(kUnits); ++i) {
    if (s < kUnits[i].seconds) continue;
    const int64_t big = s / kUnits[i].seconds;
    const int64_t small = s % kUnits[i].seconds / kUnits[i + 1].seconds;
    std::string out = std::to_string(big) + kUnits[i].name;
    if (small > 0) out += std::to_string(small) + kUnits[i + 1].name;
    return out;
  }
  return std::to_string(s) + "s";
}

std::string GpuHours(int64_t milli_gpu_seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(milli_gpu_seconds) / 3.6e6);
  return buf;
}

namespace {

std::string Percent(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", ratio * 100);
  return buf;
}

using Row = std::vector<std::string>;

void PrintRows(const std::vector<Row>& rows, std::ostream& out) {
  std::vector<size_t> width;
  for (const Row& r : rows) {
    width.resize(std::max(width.size(), r.size()));
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  for (const Row& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    out << line << "\n";
  }
}

Row QueueRow(const VariantSummary& v, const QueueSummary& q) {
  return {v.name,
          q.name,
          std::to_string(q.jobs),
          std::to_string(q.completed),
          std::to_string(q.jobs - q.started),
          FormatSpan(q.wait_p50),
          FormatSpan(q.wait_p95),
          FormatSpan(q.wait_max),
          GpuHours(q.used_milli_gpu_seconds),
          GpuHours(q.fair_milli_gpu_seconds),
          std::to_string(q.evictions_suffered),
          std::to_string(q.evictions_caused),
          std::to_string(q.restarts)};
}

// Utilisation per bucket as a row of block characters (0-8 eighths), for a glance.
std::string Sparkline(const RunResult& r) {
  static const char* kBlocks[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  std::string out;
  const size_t n = r.cluster_allocated.size();
  const size_t step = std::max<size_t>(1, (n + 59) / 60);
  for (size_t b = 0; b < n; b += step) {
    double sum = 0;
    size_t k = 0;
    for (; k < step && b + k < n; ++k) sum += BucketUtilisation(r, b + k);
    const int level =
        static_cast<int>(std::clamp(sum / static_cast<double>(k) * 8 + 0.5, 0.0, 8.0));
    out += kBlocks[level];
  }
  return out;
}

}  // namespace

void WriteTable(const std::vector<VariantSummary>& variants, std::ostream& out) {
  std::vector<Row> rows = {{"VARIANT", "QUEUE", "JOBS", "DONE", "NEVER-RAN", "WAIT-P50", "WAIT-P95",
                            "WAIT-MAX", "GPU-H-USED", "GPU-H-FAIR", "EVICTED", "CAUSED",
                            "RESTARTS"}};
  for (const VariantSummary& v : variants) {
    for (const QueueSummary& q : v.queues) rows.push_back(QueueRow(v, q));
  }
  PrintRows(rows, out);
  out << "\n";
  for (const VariantSummary& v : variants) {
    const RunResult& r = v.run;
    out << v.name << ": GPU utilisation " << Percent(MeanUtilisation(r)) << " mean over "
        << FormatSpan(r.until_seconds) << " of " << FormatMilli(r.capacity_milli_gpu) << " GPUs; "
        << r.events << " events, " << r.cycles << " cycles\n  |" << Sparkline(r) << "|\n";
  }
}

namespace {

using Writer = rapidjson::PrettyWriter<rapidjson::OStreamWrapper>;

void Key(Writer& w, const char* k) { w.Key(k); }
void Str(Writer& w, const char* k, const std::string& v) {
  w.Key(k);
  w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
}
void Int(Writer& w, const char* k, int64_t v) {
  w.Key(k);
  w.Int64(v);
}

// A bucket series of milli-GPU x seconds as mean GPUs per bucket.
void MeanGpus(Writer& w, const char* k, const RunResult& r, const std::vector<int64_t>& series) {
  Key(w, k);
  w.StartArray();
  for (size_t b = 0; b < series.size(); ++b) {
    const int64_t len = BucketLength(r, b);
    w.Double(len == 0 ? 0 : static_cast<double>(series[b]) / 1000.0 / static_cast<double>(len));
  }
  w.EndArray();
}

void WriteQueue(Writer& w, const VariantSummary& v, const QueueSummary& q) {
  w.StartObject();
  Str(w, "name", q.name);
  Str(w, "parent", q.parent);
  Int(w, "jobs", q.jobs);
  Int(w, "started", q.started);
  Int(w, "completed", q.completed);
  Int(w, "restarts", q.restarts);
  Int(w, "waitP50Seconds", q.wait_p50);
  Int(w, "waitP95Seconds", q.wait_p95);
  Int(w, "waitMaxSeconds", q.wait_max);
  Key(w, "gpuHoursUsed");
  w.Double(static_cast<double>(q.used_milli_gpu_seconds) / 3.6e6);
  Key(w, "gpuHoursFairShare");
  w.Double(static_cast<double>(q.fair_milli_gpu_seconds) / 3.6e6);
  Int(w, "evictionsSuffered", q.evictions_suffered);
  Int(w, "evictionsCaused", q.evictions_caused);
  for (const QueueTotals& t : v.run.queues) {
    if (t.name != q.name) continue;
    MeanGpus(w, "allocatedGpus", v.run, t.allocated);
    MeanGpus(w, "fairShareGpus", v.run, t.fair_share);
  }
  w.EndObject();
}

void WriteVariant(Writer& w, const VariantSummary& v) {
  const RunResult& r = v.run;
  w.StartObject();
  Str(w, "name", v.name);
  Int(w, "untilSeconds", r.until_seconds);
  Int(w, "bucketSeconds", r.bucket_seconds);
  Key(w, "capacityGpus");
  w.Double(static_cast<double>(r.capacity_milli_gpu) / 1000.0);
  Key(w, "meanUtilisation");
  w.Double(MeanUtilisation(r));
  Int(w, "events", r.events);
  Int(w, "cycles", r.cycles);
  Key(w, "utilisation");
  w.StartArray();
  for (size_t b = 0; b < r.cluster_allocated.size(); ++b) w.Double(BucketUtilisation(r, b));
  w.EndArray();
  Key(w, "queues");
  w.StartArray();
  for (const QueueSummary& q : v.queues) WriteQueue(w, v, q);
  w.EndArray();
  w.EndObject();
}

}  // namespace

void WriteJson(const std::vector<VariantSummary>& variants, std::ostream& out) {
  rapidjson::OStreamWrapper os(out);
  Writer w(os);
  w.SetMaxDecimalPlaces(4);
  w.StartObject();
  Key(w, "variants");
  w.StartArray();
  for (const VariantSummary& v : variants) WriteVariant(w, v);
  w.EndArray();
  w.EndObject();
  out << "\n";
}

}  // namespace kai::whatif
