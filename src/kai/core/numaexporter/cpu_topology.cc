#include "kai/core/numaexporter/cpu_topology.h"

#include <charconv>

namespace kai::numaexporter {
namespace {

std::string_view Trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// A non-negative decimal CPU id, the whole of `s`.
std::optional<int64_t> CpuId(std::string_view s) {
  s = Trim(s);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// Appends the ids of one token ("7" or "2-5") to `out`, within `max_cpus` in all.
Status AddToken(std::string_view token, size_t max_cpus, std::vector<int64_t>& out) {
  const size_t dash = token.find('-');
  const std::optional<int64_t> lo = CpuId(token.substr(0, dash));
  const std::optional<int64_t> hi =
      dash == std::string_view::npos ? lo : CpuId(token.substr(dash + 1));
  if (!lo || !hi) return Error{"invalid CPU list token \"" + std::string(token) + "\""};
  if (*hi < *lo)
    return Error{"invalid CPU range \"" + std::string(token) + "\" (end before start)"};
  const uint64_t count = static_cast<uint64_t>(*hi - *lo) + 1;
  if (count > max_cpus - out.size()) {
    return Error{"CPU list names more than " + std::to_string(max_cpus) + " CPUs (at \"" +
                 std::string(token) + "\")"};
  }
  for (int64_t cpu = *lo; cpu <= *hi; ++cpu) out.push_back(cpu);
  return Ok();
}

}  // namespace

Result<std::vector<int64_t>> ParseCpuList(std::string_view text, size_t max_cpus) {
  std::vector<int64_t> out;
  std::string_view rest = Trim(text);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view token = Trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (token.empty()) continue;
    if (Status s = AddToken(token, max_cpus, out); !s.ok()) return s.error();
  }
  return out;
}

std::optional<int32_t> NumaNodeOfEntry(std::string_view name) {
  constexpr std::string_view kPrefix = "node";
  if (name.size() <= kPrefix.size() || name.substr(0, kPrefix.size()) != kPrefix) {
    return std::nullopt;
  }
  const std::string_view digits = name.substr(kPrefix.size());
  int32_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size() || v < 0 || v > kMaxNumaNode) {
    return std::nullopt;
  }
  return v;
}

Result<CpuToNuma> BuildCpuToNuma(const std::vector<NodeCpuList>& nodes) {
  CpuToNuma out;
  size_t total = 0;
  for (const NodeCpuList& n : nodes) {
    auto cpus = ParseCpuList(n.text, kMaxCpus - total);
    if (!cpus.ok()) return Error{"parsing " + n.source + ": " + cpus.error().message};
    total += cpus->size();
    for (int64_t cpu : *cpus) out[cpu] = n.node;
  }
  if (out.empty()) return Error{"no CPU is listed under any NUMA node"};
  return out;
}

}  // namespace kai::numaexporter
