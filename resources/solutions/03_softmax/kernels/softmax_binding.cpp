// Python entry point for the row softmax kernel: validates tensors, allocates the output
// and forwards raw pointers to whichever softmax_launch (CUDA or CPU) was linked in.

#include "../binding_registry.h"

#ifndef KWB_CPU_MODE
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#endif

// The stream is declared as void* so this one declaration links against both launchers:
// cudaStream_t is a pointer typedef and extern "C" symbols carry no parameter types.
extern "C" void softmax_launch(const float* x, float* y, int64_t rows, int64_t cols, void* stream);

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

// Softmax over the last dimension; any leading dimensions are flattened into rows.
static torch::Tensor softmax_forward(const torch::Tensor& x) {
    check_tensor(x, "x");
    TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
    auto y = torch::empty_like(x);
    const int64_t cols = x.size(-1);
    if (x.numel() == 0) {
        return y;
    }
    const int64_t rows = x.numel() / cols;
#ifdef KWB_CPU_MODE
    softmax_launch(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols, nullptr);
#else
    // Kernels must run on the tensor's device and on PyTorch's current stream, otherwise
    // they race with surrounding torch work and break stream-based timing.
    const c10::cuda::CUDAGuard device_guard(x.device());
    softmax_launch(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols,
                   at::cuda::getCurrentCUDAStream().stream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
#endif
    return y;
}

static void register_fn(pybind11::module& m) {
    m.def("softmax_forward", &softmax_forward, "Softmax over the last dimension (float32)",
          pybind11::arg("x"));
}

REGISTER_BINDING(softmax, register_fn);
