# SPDX-License-Identifier: MIT
# Builds torch_nnp, the "nnp" torch.distributed backend, against this
# checkout's libnnp: `make torch` runs it (docs/torch.md). NNP_INCLUDE and
# NNP_LIBDIR name libnnp's headers and library, the checkout's by default;
# NNP_RPATH where _C finds libnnp.so.0 (the checkout's build/lib by
# default; empty for none, as the Debian package, whose libnnp0 is in the
# system's library path).
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, include_paths

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.join(here, "..", "..")
include = os.environ.get("NNP_INCLUDE", os.path.join(top, "libnnp", "include"))
libdir = os.environ.get("NNP_LIBDIR", os.path.join(top, "build", "lib"))
# build/torch/torch_nnp/_C*.so finds build/lib/libnnp.so.
rpath = os.environ.get("NNP_RPATH", "$ORIGIN/../../lib")

setup(
    name="torch_nnp",
    version=os.environ.get("NNP_VERSION", "0"),
    packages=["torch_nnp"],
    ext_modules=[
        CppExtension(
            "torch_nnp._C",
            ["csrc/backend.cpp", "csrc/events.cpp", "csrc/module.cpp"],
            include_dirs=[include],
            library_dirs=[libdir],
            libraries=["nnp"],
            # torch's headers as system headers: their warnings are not ours.
            extra_compile_args=["-std=c++17", "-Wall", "-Wextra", "-Werror"]
            + ["-isystem" + d for d in include_paths()],
            extra_link_args=["-Wl,-rpath," + rpath] if rpath else [],
        )
    ],
    # torch 2.6 imports every package of this entry point group when it
    # is itself imported (backend autoloading; TORCH_DEVICE_BACKEND_AUTOLOAD=0
    # turns it off): init_process_group("nnp") then needs no import of ours.
    entry_points={"torch.backends": ["nnp = torch_nnp:_autoload"]},
    cmdclass={"build_ext": BuildExtension},
)
