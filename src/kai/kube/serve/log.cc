#include "kai/kube/serve/log.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/formatter.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include <chrono>
#include <map>
#include <mutex>
#include <streambuf>
#include <thread>
#include <unordered_map>

#include "kai/core/util/time.h"

namespace kai::serve {
namespace {

constexpr size_t kMaxLineBytes = 64 * 1024;
// Loggers named after the components that wrote lines; beyond this many, the logger's own.
constexpr size_t kMaxComponents = 32;

std::string_view LevelName(LogLevel level, bool capital) {
  switch (level) {
    case LogLevel::kDebug:
      return capital ? "DEBUG" : "debug";
    case LogLevel::kWarning:
      return capital ? "WARN" : "warn";
    case LogLevel::kError:
      return capital ? "ERROR" : "error";
    case LogLevel::kInfo:
      break;
  }
  return capital ? "INFO" : "info";
}

spdlog::level::level_enum ToSpdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kWarning:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
    case LogLevel::kInfo:
      break;
  }
  return spdlog::level::info;
}

LogLevel FromSpdlog(spdlog::level::level_enum level) {
  if (level <= spdlog::level::debug) return LogLevel::kDebug;
  if (level == spdlog::level::warn) return LogLevel::kWarning;
  if (level >= spdlog::level::err) return LogLevel::kError;
  return LogLevel::kInfo;
}

// ISO 8601 in UTC with milliseconds, as zap's ISO8601TimeEncoder writes it for UTC.
std::string IsoTime(std::chrono::system_clock::time_point t) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  return FormatRfc3339WithFraction(ms / 1000, ms % 1000, 3);
}

bool StripPrefix(std::string_view& text, std::string_view prefix) {
  if (!text.starts_with(prefix)) return false;
  text.remove_prefix(prefix.size());
  return true;
}

// The `NAME` of a leading `kai NAME: `, removed from `text`; empty where there is none.
std::string_view TakeComponent(std::string_view& text) {
  if (!text.starts_with("kai ")) return {};
  const size_t end = text.find(": ", 4);
  if (end == std::string_view::npos) return {};
  const std::string_view name = text.substr(4, end - 4);
  if (name.empty() || name.find(' ') != std::string_view::npos) return {};
  text.remove_prefix(end + 2);
  return name;
}

std::string Json(const LogRecord& record, const LogOptions& options, std::string_view time) {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  const auto level = LevelName(record.level, options.capital_levels);
  w.StartObject();
  w.Key("level");
  w.String(level.data(), static_cast<rapidjson::SizeType>(level.size()));
  w.Key("ts");
  w.String(time.data(), static_cast<rapidjson::SizeType>(time.size()));
  w.Key("logger");
  w.String(record.component.data(), static_cast<rapidjson::SizeType>(record.component.size()));
  w.Key("msg");
  w.String(record.message.data(), static_cast<rapidjson::SizeType>(record.message.size()));
  w.EndObject();
  return out.GetString();
}

std::string Console(const LogRecord& record, std::string_view time) {
  std::string out;
  out.reserve(time.size() + record.component.size() + record.message.size() + 12);
  out.append(time).append("\t").append(LevelName(record.level, true)).append("\t");
  out.append(record.component).append("\t").append(record.message);
  return out;
}

// Formats spdlog's records as FormatLogRecord does.
class RecordFormatter final : public spdlog::formatter {
 public:
  explicit RecordFormatter(LogOptions options) : options_(options) {}

  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    LogRecord record{FromSpdlog(msg.level),
                     std::string(msg.logger_name.data(), msg.logger_name.size()),
                     std::string(msg.payload.data(), msg.payload.size())};
    const std::string text = FormatLogRecord(record, options_, IsoTime(msg.time));
    dest.append(text.data(), text.data() + text.size());
    dest.push_back('\n');
  }

  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<RecordFormatter>(options_);
  }

 private:
  LogOptions options_;
};

}  // namespace

LogRecord ParseLogLine(std::string_view line, std::string_view default_component) {
  while (line.ends_with('\r')) line.remove_suffix(1);
  LogRecord record;
  std::string_view component = default_component;
  if (!StripPrefix(line, "kai: ")) {
    if (auto named = TakeComponent(line); !named.empty()) component = named;
  }
  if (StripPrefix(line, "error: ")) {
    record.level = LogLevel::kError;
  } else if (StripPrefix(line, "warning: ")) {
    record.level = LogLevel::kWarning;
  }
  record.component = std::string(component);
  record.message = std::string(line);
  return record;
}

std::string FormatLogRecord(const LogRecord& record, const LogOptions& options,
                            std::string_view time) {
  return options.json ? Json(record, options, time) : Console(record, time);
}

// The sink every component's spdlog logger shares, and those loggers by name.
class Logger::Impl {
 public:
  Impl(std::ostream& sink, const LogOptions& options)
      : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(sink, /*force_flush=*/true)) {
    sink_->set_formatter(std::make_unique<RecordFormatter>(options));
  }

  spdlog::logger& For(const std::string& component, const std::string& fallback) {
    std::lock_guard lock(mu_);
    auto it = loggers_.find(component);
    if (it != loggers_.end()) return *it->second;
    const std::string& name = loggers_.size() < kMaxComponents ? component : fallback;
    auto& logger = loggers_[name];
    if (!logger) {
      logger = std::make_shared<spdlog::logger>(name, sink_);
      logger->set_level(spdlog::level::trace);
    }
    return *logger;
  }

 private:
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<spdlog::logger>> loggers_;
};

Logger::Logger(std::ostream& sink, std::string component, LogOptions options)
    : component_(std::move(component)),
      options_(options),
      impl_(std::make_unique<Impl>(sink, options)) {}

Logger::~Logger() = default;

void Logger::Write(const LogRecord& record, int verbosity) {
  if (!Enabled(verbosity) || record.level < options_.min_level) return;
  const std::string& component = record.component.empty() ? component_ : record.component;
  impl_->For(component, component_)
      .log(ToSpdlog(record.level), spdlog::string_view_t(record.message));
}

// Keeps each writing thread's partial line apart and hands every complete line to the logger.
class LogStream::Buffer final : public std::streambuf {
 public:
  explicit Buffer(Logger& logger) : logger_(logger) {}

  ~Buffer() override {
    for (auto& [thread, line] : lines_) Emit(line);
  }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    Append(&ch, 1);
    return c;
  }

  std::streamsize xsputn(const char* s, std::streamsize n) override {
    Append(s, static_cast<size_t>(n));
    return n;
  }

 private:
  void Append(const char* s, size_t n) {
    std::lock_guard lock(mu_);
    std::string& line = lines_[std::this_thread::get_id()];
    for (size_t i = 0; i < n; ++i) {
      if (s[i] != '\n') line.push_back(s[i]);
      if (s[i] == '\n' || line.size() >= kMaxLineBytes) {
        Emit(line);
        line.clear();
      }
    }
    if (line.empty()) lines_.erase(std::this_thread::get_id());
  }

  void Emit(const std::string& line) { logger_.Write(ParseLogLine(line, logger_.component())); }

  Logger& logger_;
  std::mutex mu_;
  std::unordered_map<std::thread::id, std::string> lines_;
};

LogStream::LogStream(Logger& logger)
    : std::ostream(nullptr), buffer_(std::make_unique<Buffer>(logger)) {
  rdbuf(buffer_.get());
}

LogStream::~LogStream() { rdbuf(nullptr); }

void LogTraceSink::Line(std::string_view line) {
  logger_.Write({LogLevel::kDebug, logger_.component(), std::string(line)}, verbosity_);
}

}  // namespace kai::serve
