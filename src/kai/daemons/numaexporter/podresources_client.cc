#include "kai/daemons/numaexporter/podresources_client.h"

#include <grpcpp/grpcpp.h>

#include "podresources_v1.grpc.pb.h"

namespace kai::numaexporterd {
namespace {

using numaexporter::ContainerAllocation;
using numaexporter::PodAllocation;

std::vector<int64_t> NodesOf(const v1::TopologyInfo& t) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(t.nodes_size()));
  for (const v1::NUMANode& n : t.nodes()) out.push_back(n.id());
  return out;
}

ContainerAllocation ContainerOf(const v1::ContainerResources& c) {
  ContainerAllocation out;
  out.name = c.name();
  for (const v1::ContainerDevices& d : c.devices()) {
    out.devices.push_back({d.resource_name(), d.device_ids_size(), NodesOf(d.topology())});
  }
  out.cpu_ids.assign(c.cpu_ids().begin(), c.cpu_ids().end());
  for (const v1::ContainerMemory& m : c.memory()) {
    out.memory.push_back({m.memory_type(), m.size(), NodesOf(m.topology())});
  }
  return out;
}

std::string StatusText(const grpc::Status& s) {
  return "gRPC status " + std::to_string(static_cast<int>(s.error_code())) + ": " +
         s.error_message();
}

}  // namespace

struct PodResourcesClient::Impl {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::PodResourcesLister::Stub> stub;
};

PodResourcesClient::PodResourcesClient(PodResourcesOptions options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options_.max_message_bytes);
  args.SetMaxSendMessageSize(1 << 20);
  // A kubelet that restarts is found again within a second (gRPC's default backoff grows to 2m).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  impl_->channel = grpc::CreateCustomChannel("unix:" + options_.socket,
                                             grpc::InsecureChannelCredentials(), args);
  impl_->stub = v1::PodResourcesLister::NewStub(impl_->channel);
}

PodResourcesClient::~PodResourcesClient() = default;

Result<std::vector<PodAllocation>> PodResourcesClient::List() const {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + options_.timeout);
  v1::ListPodResourcesResponse response;
  const grpc::Status s = impl_->stub->List(&ctx, v1::ListPodResourcesRequest(), &response);
  if (!s.ok()) {
    return Error{"listing pod resources on " + options_.socket + ": " + StatusText(s)};
  }
  return AllocationsOf(response);
}

std::vector<PodAllocation> AllocationsOf(const v1::ListPodResourcesResponse& r) {
  std::vector<PodAllocation> out;
  out.reserve(static_cast<size_t>(r.pod_resources_size()));
  for (const v1::PodResources& p : r.pod_resources()) {
    PodAllocation pod{p.namespace_(), p.name(), {}};
    for (const v1::ContainerResources& c : p.containers()) pod.containers.push_back(ContainerOf(c));
    out.push_back(std::move(pod));
  }
  return out;
}

}  // namespace kai::numaexporterd
