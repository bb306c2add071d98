// A Kubeflow Notebook (PG/kubeflow/notebook/notebook_grouper.go): minMember 1, priority class
// build (interactive work).
#include "kai/core/podgrouper/default_grouper.h"
#include "kai/core/podgrouper/keys.h"

namespace kai::podgrouper {
namespace {

class NotebookGrouper : public Grouper {
 public:
  std::string_view Name() const override { return "Kubeflow Notebook Grouper"; }
  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    PodGroupMetadata md = DefaultMetadata(in, in.top_owner, {});
    md.priority_class_name =
        PriorityClassOfTop(in.env, in.top_owner, in.pod, keys::kBuildPriorityClass);
    return md;
  }
};

}  // namespace

std::unique_ptr<Grouper> MakeNotebookGrouper() { return std::make_unique<NotebookGrouper>(); }

}  // namespace kai::podgrouper
