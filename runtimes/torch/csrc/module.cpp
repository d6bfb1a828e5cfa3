// SPDX-License-Identifier: MIT
// torch_nnp._C: what torch_nnp/__init__.py needs to register the backend.
#include <map>
#include <string>

#include <pybind11/chrono.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include "backend.hpp"

namespace py = pybind11;

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def(
      "create_backend",
      [](const c10::intrusive_ptr<c10d::Store>& store,
         int rank,
         int size,
         std::chrono::milliseconds timeout,
         int device) -> c10::intrusive_ptr<nnp_torch::BackendBase> {
        return c10::make_intrusive<nnp_torch::NnpBackend>(
            store, rank, size, timeout, device);
      },
      py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
      py::arg("device"),
      // Joining waits for the other ranks: let this process's threads run.
      py::call_guard<py::gil_scoped_release>(),
      "The nnp backend of rank @rank of @size on nnp device @device.");
  m.def(
      "abort",
      [](const c10::intrusive_ptr<nnp_torch::BackendBase>& backend) {
        auto* nnp = dynamic_cast<nnp_torch::NnpBackend*>(backend.get());
        TORCH_CHECK_TYPE(
            nnp, "nnp: abort: the group's backend is ",
            backend->getBackendName(), ", not nnp");
        nnp->abort();
      },
      py::arg("backend"),
      // A lane may hold the issue lock while it frees a tensor, which
      // takes the GIL.
      py::call_guard<py::gil_scoped_release>(),
      "Abort nnp backend @backend at once (torch_nnp.abort()).");
  m.def(
      "device_count",
      [] {
        int count;
        nnp_result_t r = nnp_device_count(&count);
        TORCH_CHECK(
            r == NNP_SUCCESS, "nnp: counting the devices: ", nnp_strerror(r),
            ": ", nnp_get_last_error());
        return count;
      },
      "The number of nnp devices this process sees (NNP_VISIBLE_DEVICES).");
  m.def(
      "device_counters",
      [](int device) {
        nnp_device_t* dev = nullptr;
        nnp_device_counters c{};
        c.size = sizeof(c);
        nnp_result_t r = nnp_device_open(device, &dev);
        if (r == NNP_SUCCESS) {
          r = nnp_device_get_counters(dev, &c);
          nnp_device_close(dev);
        }
        TORCH_CHECK(
            r == NNP_SUCCESS, "nnp: the counters of device ", device, ": ",
            nnp_strerror(r), ": ", nnp_get_last_error());
        return std::map<std::string, uint64_t>{
            {"host_dma_bytes", c.host_dma_bytes},
            {"local_bytes", c.local_bytes},
            {"cmds_completed", c.cmds_completed},
            {"cmds_failed", c.cmds_failed},
            {"mem_used", c.mem_used},
            {"mem_objects", c.mem_objects},
            {"peer_dma_bytes", c.peer_dma_bytes},
        };
      },
      py::arg("device"),
      "Device @device's counters, every process's work together "
      "(nnp_device_get_counters).");
}
