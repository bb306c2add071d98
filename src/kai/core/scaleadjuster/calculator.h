#pragma once
// KAI's node scale adjuster arithmetic (scale_adjuster/calculator.go), in exact integers: how many
// whole GPUs the unschedulable fractional pods need together, and how many the scaling pods ask.
// A fraction counts in hundredths of a GPU, rounded half up as KAI rounds it, times the pod's
// number of devices; the sum is rounded up to whole GPUs.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kai/core/scaleadjuster/pod_facts.h"

namespace kai::scaleadjuster {

// One pod's share in hundredths of a GPU per device: gpu-fraction when set, else (gpu-memory)
// `memory_fraction_centi`; an error naming the pod and the field when it has neither or the
// decoder rejected it.
Result<int64_t> FractionCenti(const PodFacts& pod, int64_t memory_fraction_centi);

struct NeededDevices {
  int64_t devices = 0;               // ceil(sum of fraction x devices)
  std::vector<size_t> to_scale;      // indexes (into the input) of the pods counted
  std::vector<std::string> skipped;  // why a pod was not counted, one line each
};
NeededDevices CountNeededDevices(const std::vector<const PodFacts*>& unschedulable,
                                 int64_t memory_fraction_centi);

// Whole GPUs asked by the scaling pods: their sum and their largest.
int64_t SumScalingDevices(const std::vector<const PodFacts*>& scaling);
int64_t MaxScalingDevices(const std::vector<const PodFacts*>& scaling);

// Hundredths of a GPU from a decimal text ("0.1" -> 10), rounded half up; an error naming
// `what` when it is not a number in [0, 1].
Result<int64_t> ParseFractionCenti(const std::string& text, const std::string& what);

}  // namespace kai::scaleadjuster
