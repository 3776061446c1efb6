// Python entry point for the fused RMSNorm + SiLU gating kernel: validates tensors,
// allocates the output and forwards raw pointers to whichever rmsnorm_silu_launch (CUDA or
// CPU) was linked in.

#include "../binding_registry.h"

#ifndef KWB_CPU_MODE
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#endif

// The stream is declared as void* so this one declaration links against both launchers:
// cudaStream_t is a pointer typedef and extern "C" symbols carry no parameter types.
extern "C" void rmsnorm_silu_launch(const float* x, const float* gate, const float* weight,
                                    float* out, int64_t rows, int64_t hidden, float eps,
                                    void* stream);

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

// rmsnorm(x) * weight * silu(gate) over the last dimension; leading dimensions are
// flattened into rows.
static torch::Tensor rmsnorm_silu_forward(const torch::Tensor& x, const torch::Tensor& gate,
                                          const torch::Tensor& weight, double eps) {
    check_tensor(x, "x");
    check_tensor(gate, "gate");
    check_tensor(weight, "weight");
    TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
    TORCH_CHECK(x.sizes() == gate.sizes(), "x and gate must have the same shape, got ", x.sizes(),
                " and ", gate.sizes());
    const int64_t hidden = x.size(-1);
    TORCH_CHECK(weight.dim() == 1 && weight.size(0) == hidden, "weight must have shape [", hidden,
                "]");
    TORCH_CHECK(gate.device() == x.device() && weight.device() == x.device(),
                "x, gate and weight must be on the same device");
    auto out = torch::empty_like(x);
    if (x.numel() == 0) {
        return out;
    }
    const int64_t rows = x.numel() / hidden;
#ifdef KWB_CPU_MODE
    rmsnorm_silu_launch(x.data_ptr<float>(), gate.data_ptr<float>(), weight.data_ptr<float>(),
                        out.data_ptr<float>(), rows, hidden, static_cast<float>(eps), nullptr);
#else
    // Kernels must run on the tensor's device and on PyTorch's current stream, otherwise
    // they race with surrounding torch work and break stream-based timing.
    const c10::cuda::CUDAGuard device_guard(x.device());
    rmsnorm_silu_launch(x.data_ptr<float>(), gate.data_ptr<float>(), weight.data_ptr<float>(),
                        out.data_ptr<float>(), rows, hidden, static_cast<float>(eps),
                        at::cuda::getCurrentCUDAStream().stream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
#endif
    return out;
}

static void register_fn(pybind11::module& m) {
    m.def("rmsnorm_silu_forward", &rmsnorm_silu_forward,
          "rmsnorm(x) * weight * silu(gate) over the last dimension (float32)", pybind11::arg("x"),
          pybind11::arg("gate"), pybind11::arg("weight"), pybind11::arg("eps"));
}

REGISTER_BINDING(rmsnorm_silu, register_fn);
