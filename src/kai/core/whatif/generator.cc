// GenerateTrace: the generator spec of docs/whatif.md.
#include <algorithm>
#include <cmath>

#include "kai/core/k8s/doc.h"
#include "kai/core/whatif/rng.h"
#include "kai/core/whatif/trace.h"

namespace kai::whatif {
namespace {

// One weighted choice: values with their weights (> 0), drawn in the spec's order.
template <class T>
struct Choice {
  std::vector<std::pair<T, double>> options;
  double total = 0;
  T Draw(Rng& rng) const {
    double x = rng.Uniform01() * total;
    for (const auto& [v, w] : options) {
      if (x < w) return v;
      x -= w;
    }
    return options.back().first;
  }
};

enum class Shape { kFixed, kExponential, kLogNormal, kUniform };

struct Runtime {
  Shape shape = Shape::kFixed;
  double a = 0,
         b = 0;     // fixed: a; exponential: mean a; lognormal: median a, sigma b; uniform: [a, b]
  int64_t max = 0;  // 0: no cap
  int64_t Draw(Rng& rng) const {
    double v = a;
    if (shape == Shape::kExponential) v = rng.Exponential(a);
    if (shape == Shape::kLogNormal) v = rng.LogNormal(a, b);
    if (shape == Shape::kUniform) v = a + (b - a) * rng.Uniform01();
    int64_t s = std::max<int64_t>(1, static_cast<int64_t>(std::llround(v)));
    return max > 0 ? std::min(s, max) : s;
  }
};

struct QueueSpec {
  std::string queue, ns, priority_class, cpu, memory;
  double per_hour = 0;
  Choice<int> pods;
  Choice<int64_t> gpu;
  std::optional<int> min_member;  // none: every pod
  Runtime runtime;
};

struct Reader {
  std::string source;
  std::string Where(const std::string& path) const { return source + ": " + path; }
};

Result<double> Number(const doc::Node& n, const std::string& where) {
  const std::string text(n.Scalar());
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (!n.IsScalar() || text.empty() || *end != '\0' || !std::isfinite(v) || v < 0) {
    return Error{where + ": expected a non-negative number, got \"" + text + "\""};
  }
  return v;
}

Result<int64_t> Span(const doc::Node& n, const std::string& where) {
  const auto v = ParseSpan(n.Scalar());
  if (!n.IsScalar() || !v || *v < 0) {
    return Error{where + ": expected a duration such as 90, 30m, 2h or 1d, got \"" +
                 std::string(n.Scalar()) + "\""};
  }
  return *v;
}

template <class T, class Parse>
Result<Choice<T>> ReadChoice(const doc::Node& n, const std::string& where, Parse parse) {
  Choice<T> c;
  for (const auto& e : n.Entries()) {
    const std::string at = where + "." + std::string(e.first.Scalar());
    auto v = parse(e.first.Scalar(), at);
    if (!v.ok()) return v.error();
    auto w = Number(e.second, at);
    if (!w.ok()) return w.error();
    if (*w == 0) continue;
    c.options.emplace_back(*v, *w);
    c.total += *w;
  }
  if (c.options.empty()) {
    return Error{where + ": expected a map of value: weight with a positive weight"};
  }
  return c;
}

// A bare scalar is a choice of one value.
template <class T, class Parse>
Result<Choice<T>> ReadChoiceOrValue(const doc::Node& n, const std::string& where, Parse parse) {
  if (!n.IsScalar()) return ReadChoice<T>(n, where, parse);
  auto v = parse(n.Scalar(), where);
  if (!v.ok()) return v.error();
  Choice<T> c;
  c.options.emplace_back(*v, 1.0);
  c.total = 1;
  return c;
}

Result<int> PodCount(std::string_view text, const std::string& where) {
  const auto v = ParseSpan(text);  // plain integers parse as seconds: the same digits
  if (!v || *v < 1 || *v > 100000 || text.find_first_not_of("0123456789") != std::string::npos) {
    return Error{where + ": expected a pod count from 1 to 100000, got \"" + std::string(text) +
                 "\""};
  }
  return static_cast<int>(*v);
}

Result<int64_t> GpuAmount(std::string_view text, const std::string& where) {
  auto v = ParseGpuPerPod(text);
  if (!v.ok()) return Error{where + ": " + v.error().message};
  return *v;
}

Result<Runtime> ReadRuntime(const doc::Node& n, const std::string& where) {
  Runtime r;
  if (n.IsScalar()) {
    auto v = Span(n, where);
    if (!v.ok()) return v.error();
    r.a = static_cast<double>(*v);
    return r;
  }
  const std::string dist(n["distribution"].Scalar());
  const auto span = [&](const char* key) -> Result<double> {
    auto v = Span(n[key], where + "." + key);
    if (!v.ok()) return v.error();
    return static_cast<double>(*v);
  };
  Result<double> a = 0.0, b = 0.0;
  if (dist == "exponential") {
    r.shape = Shape::kExponential;
    a = span("mean");
  } else if (dist == "lognormal") {
    r.shape = Shape::kLogNormal;
    a = span("median");
    b = Number(n["sigma"], where + ".sigma");
  } else if (dist == "uniform") {
    r.shape = Shape::kUniform;
    a = span("min");
    b = span("max");
  } else {
    return Error{where + ".distribution: expected exponential, lognormal or uniform, got \"" +
                 dist + "\""};
  }
  if (!a.ok()) return a.error();
  if (!b.ok()) return b.error();
  r.a = *a;
  r.b = *b;
  if (n["max"].IsDefined()) {
    auto m = Span(n["max"], where + ".max");
    if (!m.ok()) return m.error();
    r.max = *m;
  }
  return r;
}

std::optional<Error> ReadSizes(const doc::Node& n, const std::string& at, QueueSpec& q) {
  q.pods = Choice<int>{{{1, 1.0}}, 1.0};
  if (n["pods"].IsDefined()) {
    auto pods = ReadChoiceOrValue<int>(n["pods"], at + ".pods", PodCount);
    if (!pods.ok()) return pods.error();
    q.pods = std::move(pods.value());
  }
  if (!n["gpu"].IsDefined()) return Error{at + ".gpu: missing"};
  auto gpu = ReadChoiceOrValue<int64_t>(n["gpu"], at + ".gpu", GpuAmount);
  if (!gpu.ok()) return gpu.error();
  q.gpu = std::move(gpu.value());
  if (n["minMember"].IsDefined()) {
    auto m = PodCount(n["minMember"].Scalar(), at + ".minMember");
    if (!m.ok()) return m.error();
    q.min_member = *m;
  }
  return std::nullopt;
}

Result<QueueSpec> ReadQueue(const doc::Node& n, const std::string& at) {
  QueueSpec q;
  q.queue = n["queue"].Scalar();
  if (q.queue.empty()) return Error{at + ".queue: missing"};
  q.ns = n["namespace"].IsDefined() ? std::string(n["namespace"].Scalar()) : q.queue;
  q.priority_class = n["priorityClass"].Scalar();
  q.cpu = n["cpu"].Scalar();
  q.memory = n["memory"].Scalar();
  auto rate = Number(n["arrivalsPerHour"], at + ".arrivalsPerHour");
  if (!rate.ok()) return rate.error();
  q.per_hour = *rate;
  if (auto e = ReadSizes(n, at, q)) return *e;
  if (!n["runtime"].IsDefined()) return Error{at + ".runtime: missing"};
  auto rt = ReadRuntime(n["runtime"], at + ".runtime");
  if (!rt.ok()) return rt.error();
  q.runtime = *rt;
  return q;
}

// One queue's jobs: Poisson arrivals over [0, horizon).
void DrawQueue(const QueueSpec& q, int64_t horizon, Rng& rng, std::vector<TraceJob>& out) {
  if (q.per_hour <= 0) return;
  const double mean_gap = 3600.0 / q.per_hour;
  double t = rng.Exponential(mean_gap);
  for (int n = 0; t < static_cast<double>(horizon); ++n, t += rng.Exponential(mean_gap)) {
    TraceJob j;
    j.name = q.queue + "-" + std::to_string(n);
    j.submit = static_cast<int64_t>(t);
    j.ns = q.ns;
    j.queue = q.queue;
    j.priority_class = q.priority_class;
    j.pods = q.pods.Draw(rng);
    j.gpu_milli = q.gpu.Draw(rng);
    j.min_member = std::min(q.min_member.value_or(j.pods), j.pods);
    j.duration = q.runtime.Draw(rng);
    j.cpu = q.cpu;
    j.memory = q.memory;
    out.push_back(std::move(j));
  }
}

}  // namespace

Result<std::vector<TraceJob>> GenerateTrace(std::string_view yaml, const std::string& source,
                                            uint64_t seed) {
  auto d = doc::ParseYaml(yaml);
  if (!d.ok()) return Error{source + ": " + d.error().message};
  const auto roots = d->Roots();
  if (roots.empty() || !roots.front().IsMap()) return Error{source + ": expected a YAML map"};
  const doc::Node root = roots.front();
  auto horizon = Span(root["duration"], source + ": duration");
  if (!horizon.ok()) return horizon.error();
  const doc::Node queues = root["queues"];
  if (!queues.IsSequence() || queues.size() == 0) {
    return Error{source + ": queues: expected a list of queues"};
  }
  std::vector<QueueSpec> specs;
  for (size_t i = 0; i < queues.size(); ++i) {
    auto q = ReadQueue(queues[i], source + ": queues[" + std::to_string(i) + "]");
    if (!q.ok()) return q.error();
    specs.push_back(std::move(q.value()));
  }
  std::vector<TraceJob> jobs;
  // Each queue has its own stream (seeded from the seed and its position), so adding a queue
  // does not change the others' jobs.
  for (size_t i = 0; i < specs.size(); ++i) {
    Rng rng(seed * 1000003ULL + i);
    DrawQueue(specs[i], *horizon, rng, jobs);
  }
  SortJobs(jobs);
  return jobs;
}

}  // namespace kai::whatif
