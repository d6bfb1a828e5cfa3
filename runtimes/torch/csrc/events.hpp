// SPDX-License-Identifier: MIT
// A thread that reads a device's events (nnp_device_next_event) as they
// come, so that the backend acts on a failure at once rather than at its
// next call (docs/torch.md, Failures).
#pragma once

#include <functional>
#include <thread>

#include <nnp/nnp.h>

namespace nnp_torch {

class EventWatch {
 public:
  using Handler = std::function<void(const nnp_device_event&)>;

  // Hands each event of @dev to @handler, on its own thread, until it is
  // destroyed; @dev must outlive it. A handle's events go to one reader:
  // nothing else may read @dev's.
  EventWatch(nnp_device_t* dev, Handler handler);
  ~EventWatch();

  EventWatch(const EventWatch&) = delete;
  EventWatch& operator=(const EventWatch&) = delete;

 private:
  void run();

  nnp_device_t* const dev_;
  const Handler handler_;
  const int stop_; // an eventfd: written once, to end the thread
  std::thread thread_;
};

} // namespace nnp_torch
