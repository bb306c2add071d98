#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/util/result.h"

namespace kai {

class Session;

// A plugin registers its hooks on the session when it opens (KAI's OnSessionOpen).
class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual void OnSessionOpen(Session& session) = 0;
  virtual void OnSessionClose(Session&) {}
};

using PluginArguments = std::map<std::string, std::string>;

struct PluginInfo {
  std::string_view name;
  int default_priority = 0;
  std::vector<std::string_view> arguments;  // accepted argument keys
  std::function<Result<std::unique_ptr<Plugin>>(const PluginArguments&)> make;
};

// Actions run in order on one session.
class Action {
 public:
  virtual ~Action() = default;
  virtual void Execute(Session& session) = 0;
};

struct ActionInfo {
  std::string_view name;
  int default_priority = 0;
  std::function<std::unique_ptr<Action>()> make;
};

// The static registry: every plugin and action kai knows. Declared here, defined above the
// plugins and actions by src/kai/core/builtin/registry.cc (the framework includes neither).
const std::vector<PluginInfo>& AllPlugins();
const std::vector<ActionInfo>& AllActions();
const PluginInfo* FindPlugin(std::string_view name);
const ActionInfo* FindAction(std::string_view name);

}  // namespace kai
