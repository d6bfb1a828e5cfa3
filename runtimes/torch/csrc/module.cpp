// SPDX-License-Identifier: MIT
// torch_nnp._C: what torch_nnp/__init__.py needs to register the backend.
#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>

#include "process_group.hpp"

namespace py = pybind11;

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def(
      "create_process_group",
      [](const c10::intrusive_ptr<c10d::Store>& store,
         int rank,
         int size,
         std::chrono::milliseconds timeout,
         int device) -> c10::intrusive_ptr<c10d::ProcessGroup> {
        return c10::make_intrusive<nnp_torch::ProcessGroupNNP>(
            store, rank, size, timeout, device);
      },
      py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
      py::arg("device"),
      // Joining waits for the other ranks: let this process's threads run.
      py::call_guard<py::gil_scoped_release>(),
      "The nnp process group of rank @rank of @size on nnp device @device.");
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
}
