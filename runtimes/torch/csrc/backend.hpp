// SPDX-License-Identifier: MIT
// The "nnp" torch.distributed backend: a c10d::Backend (a ProcessGroup
// before torch 2) whose collectives run on one nnp device per rank, over
// its links (docs/torch.md).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <nnp/nnp.h>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/version.h>
#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#endif

#include "events.hpp"
#include "work.hpp"

namespace nnp_torch {

// A libnnp handle freed by its own function.
template <typename T, void (*Free)(T*)>
struct Freer {
  void operator()(T* p) const {
    Free(p);
  }
};
template <typename T, void (*Free)(T*)>
using Handle = std::unique_ptr<T, Freer<T, Free>>;

// What torch makes a process group of: since torch 2.0 a c10d::Backend
// per device type, to which torch's own ProcessGroup hands each call;
// torch 1.13 (Debian 12) took a ProcessGroup subclass itself. Both
// declare the collectives below alike.
#if TORCH_VERSION_MAJOR >= 2
using BackendBase = c10d::Backend;
#else
using BackendBase = c10d::ProcessGroup;
#endif

class NnpBackend : public BackendBase {
 public:
  // Opens nnp device @device and joins the @size ranks that share @store
  // in one communicator, whose peers wait @timeout for a late rank.
  NnpBackend(
      const c10::intrusive_ptr<c10d::Store>& store,
      int rank,
      int size,
      std::chrono::milliseconds timeout,
      int device);
  ~NnpBackend() override;

  const std::string getBackendName() const override {
    return "nnp";
  }

  c10::intrusive_ptr<c10d::Work> broadcast(
      std::vector<at::Tensor>& tensors,
      const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(
      std::vector<at::Tensor>& tensors,
      const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors,
      const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(
      std::vector<std::vector<at::Tensor>>& outputs,
      std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(
      at::Tensor& output,
      at::Tensor& input,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(
      std::vector<std::vector<at::Tensor>>& outputs,
      std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
#if TORCH_VERSION_MAJOR >= 2
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(
      std::vector<at::Tensor>& outputs,
      std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor>& outputs,
      std::vector<at::Tensor>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
#endif
  c10::intrusive_ptr<c10d::Work> reduce_scatter(
      std::vector<at::Tensor>& outputs,
      std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output,
      at::Tensor& input,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(
      std::vector<at::Tensor>& tensors,
      const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(
      std::vector<std::vector<at::Tensor>>& outputs,
      std::vector<at::Tensor>& inputs,
      const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(
      std::vector<at::Tensor>& outputs,
      std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(
      at::Tensor& output,
      at::Tensor& input,
      std::vector<int64_t>& outputSplits,
      std::vector<int64_t>& inputSplits,
      const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(
      std::vector<at::Tensor>& outputs,
      std::vector<at::Tensor>& inputs,
      const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> barrier(
      const c10d::BarrierOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(
      std::vector<at::Tensor>& tensors,
      int dst,
      int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(
      std::vector<at::Tensor>& tensors,
      int src,
      int tag) override;
  // The first message from any rank (nnp_recv_any()), on a lane of its
  // own; its Work's sourceRank() names the sender.
  c10::intrusive_ptr<c10d::Work> recvAnysource(
      std::vector<at::Tensor>& tensors,
      int tag) override;

  // The collectives this rank has issued on the group: what torch's
  // checks for ranks that call differently compare (TORCH_DISTRIBUTED_DEBUG
  // =DETAIL wraps every group in one that asks).
  void setSequenceNumberForGroup() override;
  uint64_t getSequenceNumberForGroup() override;

  // Ends the group at once, as ncclCommAbort does (torch_nnp.abort()):
  // its operations in flight fail here and, told by the device, on every
  // other rank; every later call raises, naming this. torch 2.6 aborts
  // NCCL's groups alone, so this is ours.
  void abort();

 private:
  class Staging;
  struct Lane;
  using Job = std::function<void(Staging&)>;

  // The lane of sends to @peer (@recv false) or receives from it; peer
  // -1: receives from any source.
  Lane& p2pLane(int peer, bool recv);
  c10::intrusive_ptr<c10d::Work> enqueue(
      c10d::OpType type,
      std::vector<at::Tensor> outputs,
      Job job);
  c10::intrusive_ptr<c10d::Work> enqueue(
      Lane& lane,
      c10d::OpType type,
      std::vector<at::Tensor> outputs,
      Job job,
      std::shared_ptr<int> source = nullptr);
  void startLane(Lane& lane);
  void stopLanes();
  void run(Lane& lane);
  void onEvent(const nnp_device_event& ev);
  void abortComm();
  void checkUsable() const;
  std::string commFailureWithin(std::chrono::milliseconds bound) const;
  std::string failure(nnp_result_t result, const char* what) const;
  void check(nnp_result_t result, const char* what) const;
  void checkPeer(int peer, const char* op) const;
  size_t gatherAll(Staging& s, const std::vector<at::Tensor>& inputs);
  void scatter(Staging& s, nnp_redop_t op, const at::Tensor& output);

  const int device_;
  Handle<nnp_device_t, nnp_device_close> dev_;
  Handle<nnp_comm_t, nnp_comm_destroy> comm_;
  size_t bounce_max_ = 0;
  // Each wait for a peer, in whole seconds, as libnnp was given it.
  long long timeout_s_ = 0;
  // Held by a lane's thread for every libnnp call but its waits for its
  // own stream: libnnp's handles are not for two threads at once.
  std::mutex issue_;
  // The collectives' lane, made with the group.
  std::unique_ptr<Lane> main_;
  // Sends to a peer and receives from it, a lane each, made at their
  // first use: (peer, 0 for sends or 1 for receives); (-1, 1) receives
  // from any source.
  std::mutex lanes_mutex_;
  std::map<std::pair<int, int>, std::unique_ptr<Lane>> p2p_;
  // Why the group can run nothing more, from a device event (onEvent());
  // empty while it can.
  mutable std::mutex broken_mutex_;
  std::string broken_;
  // Why the communicator failed, as its COMM_FAILED event says; empty
  // until then. Told to the waits for it (commFailureWithin()).
  std::string comm_failure_;
  mutable std::condition_variable comm_failed_;
  int comm_id_ = -1;
  // Collectives issued, counted as they are queued; torch may ask from
  // any thread.
  std::atomic<uint64_t> collectives_{0};
  // The device's events, read as they come; stopped once the lanes are.
  std::unique_ptr<EventWatch> events_;
};

} // namespace nnp_torch
