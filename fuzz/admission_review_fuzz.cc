// libFuzzer target for the admission webhook's input: an AdmissionReview body, as the API server
// (or anyone who reaches the Service) posts it. Any byte string must become an error or a review;
// a review goes through every decision (pod validation and mutation, queue and PodGroup
// validation) and the response is encoded. Never a crash, a hang, a leak or an exception.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kai/core/admission/admission.h"
#include "kai/core/admission/review.h"

namespace {

using kai::Result;
using kai::admission::Verdict;

// A cluster with one queue "q" (whose child is "c") and running PodGroups.
class FixedLookup : public kai::admission::ClusterLookup {
 public:
  Result<std::optional<kai::QueueObject>> FindQueue(std::string_view name) const override {
    if (name != "q") return std::optional<kai::QueueObject>{};
    kai::QueueObject q;
    q.meta.name = "q";
    return std::optional<kai::QueueObject>{q};
  }
  Result<std::vector<std::string>> ChildQueues(std::string_view name) const override {
    if (name == "q") return std::vector<std::string>{"c"};
    return std::vector<std::string>{};
  }
  Result<bool> PodGroupRunning(std::string_view, std::string_view) const override { return true; }
};

void Require(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "invariant failed: %s\n", what);
  std::abort();
}

void Answer(const std::string& uid, const Verdict& v) {
  Require(v.allowed || !v.message.empty(), "a denial says why");
  const std::string response = kai::admission::ReviewResponse(uid, v);
  Require(response.find("\"uid\"") != std::string::npos, "the response names the request");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto review = kai::admission::ParseReview(body);
  if (!review.ok()) {
    Require(!review.error().message.empty(), "an error says what is wrong");
    return 0;
  }
  const kai::admission::Request& r = review->request;
  const kai::admission::Options options;
  const FixedLookup lookup;
  Answer(review->uid, kai::admission::ValidatePod(r, options));
  Answer(review->uid,
         kai::admission::MutatePod(r, options, [](size_t n) { return std::string(n, 'b'); }));
  Answer(review->uid, kai::admission::ValidateQueue(r, options, lookup));
  Answer(review->uid, kai::admission::ValidatePodGroup(r, lookup));
  return 0;
}
