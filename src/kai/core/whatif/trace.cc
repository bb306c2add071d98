#include "kai/core/whatif/trace.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "kai/core/resource/quantity.h"
#include "kai/core/util/time.h"

namespace kai::whatif {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::vector<std::string_view> SplitFields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i) {
    if (i == line.size() || line[i] == ',') {
      out.push_back(Trim(line.substr(start, i - start)));
      start = i + 1;
    }
  }
  return out;
}

const std::set<std::string, std::less<>>& KnownColumns() {
  static const std::set<std::string, std::less<>> known = {
      "name", "submit", "duration", "namespace",  "queue",    "priority_class", "pods",
      "gpu",  "cpu",    "memory",   "min_member", "topology", "required_level", "preferred_level"};
  return known;
}

struct Header {
  std::map<std::string, size_t, std::less<>> column;
  size_t count = 0;
};

Result<Header> ParseHeader(std::string_view line, const std::string& where) {
  Header h;
  const auto fields = SplitFields(line);
  h.count = fields.size();
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string col(fields[i]);
    const std::string at = where + ":" + std::to_string(i + 1);
    if (!KnownColumns().count(col)) return Error{at + ": unknown column \"" + col + "\""};
    if (!h.column.emplace(col, i).second) return Error{at + ": column \"" + col + "\" repeated"};
  }
  for (const char* need : {"submit", "duration", "queue", "gpu"}) {
    if (!h.column.count(need)) return Error{where + ": the header has no \"" + need + "\" column"};
  }
  return h;
}

// The fields of one data line by column name, with the place of each for errors.
class Row {
 public:
  Row(const Header& h, std::vector<std::string_view> f, std::string where)
      : h_(h), f_(std::move(f)), where_(std::move(where)) {}
  std::string_view Get(std::string_view col) const {
    auto it = h_.column.find(col);
    return it == h_.column.end() ? std::string_view() : f_[it->second];
  }
  std::string At(std::string_view col) const {
    auto it = h_.column.find(col);
    const size_t c = it == h_.column.end() ? 0 : it->second + 1;
    return where_ + ":" + std::to_string(c) + " (" + std::string(col) + ")";
  }

 private:
  const Header& h_;
  std::vector<std::string_view> f_;
  std::string where_;
};

std::optional<Error> ReadSpan(const Row& r, std::string_view col, int64_t& out) {
  const auto v = ParseSpan(r.Get(col));
  if (!v || *v < 0) {
    return Error{r.At(col) + ": expected a duration such as 90, 30m, 2h or 1d, got \"" +
                 std::string(r.Get(col)) + "\""};
  }
  out = *v;
  return std::nullopt;
}

std::optional<Error> ReadCount(const Row& r, std::string_view col, int& out, int fallback) {
  const std::string_view text = r.Get(col);
  if (text.empty()) {
    out = fallback;
    return std::nullopt;
  }
  const auto v = ParseInt(text);
  if (!v || *v < 1 || *v > 100000) {
    return Error{r.At(col) + ": expected a whole number from 1 to 100000, got \"" +
                 std::string(text) + "\""};
  }
  out = static_cast<int>(*v);
  return std::nullopt;
}

}  // namespace

// A GPU amount per pod: whole GPUs, or a fraction below one (exact, in milli-GPU).
Result<int64_t> ParseGpuPerPod(std::string_view text) {
  auto v = ParseQuantity(text, 3);
  if (!v.ok()) return Error{v.error().message};
  if (*v < 0) return Error{"must not be negative"};
  if (*v > 1000 && *v % 1000 != 0) {
    return Error{"a pod asks for whole GPUs or a fraction below one, not \"" + std::string(text) +
                 "\""};
  }
  return *v;
}

namespace {

std::optional<Error> ReadResources(const Row& r, TraceJob& j) {
  auto gpu = ParseGpuPerPod(r.Get("gpu"));
  if (!gpu.ok()) return Error{r.At("gpu") + ": " + gpu.error().message};
  j.gpu_milli = *gpu;
  for (const char* col : {"cpu", "memory"}) {
    const std::string_view text = r.Get(col);
    if (text.empty()) continue;
    if (auto q = ParseQuantity(text, 3); !q.ok() || *q < 0) {
      return Error{r.At(col) + ": expected a Kubernetes quantity, got \"" + std::string(text) +
                   "\""};
    }
  }
  j.cpu = r.Get("cpu");
  j.memory = r.Get("memory");
  return std::nullopt;
}

std::optional<Error> ReadNames(const Row& r, TraceJob& j) {
  j.queue = r.Get("queue");
  if (j.queue.empty()) return Error{r.At("queue") + ": missing"};
  j.ns = r.Get("namespace");
  if (j.ns.empty()) j.ns = j.queue;
  if (!r.Get("name").empty()) j.name = r.Get("name");
  j.priority_class = r.Get("priority_class");
  j.topology = r.Get("topology");
  j.required_level = r.Get("required_level");
  j.preferred_level = r.Get("preferred_level");
  if (j.topology.empty() && (!j.required_level.empty() || !j.preferred_level.empty())) {
    return Error{r.At("topology") + ": a level is given but no topology"};
  }
  return std::nullopt;
}

Result<TraceJob> ParseRow(const Row& r, int line) {
  TraceJob j;
  j.line = line;
  j.name = "job-" + std::to_string(line);
  if (auto e = ReadSpan(r, "submit", j.submit)) return *e;
  if (auto e = ReadSpan(r, "duration", j.duration)) return *e;
  if (j.duration == 0) return Error{r.At("duration") + ": must be positive"};
  if (auto e = ReadNames(r, j)) return *e;
  if (auto e = ReadCount(r, "pods", j.pods, 1)) return *e;
  if (auto e = ReadCount(r, "min_member", j.min_member, j.pods)) return *e;
  if (j.min_member > j.pods) {
    return Error{r.At("min_member") + ": " + std::to_string(j.min_member) + " exceeds pods (" +
                 std::to_string(j.pods) + ")"};
  }
  if (auto e = ReadResources(r, j)) return *e;
  return j;
}

std::optional<Error> CheckUniqueNames(const std::vector<TraceJob>& jobs,
                                      const std::string& source) {
  std::map<std::pair<std::string, std::string>, int> seen;
  for (const TraceJob& j : jobs) {
    auto [it, fresh] = seen.emplace(std::make_pair(j.ns, j.name), j.line);
    if (!fresh) {
      return Error{source + ":" + std::to_string(j.line) + ": job " + j.ns + "/" + j.name +
                   " repeats line " + std::to_string(it->second)};
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> ParseSpan(std::string_view text) {
  text = Trim(text);
  if (text.empty()) return std::nullopt;
  if (auto v = ParseInt(text)) return v;
  int64_t days = 0;
  if (const size_t d = text.find('d'); d != std::string_view::npos) {
    const auto n = ParseInt(text.substr(0, d));
    if (!n || *n < 0) return std::nullopt;
    days = *n;
    text.remove_prefix(d + 1);
    if (text.empty()) return days * 86400;
  }
  const auto rest = ParseGoDuration(text);
  if (!rest) return std::nullopt;
  return days * 86400 + *rest;
}

void SortJobs(std::vector<TraceJob>& jobs) {
  std::sort(jobs.begin(), jobs.end(), [](const TraceJob& a, const TraceJob& b) {
    return std::tie(a.submit, a.line, a.ns, a.name) < std::tie(b.submit, b.line, b.ns, b.name);
  });
}

Result<std::vector<TraceJob>> ParseTraceCsv(std::string_view text, const std::string& source) {
  std::optional<Header> header;
  std::vector<TraceJob> jobs;
  int line = 0;
  for (size_t pos = 0; pos <= text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view raw = Trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++line;
    if (raw.empty() || raw.front() == '#') continue;
    const std::string where = source + ":" + std::to_string(line);
    if (!header) {
      auto h = ParseHeader(raw, where);
      if (!h.ok()) return h.error();
      header = std::move(h.value());
      continue;
    }
    auto fields = SplitFields(raw);
    if (fields.size() != header->count) {
      return Error{where + ": " + std::to_string(fields.size()) + " fields, the header has " +
                   std::to_string(header->count)};
    }
    auto job = ParseRow(Row(*header, std::move(fields), where), line);
    if (!job.ok()) return job.error();
    jobs.push_back(std::move(job.value()));
  }
  if (!header) return Error{source + ": no header line (and no jobs)"};
  if (auto e = CheckUniqueNames(jobs, source)) return *e;
  SortJobs(jobs);
  return jobs;
}

Result<std::vector<TraceJob>> ParseTrace(std::string_view text, const std::string& source,
                                         uint64_t seed) {
  // A generator spec is a YAML map with `queues:` at the top level.
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view l = text.substr(pos, end - pos);
    if (l.rfind("queues:", 0) == 0) return GenerateTrace(text, source, seed);
    pos = end + 1;
  }
  return ParseTraceCsv(text, source);
}

}  // namespace kai::whatif
