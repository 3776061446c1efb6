"""The fast-path kernel runtime: launch NVRTC-compiled kernels on torch tensors.

In a fast-path workspace ``kernels/*.cu`` hold device code only. The workbench compiles each
file with NVRTC into ``build/kwb_kernels/<stem>.cubin`` plus a manifest that lists the file's
kernels and their parameter types (read from the PTX). ``model_new.py`` then does::

    import kwb_kernels

    gelu = kwb_kernels.load("gelu")              # kernels/gelu.cu

    class ModelNew(torch.nn.Module):
        def forward(self, x):
            y = torch.empty_like(x)
            n = x.numel()
            gelu.gelu_kernel(grid=((n + 255) // 256,), block=(256,), args=(x, y, n))
            return y

There is no torch-extension build: loading is ``cuModuleLoadData`` and a launch is
``cuLaunchKernel`` on torch's current stream, so an edit costs one NVRTC compile (about a
tenth of a second) instead of a C++ build of the binding against torch's headers.

Arguments are converted by the kernel's declared parameter types: a tensor becomes its data
pointer (it must be a CUDA tensor on the current device), a Python int or float becomes the
declared integer or float width, ``bytes`` fill a by-value struct parameter of the same size.
A wrong count or type is a ``TypeError`` that names the kernel and the parameter.
"""

from .launcher import KernelModule, LaunchCounter, configure, kernels_directory, load

__all__ = ["KernelModule", "LaunchCounter", "configure", "kernels_directory", "load"]
