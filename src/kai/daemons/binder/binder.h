#pragma once
// One bind, as KAI's binder makes it (B/binding/binder.go): the node's reservations are synced,
// a fraction pod's GPUs are reserved (reservation.h), the plugins prepare the pod, and one
// pods/binding call sets the node and the received-resource-type annotation together. A failed
// bind is rolled back: every plugin undoes its part, the pod loses its GPU group labels, and
// the node's reservations are synced again (a reservation pod nothing needs goes).
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "kai/daemons/binder/plugins.h"
#include "kai/daemons/binder/reservation.h"

namespace kai::binder {

enum class BindFailure {
  kNone,
  kError,
  // A Fraction BindRequest without GPU groups (KAI: an old request's bad conversion): it is
  // deleted, and the scheduler writes a valid one.
  kInvalidRequest,
};

struct BindResult {
  BindFailure failure = BindFailure::kNone;
  std::string error;
  bool already_bound = false;  // an earlier attempt's binding had landed
  // Not bound yet, no failure: reservation pods that have no GPU id yet (their groups), and
  // when the first of them times out. Nothing is to be rolled back.
  std::vector<std::string> waiting_groups;
  std::chrono::milliseconds wait_left{0};
  bool ok() const { return failure == BindFailure::kNone && waiting_groups.empty(); }
  bool waiting() const { return failure == BindFailure::kNone && !waiting_groups.empty(); }
};

class Binder {
 public:
  Binder(const k8s::ApiClient& client, ReservationService& reservations,
         std::vector<std::unique_ptr<BindPlugin>> plugins);

  BindResult Bind(const PodView& pod, const BindRequestObject& request);
  // Undoes what a failed Bind prepared; the error lists every step that failed.
  Status Rollback(const PodView& pod, const BindRequestObject& request);

 private:
  Status CreateBinding(const PodView& pod, const BindRequestObject& request, bool& already);

  const k8s::ApiClient& client_;
  ReservationService& reservations_;
  std::vector<std::unique_ptr<BindPlugin>> plugins_;
};

}  // namespace kai::binder
