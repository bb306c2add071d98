#include "kai/core/usage/history_format.h"

#include <charconv>
#include <cstdio>
#include <map>
#include <optional>
#include <vector>

namespace kai::usage {
namespace {

constexpr std::string_view kMagic = "kai-usage-history";

std::string IntervalFields(const Interval& in) {
  return std::to_string(in.start) + " " + std::to_string(in.duration_seconds) + " " +
         std::to_string(in.amount.milli_cpu) + " " + std::to_string(in.amount.memory) + " " +
         std::to_string(in.amount.milli_gpu);
}

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    const size_t j = line.find(' ', i);
    out.push_back(line.substr(i, j == std::string_view::npos ? line.npos : j - i));
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
  return out;
}

Result<int64_t> Number(std::string_view word, bool non_negative, const std::string& where) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
  if (ec != std::errc() || end != word.data() + word.size() || word.empty()) {
    return Error{where + ": expected an integer, got \"" + std::string(word) + "\""};
  }
  if (non_negative && v < 0) return Error{where + ": must not be negative"};
  return v;
}

// Reads `count` numbers from words[first...] into `out`.
std::optional<Error> Numbers(const std::vector<std::string_view>& words, size_t first,
                             std::vector<int64_t>& out, const std::string& where) {
  for (size_t i = first; i < words.size(); ++i) {
    auto n = Number(words[i], i != first, where + " field " + std::to_string(i + 1));
    if (!n.ok()) return n.error();
    out.push_back(*n);
  }
  return std::nullopt;
}

Result<Interval> ReadInterval(const std::vector<std::string_view>& words, size_t first,
                              const std::string& where) {
  if (words.size() != first + 5) {
    return Error{where + ": expected " + std::to_string(first + 5) + " fields, got " +
                 std::to_string(words.size())};
  }
  std::vector<int64_t> v;
  if (auto e = Numbers(words, first, v, where)) return *e;
  Interval in;
  in.start = v[0];
  in.duration_seconds = v[1];
  in.amount.milli_cpu = v[2];
  in.amount.memory = v[3];
  in.amount.milli_gpu = v[4];
  return in;
}

struct Header {
  int64_t version = 0, records = 0;
  uint64_t checksum = 0;
};

Result<Header> ReadHeader(std::string_view line, const std::string& source) {
  const auto w = Words(line);
  if (w.empty() || w[0] != kMagic) return Error{source + ": not a kai usage history (no header)"};
  if (w.size() >= 2) {
    auto v = Number(w[1], true, source + ": header version");
    if (v.ok() && *v != kHistoryFormatVersion) {
      return Error{source + ": format version " + std::to_string(*v) + ", expected " +
                   std::to_string(kHistoryFormatVersion)};
    }
  }
  if (w.size() != 4 || w[3].size() != 16) return Error{source + ": malformed header"};
  auto records = Number(w[2], true, source + ": header record count");
  if (!records.ok()) return records.error();
  Header h{kHistoryFormatVersion, *records, 0};
  const auto [end, ec] = std::from_chars(w[3].data(), w[3].data() + 16, h.checksum, 16);
  if (ec != std::errc() || end != w[3].data() + 16) return Error{source + ": malformed checksum"};
  return h;
}

// An open marker follows its series' intervals.
std::optional<Error> ReadOpen(const std::vector<std::string_view>& w, const std::string& where,
                              std::map<std::string, Series>& queues, Series& capacity) {
  const bool cap = w[0] == "open-capacity";
  if (w.size() != (cap ? 1u : 2u)) return Error{where + ": wrong field count"};
  Series* s = &capacity;
  if (!cap) {
    auto it = queues.find(std::string(w[1]));
    if (it == queues.end()) return Error{where + ": open marker of a queue with no interval"};
    s = &it->second;
  }
  if (s->intervals.empty()) return Error{where + ": open marker of a series with no interval"};
  s->open = true;
  return std::nullopt;
}

std::optional<Error> ReadRecord(std::string_view line, const std::string& where, HistoryFile& f,
                                std::map<std::string, Series>& queues, Series& capacity,
                                UnixSeconds& last) {
  const auto w = Words(line);
  const std::string_view kind = w.empty() ? "" : w[0];
  if (kind == "open" || kind == "open-capacity") return ReadOpen(w, where, queues, capacity);
  if (kind == "sample" || kind == "params") {
    std::vector<int64_t> v;
    if (w.size() != (kind == "sample" ? 2u : 3u)) return Error{where + ": wrong field count"};
    if (auto e = Numbers(w, 1, v, where)) return e;
    if (kind == "sample") last = v[0];
    if (kind == "params") f.params = {.half_life_seconds = v[0], .window_seconds = v[1]};
    return std::nullopt;
  }
  const bool queue = kind == "queue";
  if (!queue && kind != "capacity") {
    return Error{where + ": unknown record \"" + std::string(kind) + "\""};
  }
  if (queue && (w.size() < 2 || w[1].empty())) return Error{where + ": missing queue name"};
  auto in = ReadInterval(w, queue ? 2 : 1, where);
  if (!in.ok()) return in.error();
  if (queue) {
    queues[std::string(w[1])].intervals.push_back(*in);
  } else {
    capacity.intervals.push_back(*in);
  }
  return std::nullopt;
}

}  // namespace

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string EncodeHistory(const UsageHistory& history, const UsageParams& params) {
  std::string body = "sample " + std::to_string(history.last_sample()) + "\nparams " +
                     std::to_string(params.half_life_seconds) + " " +
                     std::to_string(params.window_seconds) + "\n";
  size_t records = 2;
  const auto add = [&](const std::string& line) {
    body += line + "\n";
    ++records;
  };
  for (const Interval& in : history.capacity().intervals) add("capacity " + IntervalFields(in));
  if (history.capacity().open) add("open-capacity");
  for (const auto& [queue, series] : history.allocations()) {
    for (const Interval& in : series.intervals) add("queue " + queue + " " + IntervalFields(in));
    if (series.open) add("open " + queue);
  }
  char sum[17];
  std::snprintf(sum, sizeof sum, "%016llx", static_cast<unsigned long long>(Fnv1a64(body)));
  return std::string(kMagic) + " " + std::to_string(kHistoryFormatVersion) + " " +
         std::to_string(records) + " " + sum + "\n" + body;
}

Result<HistoryFile> DecodeHistory(std::string_view text, const std::string& source,
                                  HistoryLimits limits) {
  if (text.empty()) return Error{source + ": empty file"};
  const size_t eol = text.find('\n');
  auto header = ReadHeader(text.substr(0, eol), source);
  if (!header.ok()) return header.error();
  if (eol == std::string_view::npos) return Error{source + ": truncated after the header"};
  const std::string_view body = text.substr(eol + 1);
  if (Fnv1a64(body) != header->checksum) {
    return Error{source + ": checksum mismatch (the file is truncated or damaged)"};
  }
  HistoryFile f{UsageHistory(limits), {}};
  std::map<std::string, Series> queues;
  Series capacity;
  UnixSeconds last = -1;
  int64_t n = 0;
  for (size_t i = 0; i < body.size();) {
    const size_t j = body.find('\n', i);
    if (j == std::string_view::npos) return Error{source + ": last record not terminated"};
    const std::string where = source + ": record " + std::to_string(++n);
    if (auto e = ReadRecord(body.substr(i, j - i), where, f, queues, capacity, last)) return *e;
    i = j + 1;
  }
  if (n != header->records) {
    return Error{source + ": " + std::to_string(n) + " records, the header says " +
                 std::to_string(header->records)};
  }
  f.history.Restore(last, std::move(queues), std::move(capacity));
  return f;
}

}  // namespace kai::usage
