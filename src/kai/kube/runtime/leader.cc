#include "kai/kube/runtime/leader.h"

#include <unistd.h>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

#include "kai/core/util/time.h"

namespace kai::runtime {

std::string DefaultLeaderIdentity() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  return std::string(host) + "_" + std::to_string(getpid());
}
namespace {

namespace res = k8s::resources;
using Clock = std::chrono::steady_clock;

// metav1.MicroTime: RFC 3339 with microseconds, UTC.
std::string MicroTimeNow() {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  return FormatRfc3339WithFraction(us / 1000000, us % 1000000, 6);
}

struct LeaseRecord {
  std::string holder, acquire_time, renew_time, resource_version, uid;
  int transitions = 0;
};

LeaseRecord ReadLease(const doc::Node& lease) {
  LeaseRecord r;
  const doc::Node spec = lease["spec"];
  r.holder = std::string(spec["holderIdentity"].Scalar());
  r.acquire_time = std::string(spec["acquireTime"].Scalar());
  r.renew_time = std::string(spec["renewTime"].Scalar());
  r.transitions = std::atoi(std::string(spec["leaseTransitions"].Scalar()).c_str());
  r.resource_version = std::string(lease["metadata"]["resourceVersion"].Scalar());
  return r;
}

std::string LeaseBody(const LeaderOptions& o, const LeaseRecord& r, bool with_rv,
                      int duration_seconds) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  auto kv = [&](const char* k, const std::string& v) {
    w.Key(k);
    w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
  };
  w.StartObject();
  kv("apiVersion", "coordination.k8s.io/v1");
  kv("kind", "Lease");
  w.Key("metadata");
  w.StartObject();
  kv("name", o.name);
  kv("namespace", o.ns);
  if (with_rv) kv("resourceVersion", r.resource_version);
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  kv("holderIdentity", r.holder);
  w.Key("leaseDurationSeconds");
  w.Int(duration_seconds);
  kv("acquireTime", r.acquire_time);
  kv("renewTime", r.renew_time);
  w.Key("leaseTransitions");
  w.Int(r.transitions);
  w.EndObject();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

int DurationSeconds(const LeaderOptions& o) {
  return static_cast<int>(std::max<int64_t>(1, o.lease_duration.count() / 1000));
}

}  // namespace

LeaderElector::LeaderElector(const k8s::ApiClient& client, LeaderOptions options)
    : client_(client), options_(std::move(options)) {}

LeaderElector::~LeaderElector() { Stop(); }

void LeaderElector::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void LeaderElector::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

bool LeaderElector::LeadingLocked(Clock::time_point now) const {
  return leading_ && !lost_ && !released_ && now - renewed_at_ < options_.renew_deadline;
}

bool LeaderElector::IsLeader() const {
  std::lock_guard<std::mutex> lock(mu_);
  return LeadingLocked(Clock::now());
}

bool LeaderElector::Lost() const {
  std::lock_guard<std::mutex> lock(mu_);
  return leading_ && !released_ && !LeadingLocked(Clock::now());
}

void LeaderElector::WaitForLeadership(const std::atomic<bool>& stop) const {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop && !lost_ && !LeadingLocked(Clock::now())) {
    cv_.wait_for(lock, std::chrono::milliseconds(100));
  }
}

// The fence closes first: no write of this process starts after a loss was seen. (A renewal
// that missed its deadline closed the fence already, by its deadline.)
void LeaderElector::LoseLocked(const std::string& why) {
  if (options_.fence) options_.fence->Close();
  lost_ = true;
  if (options_.log) {
    const int64_t sent = options_.fence ? options_.fence->admitted() : 0;
    options_.log("error: leader election: lost the lease (" + why + "); writes stopped after " +
                 std::to_string(sent) + " sent");
  }
  cv_.notify_all();
}

bool LeaderElector::TryAcquireOrRenew() {
  const std::string path = k8s::ObjectPath(res::kLease, options_.ns, options_.name);
  const std::string now = MicroTimeNow();
  const k8s::HttpResponse got = client_.Get(path);
  LeaseRecord rec;
  bool exists = false;
  if (got.ok()) {
    auto d = doc::ParseJson(got.body);
    if (!d.ok()) return false;
    rec = ReadLease(d->Roots().at(0));
    exists = true;
  } else if (got.status != 404) {
    if (options_.log) options_.log("leader election: " + k8s::Describe({"GET", path}, got));
    return false;
  }
  const Clock::time_point local_now = Clock::now();
  if (exists) {
    const std::string seen = rec.holder + "|" + rec.renew_time;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (seen != observed_record_) {
        observed_record_ = seen;
        observed_at_ = local_now;
      }
      const bool held_by_other = !rec.holder.empty() && rec.holder != options_.identity;
      if (held_by_other && local_now - observed_at_ < options_.lease_duration) {
        if (leading_ && !lost_) LoseLocked("held by " + rec.holder);
        return false;
      }
      if (lost_) return false;
    }
    if (rec.holder != options_.identity) {
      rec.acquire_time = now;
      ++rec.transitions;
      rec.holder = options_.identity;
    }
  } else {
    rec.holder = options_.identity;
    rec.acquire_time = now;
  }
  rec.renew_time = now;
  // An update carries the resourceVersion read: a rival that wrote in between makes it a 409.
  const k8s::HttpResponse put =
      exists ? client_.Update(path, LeaseBody(options_, rec, true, DurationSeconds(options_)))
             : client_.Create(k8s::CollectionPath(res::kLease, options_.ns),
                              LeaseBody(options_, rec, false, DurationSeconds(options_)));
  if (!put.ok()) {
    if (put.status != 409 && options_.log) {
      options_.log("leader election: " + k8s::Describe({exists ? "PUT" : "POST", path}, put));
    }
    return false;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (lost_) return false;  // lost while this renewal was on its way: the fence stays closed
  if (!leading_ && options_.log) options_.log("leader election: " + options_.identity + " leads");
  leading_ = true;
  renewed_at_ = local_now;
  // Writes may go until the renew deadline counted from before this renewal was sent.
  if (options_.fence) options_.fence->OpenUntil(local_now + options_.renew_deadline);
  observed_record_ = rec.holder + "|" + rec.renew_time;
  observed_at_ = local_now;
  cv_.notify_all();
  return true;
}

void LeaderElector::Loop() {
  while (!stop_) {
    const bool held = TryAcquireOrRenew();
    std::unique_lock<std::mutex> lock(mu_);
    if (!held && leading_ && !lost_ && !LeadingLocked(Clock::now())) {
      LoseLocked("not renewed within the renew deadline");
    }
    if (lost_) return;
    cv_.wait_for(lock, options_.retry_period, [&] { return stop_.load(); });
  }
}

void LeaderElector::Release() {
  Stop();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!LeadingLocked(Clock::now())) return;
    if (options_.fence) options_.fence->Close();
    released_ = true;  // this elector leads no more
  }
  if (options_.fence) options_.fence->Drain(options_.renew_deadline);
  const std::string path = k8s::ObjectPath(res::kLease, options_.ns, options_.name);
  const k8s::HttpResponse got = client_.Get(path);
  if (!got.ok()) return;
  auto d = doc::ParseJson(got.body);
  if (!d.ok()) return;
  LeaseRecord rec = ReadLease(d->Roots().at(0));
  if (rec.holder != options_.identity) return;  // taken meanwhile: nothing to hand back
  const std::string now = MicroTimeNow();
  rec.holder.clear();
  rec.acquire_time = rec.renew_time = now;
  const k8s::HttpResponse put = client_.Update(path, LeaseBody(options_, rec, true, 1));
  if (options_.log) {
    options_.log(put.ok() ? "leader election: released the lease"
                          : "leader election: " + k8s::Describe({"PUT", path}, put));
  }
}

Leadership::Leadership(const k8s::ApiClient& client, bool elect, LeaderOptions options)
    : fence_(elect ? std::make_shared<k8s::WriteFence>() : nullptr),
      fenced_(client.WithFence(fence_)) {
  if (!elect) return;
  if (options.identity.empty()) options.identity = DefaultLeaderIdentity();
  options.fence = fence_;
  elector_ = std::make_unique<LeaderElector>(client, std::move(options));
}

void Leadership::Start() {
  if (elector_) elector_->Start();
}

bool Leadership::Leading() const { return !elector_ || elector_->IsLeader(); }

bool Leadership::Lost() const { return elector_ && elector_->Lost(); }

bool Leadership::WaitForLeadership(const std::atomic<bool>& stop) const {
  if (elector_) elector_->WaitForLeadership(stop);
  return Leading();
}

void Leadership::Release() {
  if (elector_) elector_->Release();
}

}  // namespace kai::runtime
