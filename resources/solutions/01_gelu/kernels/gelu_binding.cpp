// Python entry point for the GELU kernel: validates tensors, allocates the output and
// forwards raw pointers to whichever gelu_launch (CUDA or CPU) was linked in.

#include "../binding_registry.h"

#ifndef KWB_CPU_MODE
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#endif

// The stream is declared as void* so this one declaration links against both launchers:
// cudaStream_t is a pointer typedef and extern "C" symbols carry no parameter types.
extern "C" void gelu_launch(const float* x, float* y, int64_t n, void* stream);

static void check_tensor(const torch::Tensor& t, const char* name) {
    TORCH_CHECK(t.scalar_type() == torch::kFloat32, name, " must be float32, got ",
                t.scalar_type());
    TORCH_CHECK(t.is_contiguous(), name, " must be contiguous");
#ifdef KWB_CPU_MODE
    TORCH_CHECK(t.device().is_cpu(), name, " must be a CPU tensor (extension built in CPU mode)");
#else
    TORCH_CHECK(t.is_cuda(), name, " must be a CUDA tensor");
#endif
}

static torch::Tensor gelu_forward(const torch::Tensor& x) {
    check_tensor(x, "x");
    auto y = torch::empty_like(x);
    if (x.numel() == 0) {
        return y;
    }
#ifdef KWB_CPU_MODE
    gelu_launch(x.data_ptr<float>(), y.data_ptr<float>(), x.numel(), nullptr);
#else
    // Kernels must run on the tensor's device and on PyTorch's current stream, otherwise
    // they race with surrounding torch work and break stream-based timing.
    const c10::cuda::CUDAGuard device_guard(x.device());
    gelu_launch(x.data_ptr<float>(), y.data_ptr<float>(), x.numel(),
                at::cuda::getCurrentCUDAStream().stream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
#endif
    return y;
}

static void register_fn(pybind11::module& m) {
    m.def("gelu_forward", &gelu_forward, "GELU (tanh approximation) of a float32 tensor",
          pybind11::arg("x"));
}

REGISTER_BINDING(gelu, register_fn);
