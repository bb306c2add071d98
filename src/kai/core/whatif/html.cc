#include "kai/core/whatif/html.h"

#include <algorithm>
#include <set>

#include "kai/core/whatif/output.h"
#include "kai/core/whatif/svg.h"

namespace kai::whatif {
namespace {

const char* Colour(size_t i) {
  static const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                   "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
  return kColours[i % std::size(kColours)];
}

// Hours or days on the time axis, whichever reads better for the run's length.
struct TimeAxis {
  double unit;
  const char* label;
};

TimeAxis AxisFor(int64_t until) {
  if (until >= 3 * 86400) return {86400.0, "simulated time (days)"};
  if (until >= 3 * 3600) return {3600.0, "simulated time (hours)"};
  return {60.0, "simulated time (minutes)"};
}

double BucketMid(const RunResult& r, size_t b, const TimeAxis& a) {
  return (static_cast<double>(b) * static_cast<double>(r.bucket_seconds) +
          static_cast<double>(BucketLength(r, b)) / 2) /
         a.unit;
}

std::string UtilisationChart(const std::vector<VariantSummary>& vs) {
  const TimeAxis axis = AxisFor(vs.front().run.until_seconds);
  LineChart c{"Cluster GPU utilisation",
              axis.label,
              "GPUs allocated (%)",
              static_cast<double>(vs.front().run.until_seconds) / axis.unit,
              100,
              {}};
  for (size_t i = 0; i < vs.size(); ++i) {
    Series s{vs[i].name, Colour(i), false, {}};
    const RunResult& r = vs[i].run;
    for (size_t b = 0; b < r.cluster_allocated.size(); ++b) {
      s.points.emplace_back(BucketMid(r, b, axis), 100 * BucketUtilisation(r, b));
    }
    c.series.push_back(std::move(s));
  }
  return RenderSvg(c);
}

const QueueTotals* Totals(const RunResult& r, const std::string& queue) {
  for (const QueueTotals& t : r.queues) {
    if (t.name == queue) return &t;
  }
  return nullptr;
}

Series MeanGpuSeries(const std::string& name, const char* colour, bool dashed, const RunResult& r,
                     const std::vector<int64_t>& v, const TimeAxis& axis, double& y_max) {
  Series s{name, colour, dashed, {}};
  for (size_t b = 0; b < v.size(); ++b) {
    const int64_t len = BucketLength(r, b);
    const double gpus = len ? static_cast<double>(v[b]) / 1000.0 / static_cast<double>(len) : 0;
    y_max = std::max(y_max, gpus);
    s.points.emplace_back(BucketMid(r, b, axis), gpus);
  }
  return s;
}

std::string QueueChart(const std::vector<VariantSummary>& vs, const std::string& queue) {
  const TimeAxis axis = AxisFor(vs.front().run.until_seconds);
  LineChart c{"Queue " + queue + ": allocation (solid) and fair share (dashed)", axis.label, "GPUs",
              static_cast<double>(vs.front().run.until_seconds) / axis.unit,     0,          {}};
  for (size_t i = 0; i < vs.size(); ++i) {
    const QueueTotals* t = Totals(vs[i].run, queue);
    if (!t) continue;
    c.series.push_back(MeanGpuSeries(vs[i].name + " allocated", Colour(i), false, vs[i].run,
                                     t->allocated, axis, c.y_max));
    c.series.push_back(MeanGpuSeries(vs[i].name + " fair share", Colour(i), true, vs[i].run,
                                     t->fair_share, axis, c.y_max));
  }
  c.y_max = c.y_max > 0 ? c.y_max * 1.1 : 1;
  return RenderSvg(c, 720, 260);
}

// The fraction of the queue's jobs that waited at most x (a step line).
std::string WaitChart(const std::vector<VariantSummary>& vs, const std::string& queue) {
  LineChart c{"Queue " + queue + ": wait before first start (distribution)",
              "wait (minutes)",
              "jobs started within that wait (%)",
              0,
              100,
              {}};
  for (const VariantSummary& v : vs) {
    for (const QueueSummary& q : v.queues) {
      if (q.name == queue && !q.waits.empty()) {
        c.x_max = std::max(c.x_max, static_cast<double>(q.waits.back()) / 60.0);
      }
    }
  }
  c.x_max = c.x_max > 0 ? c.x_max * 1.05 : 1;
  for (size_t i = 0; i < vs.size(); ++i) {
    for (const QueueSummary& q : vs[i].queues) {
      if (q.name != queue || q.waits.empty()) continue;
      Series s{vs[i].name, Colour(i), false, {{0, 0}}};
      const double n = static_cast<double>(q.waits.size());
      for (size_t k = 0; k < q.waits.size(); ++k) {
        const double x = static_cast<double>(q.waits[k]) / 60.0;
        s.points.emplace_back(x, 100 * static_cast<double>(k) / n);
        s.points.emplace_back(x, 100 * static_cast<double>(k + 1) / n);
      }
      s.points.emplace_back(c.x_max, 100);
      c.series.push_back(std::move(s));
    }
  }
  return RenderSvg(c, 720, 260);
}

std::string Cell(const std::string& s) { return "<td>" + EscapeXml(s) + "</td>"; }

std::string SummaryTable(const std::vector<VariantSummary>& vs) {
  std::string h =
      "<table><tr><th>variant</th><th>queue</th><th>jobs</th><th>done</th><th>never ran</th>"
      "<th>wait p50</th><th>wait p95</th><th>wait max</th><th>GPU-h used</th>"
      "<th>GPU-h fair share</th><th>evicted</th><th>caused</th><th>restarts</th></tr>";
  for (const VariantSummary& v : vs) {
    for (const QueueSummary& q : v.queues) {
      h += "<tr>" + Cell(v.name) + Cell(q.name) + Cell(std::to_string(q.jobs)) +
           Cell(std::to_string(q.completed)) + Cell(std::to_string(q.jobs - q.started)) +
           Cell(FormatSpan(q.wait_p50)) + Cell(FormatSpan(q.wait_p95)) +
           Cell(FormatSpan(q.wait_max)) + Cell(GpuHours(q.used_milli_gpu_seconds)) +
           Cell(GpuHours(q.fair_milli_gpu_seconds)) + Cell(std::to_string(q.evictions_suffered)) +
           Cell(std::to_string(q.evictions_caused)) + Cell(std::to_string(q.restarts)) + "</tr>";
    }
  }
  return h + "</table>";
}

// Every queue of any variant with jobs or a share, in first-seen order.
std::vector<std::string> QueueNames(const std::vector<VariantSummary>& vs) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const VariantSummary& v : vs) {
    for (const QueueSummary& q : v.queues) {
      if (seen.insert(q.name).second) names.push_back(q.name);
    }
  }
  return names;
}

bool HasJobs(const std::vector<VariantSummary>& vs, const std::string& queue) {
  for (const VariantSummary& v : vs) {
    for (const QueueSummary& q : v.queues) {
      if (q.name == queue && q.jobs > 0) return true;
    }
  }
  return false;
}

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse;"
    "font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
    "th{background:#f3f3f3}td:nth-child(-n+2){text-align:left}svg{display:block;margin:12px 0}"
    "h2{margin-top:28px}";

}  // namespace

std::string HtmlReport(const std::vector<VariantSummary>& vs) {
  std::string h =
      "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>kai whatif</title>"
      "<style>" +
      std::string(kStyle) + "</style></head><body><h1>kai whatif</h1>";
  if (vs.empty()) return h + "<p>No variant ran.</p></body></html>";
  h += "<p>Simulated " + FormatSpan(vs.front().run.until_seconds) + "; " +
       std::to_string(vs.front().run.jobs.size()) + " jobs in the trace; variants: ";
  for (size_t i = 0; i < vs.size(); ++i) h += (i ? ", " : "") + EscapeXml(vs[i].name);
  h += ".</p><h2>Summary</h2>" + SummaryTable(vs) + "<h2>Utilisation</h2>" + UtilisationChart(vs);
  h += "<h2>Allocation against fair share</h2>";
  for (const std::string& q : QueueNames(vs)) h += QueueChart(vs, q);
  h += "<h2>Wait times</h2>";
  for (const std::string& q : QueueNames(vs)) {
    if (HasJobs(vs, q)) h += WaitChart(vs, q);
  }
  return h + "</body></html>\n";
}

}  // namespace kai::whatif
