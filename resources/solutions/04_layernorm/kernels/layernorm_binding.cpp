// Python entry point for the LayerNorm kernel: validates tensors, allocates the output and
// forwards raw pointers to whichever layernorm_launch (CUDA or CPU) was linked in.

#include "../binding_registry.h"

#ifndef KWB_CPU_MODE
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#endif

// The stream is declared as void* so this one declaration links against both launchers:
// cudaStream_t is a pointer typedef and extern "C" symbols carry no parameter types.
extern "C" void layernorm_launch(const float* x, const float* weight, const float* bias, float* y,
                                 int64_t rows, int64_t hidden, float eps, void* stream);

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

// LayerNorm over the last dimension; leading dimensions are flattened into rows.
static torch::Tensor layernorm_forward(const torch::Tensor& x, const torch::Tensor& weight,
                                       const torch::Tensor& bias, double eps) {
    check_tensor(x, "x");
    check_tensor(weight, "weight");
    check_tensor(bias, "bias");
    TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
    const int64_t hidden = x.size(-1);
    TORCH_CHECK(weight.dim() == 1 && weight.size(0) == hidden, "weight must have shape [", hidden,
                "]");
    TORCH_CHECK(bias.dim() == 1 && bias.size(0) == hidden, "bias must have shape [", hidden, "]");
    TORCH_CHECK(weight.device() == x.device() && bias.device() == x.device(),
                "x, weight and bias must be on the same device");
    auto y = torch::empty_like(x);
    if (x.numel() == 0) {
        return y;
    }
    const int64_t rows = x.numel() / hidden;
#ifdef KWB_CPU_MODE
    layernorm_launch(x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(),
                     y.data_ptr<float>(), rows, hidden, static_cast<float>(eps), nullptr);
#else
    // Kernels must run on the tensor's device and on PyTorch's current stream, otherwise
    // they race with surrounding torch work and break stream-based timing.
    const c10::cuda::CUDAGuard device_guard(x.device());
    layernorm_launch(x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(),
                     y.data_ptr<float>(), rows, hidden, static_cast<float>(eps),
                     at::cuda::getCurrentCUDAStream().stream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
#endif
    return y;
}

static void register_fn(pybind11::module& m) {
    m.def("layernorm_forward", &layernorm_forward,
          "LayerNorm over the last dimension with affine weight and bias (float32)",
          pybind11::arg("x"), pybind11::arg("weight"), pybind11::arg("bias"), pybind11::arg("eps"));
}

REGISTER_BINDING(layernorm, register_fn);
