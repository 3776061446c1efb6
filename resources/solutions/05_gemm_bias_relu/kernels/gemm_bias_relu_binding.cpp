// Python entry point for the fused GEMM + bias + ReLU kernel: validates tensors, allocates
// the output and forwards raw pointers to whichever gemm_bias_relu_launch (CUDA or CPU)
// was linked in.

#include "../binding_registry.h"

#include <vector>

#ifndef KWB_CPU_MODE
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#endif

// The stream is declared as void* so this one declaration links against both launchers:
// cudaStream_t is a pointer typedef and extern "C" symbols carry no parameter types.
extern "C" void gemm_bias_relu_launch(const float* a, const float* w, const float* bias, float* out,
                                      int64_t M, int64_t N, int64_t K, void* stream);

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

// relu(x @ weight^T + bias) with nn.Linear's weight layout [out_features, in_features].
// Leading dimensions of x are flattened, as nn.Linear does.
static torch::Tensor gemm_bias_relu_forward(const torch::Tensor& x, const torch::Tensor& weight,
                                            const torch::Tensor& bias) {
    check_tensor(x, "x");
    check_tensor(weight, "weight");
    check_tensor(bias, "bias");
    TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
    TORCH_CHECK(weight.dim() == 2, "weight must be 2-D [out_features, in_features]");
    const int64_t K = x.size(-1);
    const int64_t N = weight.size(0);
    TORCH_CHECK(weight.size(1) == K, "weight has in_features ", weight.size(1), " but x has ", K);
    TORCH_CHECK(bias.dim() == 1 && bias.size(0) == N, "bias must have shape [", N, "]");
    TORCH_CHECK(weight.device() == x.device() && bias.device() == x.device(),
                "x, weight and bias must be on the same device");

    std::vector<int64_t> out_shape(x.sizes().begin(), x.sizes().end());
    out_shape.back() = N;
    auto out = torch::empty(out_shape, x.options());
    if (out.numel() == 0) {
        return out;
    }
    // Derived from the output so that K == 0 (relu(bias) rows) needs no special case.
    const int64_t M = out.numel() / N;
#ifdef KWB_CPU_MODE
    gemm_bias_relu_launch(x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(),
                          out.data_ptr<float>(), M, N, K, nullptr);
#else
    // Kernels must run on the tensor's device and on PyTorch's current stream, otherwise
    // they race with surrounding torch work and break stream-based timing.
    const c10::cuda::CUDAGuard device_guard(x.device());
    gemm_bias_relu_launch(x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(),
                          out.data_ptr<float>(), M, N, K,
                          at::cuda::getCurrentCUDAStream().stream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
#endif
    return out;
}

static void register_fn(pybind11::module& m) {
    m.def("gemm_bias_relu_forward", &gemm_bias_relu_forward,
          "relu(x @ weight^T + bias) in one fused kernel (float32, nn.Linear weight layout)",
          pybind11::arg("x"), pybind11::arg("weight"), pybind11::arg("bias"));
}

REGISTER_BINDING(gemm_bias_relu, register_fn);
