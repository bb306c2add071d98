#include "kai/cmd/common.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <sstream>

#include "kai/cmd/flags.h"
#include "kai/core/sim/simulator.h"
#include "kai/core/util/trace.h"
#include "kai/kube/io/usage_file.h"
#include "kai/kube/runtime/manager.h"
#include "kai/kube/tls/fips.h"

namespace kai::cmd {
namespace {

// KAI_DEBUG=1 traces the disruptive actions' search on stderr (libkai writes through the sink).
class StderrTrace final : public TraceSink {
 public:
  void Line(std::string_view line) override { std::cerr << line << "\n"; }
};

std::atomic<void (*)()> g_stop{nullptr};

void OnStopSignal(int) {
  if (auto stop = g_stop.load()) stop();
}

}  // namespace

int Fail(const std::string& message) {
  std::cerr << "kai: " << message << "\n";
  return kExitBadInput;
}

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool ParseNow(const std::string& text, UnixSeconds& now) {
  if (text.empty()) {
    now = static_cast<UnixSeconds>(std::time(nullptr));
    return true;
  }
  auto t = ParseRfc3339(text);
  if (t) now = *t;
  return t.has_value();
}

std::string NowError(const std::string& text) {
  return "--now: expected an RFC 3339 time such as 2025-01-01T12:00:00Z, got \"" + text + "\"";
}

std::optional<std::string> ReadClockAndUsage(const std::string& now, const std::string& usage_file,
                                             sim::SimulateOptions& options,
                                             std::optional<usage::UsageStore>& usage) {
  if (!ParseNow(now, options.now)) return NowError(now);
  if (usage_file.empty()) return std::nullopt;
  auto u = usage::LoadUsageFile(usage_file);
  if (!u.ok()) return u.error().message;
  usage = std::move(u.value());
  options.usage = &*usage;
  return std::nullopt;
}

bool StartFipsMode() {
  if (!FipsModeRequested()) return true;
  const Status s = tls::EnableFipsMode();
  if (!s.ok()) std::cerr << "kai: " << s.error().message << "\n";
  return s.ok();
}

TraceSink* DebugTrace() {
  static StderrTrace sink;
  return std::getenv("KAI_DEBUG") != nullptr ? &sink : nullptr;
}

Result<std::unique_ptr<DaemonLog>> DaemonLog::Open(const LogFlags& flags, std::string component) {
  auto options = flags.Options();
  if (!options.ok()) return options.error();
  auto log = std::make_unique<DaemonLog>(std::move(component), *options);
  flags.inert().Warn(log->stream());
  return log;
}

DaemonLog::DaemonLog(std::string component, const serve::LogOptions& options)
    : logger_(std::cerr, std::move(component), options), stream_(logger_) {
  if (std::getenv("KAI_DEBUG") != nullptr) {
    trace_ = std::make_unique<serve::LogTraceSink>(logger_, 0);
  } else if (logger_.Enabled(serve::kTraceVerbosity)) {
    trace_ = std::make_unique<serve::LogTraceSink>(logger_, serve::kTraceVerbosity);
  }
}

void StopOnSignals(void (*stop)()) {
  g_stop.store(stop);
  std::signal(SIGTERM, OnStopSignal);
  std::signal(SIGINT, OnStopSignal);
}

int DaemonCommand::Run() {
  auto log = DaemonLog::Open(log_, component_);
  if (!log.ok()) return Fail(log.error().message);
  if (auto e = Apply()) return Fail(*e);
  if (auto e = kai_.Check()) return Fail(*e);
  kai_.Warn((*log)->stream());
  if (tls::FipsModeEnabled()) {
    (*log)->stream() << "kai: FIPS mode: TLS through OpenSSL's FIPS provider only\n";
  }
  StopOnSignals(&runtime::RequestProcessStop);
  return RunComponent(**log);
}

}  // namespace kai::cmd
