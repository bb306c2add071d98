#include "kai/core/podgrouper/default_grouper.h"

#include <array>
#include <cctype>
#include <set>

#include "kai/core/podgrouper/go_duration.h"
#include "kai/core/podgrouper/keys.h"

namespace kai::podgrouper {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Go's strconv syntax for a base-10 integer: [+-]digits.
std::optional<int64_t> ParseDecimal(std::string_view s, int64_t lo, int64_t hi) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  __int128 v = 0;
  for (char c : s) {
    if (!IsDigit(c)) return std::nullopt;
    v = v * 10 + (c - '0');
    if (v > static_cast<__int128>(hi) + 1) return std::nullopt;
  }
  if (negative) v = -v;
  if (v < lo || v > hi) return std::nullopt;
  return static_cast<int64_t>(v);
}

// ---- gopkg.in/yaml.v3's choice of scalar style for a string ----

// n digits (between lo and hi of them) at s[i]; advances i.
bool Digits(std::string_view s, size_t& i, size_t lo, size_t hi) {
  size_t n = 0;
  while (i < s.size() && IsDigit(s[i]) && n < hi) ++i, ++n;
  return n >= lo;
}

// yaml.v3's timestamps: 2006-1-2, or that followed by [Tt ]15:4:5[.999999999][Z07:00].
bool IsTimestamp(std::string_view s) {
  size_t i = 0;
  if (!Digits(s, i, 4, 4) || i == s.size() || IsDigit(s[i]) || s[i] != '-') return false;
  ++i;
  if (!Digits(s, i, 1, 2) || i == s.size() || s[i] != '-') return false;
  ++i;
  if (!Digits(s, i, 1, 2)) return false;
  if (i == s.size()) return true;
  const bool zoned = s[i] == 'T' || s[i] == 't';
  if (!zoned && s[i] != ' ') return false;
  ++i;
  for (int part = 0; part < 3; ++part) {
    if (part > 0 && (i == s.size() || s[i++] != ':')) return false;
    if (!Digits(s, i, 1, 2)) return false;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!Digits(s, i, 1, 9)) return false;
  }
  if (i == s.size()) return true;
  if (!zoned) return false;
  if (s.substr(i) == "Z") return true;
  if (s[i] != '+' && s[i] != '-') return false;
  ++i;
  if (!Digits(s, i, 2, 2) || i == s.size() || s[i++] != ':' || !Digits(s, i, 2, 2)) return false;
  return i == s.size();
}

// The words yaml.v3 reads as null, bool, float or merge key, and YAML 1.1's booleans.
bool IsYamlKeyword(std::string_view s) {
  static constexpr std::array<std::string_view, 40> kWords = {
      "",      "~",     "null",  "Null", "NULL", "true", "True", "TRUE",  "false", "False",
      "FALSE", ".nan",  ".NaN",  ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF",
      "-.inf", "-.Inf", "-.INF", "<<",   "y",    "Y",    "n",    "N",     "yes",   "Yes",
      "YES",   "no",    "No",    "NO",   "on",   "On",   "ON",   "off",   "Off",   "OFF"};
  for (std::string_view k : kWords) {
    if (s == k) return true;
  }
  return false;
}

template <class Pred>
bool AllOf(std::string_view t, Pred pred) {
  if (t.empty()) return false;
  for (char c : t) {
    if (!pred(c)) return false;
  }
  return true;
}

// What strconv.ParseInt(s, 0, 64) or yaml.v3's float pattern reads, underscores dropped, or a
// base-60 number (1:20); `p` has no sign.
bool IsYamlNumber(std::string_view p) {
  if (p.size() > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    return AllOf(p.substr(2), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
  }
  if (p.size() > 2 && p[0] == '0' && (p[1] == 'o' || p[1] == 'O' || p[1] == 'b' || p[1] == 'B')) {
    return AllOf(p.substr(2), [](char c) { return c >= '0' && c <= '7'; });
  }
  size_t i = 0, whole = 0, frac = 0;
  for (; i < p.size() && IsDigit(p[i]); ++i) ++whole;
  if (i < p.size() && p[i] == '.') {
    for (++i; i < p.size() && IsDigit(p[i]); ++i) ++frac;
  }
  if (whole == 0 && frac == 0) return false;
  if (i < p.size() && (p[i] == 'e' || p[i] == 'E')) {
    ++i;
    if (i < p.size() && (p[i] == '+' || p[i] == '-')) ++i;
    const size_t start = i;
    while (i < p.size() && IsDigit(p[i])) ++i;
    if (i == start) return false;
  }
  if (i == p.size()) return true;
  return frac == 0 && p[i] == ':' &&
         AllOf(p.substr(i), [](char c) { return IsDigit(c) || c == ':' || c == '.'; });
}

// Strings yaml.v3 would read back as another type (null, bool, number, timestamp) are written
// double-quoted.
bool ResolvesToNonString(std::string_view s) {
  if (IsYamlKeyword(s)) return true;
  if (!(IsDigit(s[0]) || s[0] == '+' || s[0] == '-' || s[0] == '.')) return false;
  if (IsTimestamp(s)) return true;
  std::string plain;
  for (char c : s) {
    if (c != '_') plain += c;
  }
  std::string_view p = plain;
  if (!p.empty() && (p[0] == '+' || p[0] == '-')) p.remove_prefix(1);
  return !p.empty() && IsYamlNumber(p);
}

// The emitter's plain-scalar analysis (block context): indicators that forbid a plain scalar.
bool PlainAllowed(std::string_view s) {
  if (s.front() == ' ' || s.back() == ' ') return false;
  static constexpr std::string_view kFirst = "#,[]{}&*!|>'\"%@`";
  if (kFirst.find(s.front()) != std::string_view::npos) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool next_space = i + 1 == s.size() || s[i + 1] == ' ';
    if ((s[i] == ':' || (i == 0 && (s[i] == '?' || s[i] == '-'))) && next_space) return false;
    if (s[i] == '#' && i > 0 && s[i - 1] == ' ') return false;
    if (static_cast<unsigned char>(s[i]) < 0x20) return false;
  }
  return true;
}

std::string YamlString(std::string_view s) {
  if (ResolvesToNonString(s)) {
    std::string out = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out + "\"";
  }
  if (PlainAllowed(s)) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

// The candidate priority class of one owner: its label, else the pod's label, else the pod's
// spec (KAI's calcPodGroupPriorityClass; a present label wins even when empty).
std::string PriorityClassCandidate(const Object& owner, const Object& pod) {
  if (const std::string* v = owner.Label(keys::kPriorityClassLabel)) return *v;
  if (const std::string* v = pod.Label(keys::kPriorityClassLabel)) return *v;
  return ScalarAt(pod, {"spec", "priorityClassName"});
}

bool ValidPreemptibility(std::string_view v) {
  return v.empty() || v == "preemptible" || v == "non-preemptible";
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The first valid duration annotation `key` of the owners, then of the pod (KAI's
// calcPodGroupPreemptionDelay / calcStalenessGracePeriod; invalid values are skipped).
std::optional<int64_t> DurationAnnotation(const GroupingEnv& env,
                                          std::span<const Object* const> owners, const Object& pod,
                                          std::string_view key, bool non_negative) {
  auto read = [&](const Object& o) -> std::optional<int64_t> {
    const std::string* v = o.Annotation(key);
    if (v == nullptr) return std::nullopt;
    const auto d = ParseGoDurationNanos(*v);
    if (d && (!non_negative || *d >= 0)) return d;
    env.Note(o.Ref() + ": ignoring invalid " + std::string(key) + " annotation \"" + *v + "\"");
    return std::nullopt;
  };
  for (const Object* o : owners) {
    if (auto d = read(*o)) return d;
  }
  return read(pod);
}

}  // namespace

std::optional<int> ParseInt32(std::string_view s) {
  const auto v = ParseDecimal(s, INT32_MIN, INT32_MAX);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

std::optional<int64_t> Atoi(std::string_view s) { return ParseDecimal(s, INT64_MIN, INT64_MAX); }

OwnerReference RefTo(const Object& o) { return {o.api_version, o.kind, o.name, o.uid}; }

Result<std::optional<int>> MinMemberAnnotation(const Object& o, std::string_view key) {
  const std::string* v = o.Annotation(key);
  if (v == nullptr) return std::optional<int>();
  const auto min = ParseInt32(*v);
  if (!min) {
    return FieldError(o, "metadata.annotations." + std::string(key),
                      "invalid min-member annotation value \"" + *v + "\"");
  }
  return std::optional<int>(*min);
}

Result<bool> GroupedOnePerPod(const GroupingEnv& env, const Object& owner,
                              const std::vector<Object>& pods) {
  std::set<std::string> groups;
  for (const Object& pod : pods) {
    const std::string* pg = pod.Annotation(keys::kPodGroupAnnotation);
    if (pg == nullptr) continue;
    if (!groups.insert(*pg).second) return false;  // two pods in one PodGroup: grouped as a whole
  }
  if (groups.size() > 1) return true;
  if (groups.empty()) return false;
  const std::string& name = *groups.begin();
  const Fetched f = env.reader().Get({"scheduling.run.ai/v2alpha2", "PodGroup", owner.ns, name});
  if (f.status == FetchStatus::kNotFound) return false;
  if (f.status != FetchStatus::kFound) {
    return Error{"failed to get PodGroup " + owner.ns + "/" + name + ", the only one of " +
                 owner.Ref() + ": " + f.message};
  }
  if (f.object.owner_refs.empty()) return FieldError(f.object, "metadata.ownerReferences", "empty");
  const std::string& owner_kind = f.object.owner_refs.front().kind;
  if (owner_kind == owner.kind) return false;
  if (owner_kind == "Pod") return true;
  return FieldError(f.object, "metadata.ownerReferences[0]", "unexpected owner kind " + owner_kind);
}

std::string PodGroupName(const Object& o) { return "pg-" + o.name + "-" + o.uid; }

Labels PodGroupLabels(const Object& top, const Object& pod) {
  Labels out = top.labels;
  if (!out.contains(keys::kUserLabel)) {
    if (const std::string* v = pod.Label(keys::kUserLabel)) {
      out.insert_or_assign(InternedString(keys::kUserLabel), *v);
    }
  }
  return out;
}

Labels PodGroupAnnotations(const Object& top, const Object& pod) {
  Labels out;
  if (const std::string* v = pod.Annotation(keys::kUserLabel)) {
    out.insert_or_assign(InternedString(keys::kUserLabel), *v);
  }
  out.insert_or_assign(InternedString(keys::kTopOwnerMetadataAnnotation),
                       TopOwnerMetadataYaml(top));
  for (const auto& [k, v] : top.annotations) out.insert_or_assign(k, v);
  return out;
}

std::string PodGroupQueue(const Object& top, const Object& pod, const GrouperConfig& config) {
  if (const std::string* v = top.Label(config.queue_label_key)) return *v;
  if (const std::string* v = pod.Label(config.queue_label_key)) return *v;
  std::string project;
  if (const std::string* v = top.Label(keys::kProjectLabel)) {
    project = *v;
  } else if (const std::string* v = pod.Label(keys::kProjectLabel)) {
    project = *v;
  }
  if (!project.empty()) {
    if (const std::string* pool = pod.Label(config.node_pool_label_key)) {
      return project + "-" + *pool;
    }
    return project;
  }
  return std::string(keys::kDefaultQueueName);
}

std::string ResolvePriorityClass(const GroupingEnv& env, std::span<const Object* const> owners,
                                 const Object& pod, std::string_view fallback) {
  for (const Object* owner : owners) {
    const std::string candidate = PriorityClassCandidate(*owner, pod);
    if (env.PriorityClassExists(candidate)) return candidate;
    if (!candidate.empty()) {
      env.Note("priority class \"" + candidate + "\" of " + owner->Ref() + " (or of its pod) " +
               "does not exist");
    }
  }
  const TypeDefaults& defaults = env.Defaults();
  if (!defaults.empty()) {
    for (const Object* owner : owners) {
      const TypeDefault* d = DefaultsForKind(defaults, owner->GroupKind(), owner->kind);
      if (d != nullptr && env.PriorityClassExists(d->priority_name)) return d->priority_name;
    }
  }
  return std::string(fallback);
}

std::string ResolvePreemptibility(const GroupingEnv& env, std::span<const Object* const> owners,
                                  const Object& pod) {
  auto label = [&](const Object& o) -> std::optional<std::string> {
    const std::string* v = o.Label(keys::kPreemptibilityLabel);
    if (v == nullptr) return std::nullopt;
    if (ValidPreemptibility(*v)) return *v;
    env.Note(o.Ref() + ": ignoring invalid " + std::string(keys::kPreemptibilityLabel) +
             " label \"" + *v + "\"");
    return std::nullopt;
  };
  for (const Object* owner : owners) {
    if (auto v = label(*owner)) return *v;
  }
  if (auto v = label(pod)) return *v;
  const TypeDefaults& defaults = env.Defaults();
  for (const Object* owner : owners) {
    const TypeDefault* d = DefaultsForKind(defaults, owner->GroupKind(), owner->kind);
    if (d == nullptr || d->preemptibility.empty()) continue;
    const std::string v = Lower(d->preemptibility);
    if (ValidPreemptibility(v)) return v;
    env.Note("ignoring invalid preemptibility \"" + d->preemptibility + "\" in the defaults of " +
             owner->GroupKind());
  }
  return "";
}

std::string PriorityClassOfTop(const GroupingEnv& env, const Object& top, const Object& pod,
                               std::string_view fallback) {
  const Object* owners[] = {&top};
  return ResolvePriorityClass(env, owners, pod, fallback);
}

std::string TopOwnerMetadataYaml(const Object& top) {
  return "name: " + YamlString(top.name) + "\nuid: " + YamlString(top.uid) +
         "\ngroup: " + YamlString(top.Group()) + "\nversion: " + YamlString(top.Version()) +
         "\nkind: " + YamlString(top.kind) + "\n";
}

PodGroupMetadata DefaultMetadata(const GroupingInput& in, const Object& top,
                                 std::span<const Object* const> owners) {
  const Object* alone[] = {&top};
  if (owners.empty()) owners = alone;
  const GroupingEnv& env = in.env;
  PodGroupMetadata md;
  md.owner = RefTo(top);
  md.ns = in.pod.ns;
  md.name = PodGroupName(top);
  md.annotations = PodGroupAnnotations(top, in.pod);
  md.labels = PodGroupLabels(top, in.pod);
  md.queue = PodGroupQueue(top, in.pod, env.config());
  md.priority_class_name = ResolvePriorityClass(env, owners, in.pod, keys::kTrainPriorityClass);
  md.preemptibility = ResolvePreemptibility(env, owners, in.pod);
  md.preemption_delay_ns =
      DurationAnnotation(env, owners, in.pod, keys::kPreemptionDelayAnnotation, true);
  md.staleness_grace_period_ns =
      DurationAnnotation(env, owners, in.pod, keys::kStalenessGracePeriod, false);
  md.min_member = 1;
  auto annotation = [&](std::string_view key) {
    const std::string* v = top.Annotation(key);
    return v == nullptr ? std::string() : *v;
  };
  md.topology = {annotation(keys::kTopologyAnnotation),
                 annotation(keys::kTopologyRequiredAnnotation),
                 annotation(keys::kTopologyPreferredAnnotation)};
  return md;
}

namespace {

class DefaultGrouper : public Grouper {
 public:
  std::string_view Name() const override { return "Default Grouper"; }
  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    return DefaultMetadata(in, in.top_owner, in.owners);
  }
};

}  // namespace

std::unique_ptr<Grouper> MakeDefaultGrouper() { return std::make_unique<DefaultGrouper>(); }

}  // namespace kai::podgrouper
