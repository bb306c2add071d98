#pragma once
// `kai operator`: KAI's operator (cmd/operator) on the component runtime. It reads the Config
// (kai.scheduler/v1, "kai-config") and the SchedulingShards, and keeps every other component
// deployed as they say (core/operator/render.h): ServiceAccounts and RBAC, Deployments, the
// admission Service and webhook configurations, one scheduler Deployment per shard. Each pass is
// level-triggered and idempotent: every object is server-side applied (field manager
// kai-operator), a Deployment of a component that was turned off is deleted, the webhooks' TLS
// Secret is made when missing and replaced 30 days before it expires, and the Config and each
// shard get KAI's status conditions (Deployed, Available, Reconciling).
#include <atomic>
#include <chrono>
#include <ostream>
#include <string>

#include "kai/kube/client/api_client.h"

namespace kai::operatord {

struct OperatorOptions {
  std::string kubeconfig, context;
  double qps = 0;
  int burst = 300;
  std::string config_name = "kai-config";
  std::string image = "kai:latest";  // every component's image unless its section names one
  std::string image_pull_secret;     // KAI's --image-pull-secret: added to every Deployment
  std::chrono::milliseconds resync_period{10000};
  std::chrono::hours renew_before{24 * 30};  // the TLS Secret is replaced this long before expiry
  bool once = false;                         // one pass, then exit (0: every object applied)
  bool leader_elect = false;
  std::string leader_elect_namespace = "kai-scheduler";
  std::string leader_elect_id = "kai-operator";
  std::string identity;
  std::chrono::milliseconds lease_duration{15000}, renew_deadline{10000}, retry_period{2000};
  std::string metrics_address, health_address;
  std::chrono::milliseconds sync_timeout{60000};
};

int RunOperator(const OperatorOptions& options, std::ostream& err);

}  // namespace kai::operatord
