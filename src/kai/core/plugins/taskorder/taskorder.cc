// Task order inside a job: kubeflow master/launcher first, ray head first, then the
// kai.scheduler/task-priority label (labelled before unlabelled, higher first, unparsable last).
#include "kai/core/framework/session.h"
#include "kai/core/plugins/builtin.h"

namespace kai::plugins {
namespace {

int CompareRank(int a, int b) { return a == b ? 0 : (a < b ? -1 : 1); }

class RoleOrderPlugin : public Plugin {
 public:
  explicit RoleOrderPlugin(int rank) : rank_(rank) {}
  void OnSessionOpen(Session& s) override {
    const int rank = rank_;
    s.AddTaskOrder([rank](const Session& ss, PodId a, PodId b) {
      const bool ra = ss.snap().pods[a].role_rank == rank;
      const bool rb = ss.snap().pods[b].role_rank == rank;
      return ra == rb ? 0 : (ra ? -1 : 1);
    });
  }

 private:
  int rank_;
};

// 0: valid label, 1: no label, 2: unparsable label.
int LabelClass(const SnapPod& p) {
  if (p.task_priority) return 0;
  return p.task_priority_invalid ? 2 : 1;
}

class TaskOrderPlugin : public Plugin {
 public:
  void OnSessionOpen(Session& s) override {
    s.AddTaskOrder([](const Session& ss, PodId a, PodId b) {
      const SnapPod& pa = ss.snap().pods[a];
      const SnapPod& pb = ss.snap().pods[b];
      if (int c = CompareRank(LabelClass(pa), LabelClass(pb))) return c;
      if (!pa.task_priority || *pa.task_priority == *pb.task_priority) return 0;
      return *pa.task_priority > *pb.task_priority ? -1 : 1;
    });
  }
};

}  // namespace

std::unique_ptr<Plugin> MakeTaskOrder() { return std::make_unique<TaskOrderPlugin>(); }
std::unique_ptr<Plugin> MakeKubeflow() { return std::make_unique<RoleOrderPlugin>(0); }
std::unique_ptr<Plugin> MakeRay() { return std::make_unique<RoleOrderPlugin>(1); }

}  // namespace kai::plugins
