#pragma once
// Where libkai's diagnostic trace goes. The library never writes to a stream or reads the
// environment: a front end hands it a sink (SchedulerConfig::trace; the kai command wires
// KAI_DEBUG to one on stderr), and without one tracing costs a pointer test.
#include <string_view>

namespace kai {

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  // One line of trace, without its newline.
  virtual void Line(std::string_view line) = 0;
};

}  // namespace kai
