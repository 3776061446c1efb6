// Python entry point for the fused scale + residual add + sigmoid kernel: validates
// tensors, allocates the output and forwards raw pointers to whichever
// scale_residual_launch (CUDA or CPU) was linked in.

#include "../binding_registry.h"

#ifndef KWB_CPU_MODE
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#endif

// The stream is declared as void* so this one declaration links against both launchers:
// cudaStream_t is a pointer typedef and extern "C" symbols carry no parameter types.
extern "C" void scale_residual_launch(const float* x, const float* y, const float* scale,
                                      float* out, int64_t rows, int64_t cols, void* stream);

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

// sigmoid(x * scale + y); scale broadcasts over the last dimension. No general
// broadcasting: x and y must have identical shapes.
static torch::Tensor scale_residual_sigmoid_forward(const torch::Tensor& x, const torch::Tensor& y,
                                                    const torch::Tensor& scale) {
    check_tensor(x, "x");
    check_tensor(y, "y");
    check_tensor(scale, "scale");
    TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
    TORCH_CHECK(x.sizes() == y.sizes(), "x and y must have the same shape, got ", x.sizes(),
                " and ", y.sizes());
    const int64_t cols = x.size(-1);
    TORCH_CHECK(scale.dim() == 1 && scale.size(0) == cols, "scale must have shape [", cols, "]");
    TORCH_CHECK(y.device() == x.device() && scale.device() == x.device(),
                "x, y and scale must be on the same device");
    auto out = torch::empty_like(x);
    if (x.numel() == 0) {
        return out;
    }
    const int64_t rows = x.numel() / cols;
#ifdef KWB_CPU_MODE
    scale_residual_launch(x.data_ptr<float>(), y.data_ptr<float>(), scale.data_ptr<float>(),
                          out.data_ptr<float>(), rows, cols, nullptr);
#else
    // Kernels must run on the tensor's device and on PyTorch's current stream, otherwise
    // they race with surrounding torch work and break stream-based timing.
    const c10::cuda::CUDAGuard device_guard(x.device());
    scale_residual_launch(x.data_ptr<float>(), y.data_ptr<float>(), scale.data_ptr<float>(),
                          out.data_ptr<float>(), rows, cols,
                          at::cuda::getCurrentCUDAStream().stream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
#endif
    return out;
}

static void register_fn(pybind11::module& m) {
    m.def("scale_residual_sigmoid_forward", &scale_residual_sigmoid_forward,
          "sigmoid(x * scale + y) with a per-feature scale (float32)", pybind11::arg("x"),
          pybind11::arg("y"), pybind11::arg("scale"));
}

REGISTER_BINDING(scale_residual, register_fn);
