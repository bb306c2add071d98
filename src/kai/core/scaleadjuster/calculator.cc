#include "kai/core/scaleadjuster/calculator.h"

#include <algorithm>

#include "kai/core/k8s/keys.h"
#include "kai/core/resource/quantity.h"

namespace kai::scaleadjuster {
namespace {

// Milli to hundredths, half up (KAI: math.Round(fraction * 100)).
int64_t MilliToCenti(int64_t milli) { return (milli + 5) / 10; }

bool HasValue(const PodFacts& pod, std::string_view key) {
  auto it = pod.annotations.find(key);
  return it != pod.annotations.end() && !it->second.empty();
}

}  // namespace

Result<int64_t> FractionCenti(const PodFacts& pod, int64_t memory_fraction_centi) {
  if (pod.decode_error) return Error{*pod.decode_error};
  if (HasValue(pod, keys::kGpuFraction)) return MilliToCenti(pod.gpu_sharing.fraction_milli);
  // gpu-memory, or an NvFractions request the decoder read as GPU memory.
  if (HasValue(pod, keys::kGpuMemory) || pod.gpu_sharing.memory_mib > 0) {
    return memory_fraction_centi;
  }
  return Error{"Pod " + pod.Key() +
               ": has neither a gpu-fraction nor a gpu-memory annotation (nor NvFractions)"};
}

NeededDevices CountNeededDevices(const std::vector<const PodFacts*>& unschedulable,
                                 int64_t memory_fraction_centi) {
  NeededDevices out;
  int64_t centi = 0;
  for (size_t i = 0; i < unschedulable.size(); ++i) {
    auto f = FractionCenti(*unschedulable[i], memory_fraction_centi);
    if (!f.ok()) {
      out.skipped.push_back(f.error().message);
      continue;
    }
    centi += *f * unschedulable[i]->gpu_sharing.num_devices;
    out.to_scale.push_back(i);
  }
  out.devices = (centi + 99) / 100;
  return out;
}

int64_t SumScalingDevices(const std::vector<const PodFacts*>& scaling) {
  int64_t sum = 0;
  for (const PodFacts* p : scaling) sum += p->gpu_request;
  return sum;
}

int64_t MaxScalingDevices(const std::vector<const PodFacts*>& scaling) {
  int64_t most = 0;
  for (const PodFacts* p : scaling) most = std::max(most, p->gpu_request);
  return most;
}

Result<int64_t> ParseFractionCenti(const std::string& text, const std::string& what) {
  auto milli = ParseQuantity(text, 3);
  if (!milli.ok() || *milli < 0 || *milli > 1000) {
    return Error{what + ": must be a number between 0 and 1, got \"" + text + "\""};
  }
  return MilliToCenti(*milli);
}

}  // namespace kai::scaleadjuster
