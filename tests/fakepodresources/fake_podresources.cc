// A stand-in for the kubelet's pod-resources gRPC server, for kai numa-exporter's e2e test
// (tests/e2e/numaexporter_test.py):
//   kai_fake_podresources SOCKET ANSWER
// serves v1.PodResourcesLister on the unix socket SOCKET; each List answers the
// ListPodResourcesResponse that the file ANSWER holds in protobuf text format, read again on every
// call (the test rewrites it to move pods). A file that does not parse answers INTERNAL.
// GetAllocatableResources answers empty. Runs until SIGTERM or SIGINT.
#include <google/protobuf/text_format.h>
#include <grpcpp/grpcpp.h>

#include <csignal>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include "podresources_v1.grpc.pb.h"

namespace {

volatile std::sig_atomic_t g_stop = 0;

class Lister final : public v1::PodResourcesLister::Service {
 public:
  explicit Lister(std::string answer) : answer_(std::move(answer)) {}

  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* out) override {
    std::ifstream in(answer_);
    std::stringstream text;
    text << in.rdbuf();
    if (!google::protobuf::TextFormat::ParseFromString(text.str(), out)) {
      return {grpc::StatusCode::INTERNAL, "the canned answer " + answer_ + " does not parse"};
    }
    return grpc::Status::OK;
  }

  grpc::Status GetAllocatableResources(grpc::ServerContext*, const v1::AllocatableResourcesRequest*,
                                       v1::AllocatableResourcesResponse*) override {
    return grpc::Status::OK;
  }

 private:
  std::string answer_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: kai_fake_podresources SOCKET ANSWER\n";
    return 2;
  }
  Lister lister(argv[2]);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(std::string("unix:") + argv[1], grpc::InsecureServerCredentials());
  builder.RegisterService(&lister);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    std::cerr << "kai_fake_podresources: cannot listen on " << argv[1] << "\n";
    return 1;
  }
  std::signal(SIGTERM, [](int) { g_stop = 1; });
  std::signal(SIGINT, [](int) { g_stop = 1; });
  std::cout << "serving " << argv[1] << std::endl;
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  server->Shutdown();
  return 0;
}
