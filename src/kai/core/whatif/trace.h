#pragma once
// The jobs a what-if run submits (docs/whatif.md): a CSV trace, one job per line, or a generator
// spec (YAML) that draws jobs per queue from seeded distributions. Pure: the front end reads the
// files and hands their text here.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/util/result.h"

namespace kai::whatif {

struct TraceJob {
  std::string name;      // unique within the trace
  int64_t submit = 0;    // seconds after the simulation's start
  int64_t duration = 0;  // seconds of uninterrupted runtime the job needs
  std::string ns, queue, priority_class;
  int pods = 1;
  int64_t gpu_milli = 0;    // per pod: a multiple of 1000 is whole GPUs, below 1000 a gpu-fraction
  std::string cpu, memory;  // per pod, Kubernetes quantities as written ("" = none)
  int min_member = 0;       // 0: every pod (a full gang)
  std::string topology, required_level, preferred_level;  // optional topology constraint
  int line = 0;                                           // where it came from (0: generated)
  friend bool operator==(const TraceJob&, const TraceJob&) = default;
};

// A GPU amount per pod: whole GPUs ("2") or a fraction below one ("0.5"), exactly, in milli-GPU.
Result<int64_t> ParseGpuPerPod(std::string_view text);

// A span of time: plain seconds ("90"), a Go duration ("1h30m"), or days first ("7d", "1d12h").
std::optional<int64_t> ParseSpan(std::string_view text);

// A CSV trace. The first non-comment line is the header naming the columns, in any order:
//   required: submit, duration, queue, gpu
//   optional: name, namespace, priority_class, pods, cpu, memory, min_member, topology,
//             required_level, preferred_level
// Lines starting with '#' and blank lines are skipped. Errors name source:line:column and the
// column's name. Jobs come back sorted by submit time, then line.
Result<std::vector<TraceJob>> ParseTraceCsv(std::string_view text, const std::string& source);

// A generator spec (YAML, docs/whatif.md): per queue, Poisson arrivals at a rate, and discrete
// weighted choices of pods and GPUs per pod, and a duration distribution. The same spec and seed
// give the same jobs.
Result<std::vector<TraceJob>> GenerateTrace(std::string_view yaml, const std::string& source,
                                            uint64_t seed);

// The trace of a file's text: a generator spec when it is YAML with a `queues` key ("generator:
// true" is not needed), else CSV.
Result<std::vector<TraceJob>> ParseTrace(std::string_view text, const std::string& source,
                                         uint64_t seed);

// Orders jobs by submit time, then line, then name (a total order).
void SortJobs(std::vector<TraceJob>& jobs);

}  // namespace kai::whatif
