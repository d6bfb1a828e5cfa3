// SPDX-License-Identifier: MIT
// One operation of the nnp process group, done by its worker thread.
#pragma once

#include <exception>
#include <memory>
#include <utility>
#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

namespace nnp_torch {

// Done once the worker has run the operation on the device, synchronized
// the stream and copied the results back into the tensors. wait() and
// the Future (DDP's comm hooks take it from getFuture()) both end then;
// on failure both carry the same exception, with libnnp's reason.
class Work : public c10d::Work {
 public:
  // @source, for a receive from any source, is where its job writes the
  // sender's rank.
  Work(
      int rank,
      c10d::OpType type,
      std::vector<at::Tensor> outputs,
      std::shared_ptr<int> source = nullptr)
      : c10d::Work(rank, type),
        outputs_(std::move(outputs)),
        source_(std::move(source)),
        future_(c10::make_intrusive<c10::ivalue::Future>(
            c10::ListType::create(c10::TensorType::get()))) {}

  std::vector<at::Tensor> result() override {
    return outputs_;
  }

  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override {
    return future_;
  }

  // The rank a receive from any source took its message from, once it
  // is done (-1 if it failed); other operations have none.
  int sourceRank() const override {
    return source_ ? *source_ : c10d::Work::sourceRank();
  }

  // Called once, by the worker; @error is null on success.
  void complete(std::exception_ptr error) {
    finish(error);
    if (error)
      future_->setError(error);
    else
      future_->markCompleted(c10::IValue(outputs_));
  }

 private:
  const std::vector<at::Tensor> outputs_;
  const std::shared_ptr<int> source_;
  const c10::intrusive_ptr<c10::ivalue::Future> future_;
};

} // namespace nnp_torch
