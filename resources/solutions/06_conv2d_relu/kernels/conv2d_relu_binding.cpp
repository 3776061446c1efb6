// Python entry point for the fused Conv2d + bias + ReLU kernel: validates tensors,
// allocates the output and forwards raw pointers to whichever conv2d_relu_launch (CUDA or
// CPU) was linked in.

#include "../binding_registry.h"

#ifndef KWB_CPU_MODE
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#endif

// The stream is declared as void* so this one declaration links against both launchers:
// cudaStream_t is a pointer typedef and extern "C" symbols carry no parameter types.
extern "C" void conv2d_relu_launch(const float* x, const float* weight, const float* bias, float* y,
                                   int64_t n, int64_t c_in, int64_t h, int64_t w, int64_t c_out,
                                   int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w,
                                   int64_t pad_h, int64_t pad_w, void* stream);

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

// relu(conv2d(x, weight, bias)) for NCHW x, with zero padding, dilation 1 and groups 1.
static torch::Tensor conv2d_relu_forward(const torch::Tensor& x, const torch::Tensor& weight,
                                         const torch::Tensor& bias, int64_t stride_h,
                                         int64_t stride_w, int64_t pad_h, int64_t pad_w) {
    check_tensor(x, "x");
    check_tensor(weight, "weight");
    check_tensor(bias, "bias");
    TORCH_CHECK(x.dim() == 4, "x must be 4-D [N, C_in, H, W]");
    TORCH_CHECK(weight.dim() == 4, "weight must be 4-D [C_out, C_in, KH, KW]");
    TORCH_CHECK(weight.size(1) == x.size(1), "weight expects ", weight.size(1),
                " input channels but x has ", x.size(1), " (groups != 1 is not supported)");
    TORCH_CHECK(bias.dim() == 1 && bias.size(0) == weight.size(0), "bias must have shape [",
                weight.size(0), "]");
    TORCH_CHECK(weight.device() == x.device() && bias.device() == x.device(),
                "x, weight and bias must be on the same device");
    TORCH_CHECK(stride_h > 0 && stride_w > 0, "strides must be positive");
    TORCH_CHECK(pad_h >= 0 && pad_w >= 0, "padding must be non-negative");

    const int64_t n = x.size(0);
    const int64_t c_in = x.size(1);
    const int64_t h = x.size(2);
    const int64_t w = x.size(3);
    const int64_t c_out = weight.size(0);
    const int64_t kh = weight.size(2);
    const int64_t kw = weight.size(3);
    TORCH_CHECK(h + 2 * pad_h >= kh && w + 2 * pad_w >= kw,
                "kernel is larger than the padded input");
    const int64_t out_h = (h + 2 * pad_h - kh) / stride_h + 1;
    const int64_t out_w = (w + 2 * pad_w - kw) / stride_w + 1;

    auto y = torch::empty({n, c_out, out_h, out_w}, x.options());
    if (y.numel() == 0) {
        return y;
    }
#ifdef KWB_CPU_MODE
    conv2d_relu_launch(x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(),
                       y.data_ptr<float>(), n, c_in, h, w, c_out, kh, kw, stride_h, stride_w, pad_h,
                       pad_w, nullptr);
#else
    // Kernels must run on the tensor's device and on PyTorch's current stream, otherwise
    // they race with surrounding torch work and break stream-based timing.
    const c10::cuda::CUDAGuard device_guard(x.device());
    conv2d_relu_launch(x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(),
                       y.data_ptr<float>(), n, c_in, h, w, c_out, kh, kw, stride_h, stride_w, pad_h,
                       pad_w, at::cuda::getCurrentCUDAStream().stream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
#endif
    return y;
}

static void register_fn(pybind11::module& m) {
    m.def("conv2d_relu_forward", &conv2d_relu_forward,
          "relu(conv2d(x, weight, bias)) for NCHW float32, zero padding, dilation 1, groups 1",
          pybind11::arg("x"), pybind11::arg("weight"), pybind11::arg("bias"),
          pybind11::arg("stride_h"), pybind11::arg("stride_w"), pybind11::arg("pad_h"),
          pybind11::arg("pad_w"));
}

REGISTER_BINDING(conv2d_relu, register_fn);
