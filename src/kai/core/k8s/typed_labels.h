#pragma once
// The typed fields of model objects that Kubernetes carries in labels and annotations (GPU
// memory, device count and MIG mode of a node; task priority, role, reservation and legacy MIG
// requests of a pod), read from them. Decoding fills them; code that builds objects with such
// labels in memory (generators, tests) calls these after setting the labels.
#include "kai/core/model/cluster.h"

namespace kai {

void ReadTypedLabels(NodeObject& node);
void ReadTypedLabels(PodObject& pod);

}  // namespace kai
