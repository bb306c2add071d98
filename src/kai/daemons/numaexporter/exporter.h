#pragma once
// `kai numa-exporter`: KAI's NUMA placement exporter (cmd/numa-placement-exporter, pkg/npe), the
// node agent of a DaemonSet. It reads which devices, exclusive CPUs and pinned memory each pod of
// its node holds from the kubelet's pod-resources API, resolves CPUs to NUMA nodes from sysfs, and
// writes each pod's placement as the kai.scheduler/numa-placement-observed annotation the `numa`
// plugin reads (the decisions: core/numaexporter/reconcile.h). Two passes: every poll interval
// (pods whose placement changed since this process wrote it) and every drift-resync interval (the
// pods of the node, listed from the API server with spec.nodeName=<node>, whose live annotation
// differs). No leader election: one exporter a node.
#include <atomic>
#include <chrono>
#include <ostream>
#include <string>

#include "kai/kube/client/api_client.h"

namespace kai::numaexporterd {

struct NumaExporterOptions {
  std::string kubeconfig, context;
  double qps = 50;  // --qps and --burst: KAI's exporter's defaults
  int burst = 100;
  std::string node_name;  // --node-name, else $NODE_NAME
  std::string podresources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::string sysfs_root = "/sys";
  std::chrono::milliseconds poll_interval{1000};
  std::chrono::milliseconds drift_resync_interval{60000};  // 0: no drift pass
  std::chrono::milliseconds podresources_timeout{10000};
  std::string metrics_address, health_address;  // "" = that endpoint off
};

// Runs on the component runtime (kube/runtime/manager.h) on `client` until a stop, or until
// `also_stop` is set. Exit status: 0 on a stop, 2 when the sysfs topology cannot be read.
int RunNumaExporter(const NumaExporterOptions& options, const k8s::ApiClient& client,
                    std::ostream& err, const std::atomic<bool>* also_stop = nullptr);
// The same on the client the options' kubeconfig gives (2 when it cannot be resolved).
int RunNumaExporter(const NumaExporterOptions& options, std::ostream& err);

}  // namespace kai::numaexporterd
