// SPDX-License-Identifier: MIT
#include "events.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <c10/util/Exception.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace nnp_torch {

EventWatch::EventWatch(nnp_device_t* dev, Handler handler)
    : dev_(dev),
      handler_(std::move(handler)),
      stop_(eventfd(0, EFD_CLOEXEC)) {
  TORCH_CHECK(
      stop_ >= 0, "nnp: an eventfd for the device events' thread: ",
      std::strerror(errno));
  thread_ = std::thread(&EventWatch::run, this);
}

EventWatch::~EventWatch() {
  const uint64_t one = 1;

  // An eventfd's write of 8 bytes cannot fail short of overflow.
  (void)!write(stop_, &one, sizeof(one));
  thread_.join();
  close(stop_);
}

// Sleeps in poll() until the device has events or the watch ends: no
// wake-ups in between. The driver queues events per open file; a read
// error other than "none yet" (a driver without events, 1.10 and
// earlier, says NOT_SUPPORTED) ends the watch rather than spin on it.
void EventWatch::run() {
  pollfd fds[2] = {{nnp_device_fd(dev_), POLLIN, 0}, {stop_, POLLIN, 0}};

  for (;;) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      return;
    }
    if (fds[1].revents || (fds[0].revents & (POLLERR | POLLHUP | POLLNVAL)))
      return;
    for (;;) {
      nnp_device_event ev{};
      ev.size = sizeof(ev);
      const nnp_result_t r = nnp_device_next_event(dev_, &ev, 0);
      if (r == NNP_ERROR_TIMEOUT)
        break;
      if (r != NNP_SUCCESS)
        return;
      handler_(ev);
    }
  }
}

} // namespace nnp_torch
