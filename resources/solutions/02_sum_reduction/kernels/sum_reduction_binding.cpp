// Python entry point for the sum reduction kernel: validates tensors, allocates the output
// and forwards raw pointers to whichever sum_reduction_launch (CUDA or CPU) was linked in.

#include "../binding_registry.h"

#include <vector>

#ifndef KWB_CPU_MODE
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#endif

// The stream is declared as void* so this one declaration links against both launchers:
// cudaStream_t is a pointer typedef and extern "C" symbols carry no parameter types.
extern "C" void sum_reduction_launch(const float* x, float* y, int64_t outer, int64_t reduce,
                                     int64_t inner, void* stream);

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

// torch.sum(x, dim, keepdim=True). Negative dims count from the end, as in PyTorch.
static torch::Tensor sum_reduction_forward(const torch::Tensor& x, int64_t dim) {
    check_tensor(x, "x");
    TORCH_CHECK(x.dim() >= 1, "x must have at least one dimension");
    const int64_t ndim = x.dim();
    TORCH_CHECK(dim >= -ndim && dim < ndim, "dim ", dim, " out of range for a ", ndim, "-D tensor");
    if (dim < 0) {
        dim += ndim;
    }
    int64_t outer = 1;
    int64_t inner = 1;
    for (int64_t d = 0; d < dim; ++d) {
        outer *= x.size(d);
    }
    for (int64_t d = dim + 1; d < ndim; ++d) {
        inner *= x.size(d);
    }
    const int64_t reduce = x.size(dim);

    std::vector<int64_t> out_shape(x.sizes().begin(), x.sizes().end());
    out_shape[static_cast<size_t>(dim)] = 1;
    auto y = torch::empty(out_shape, x.options());
    if (y.numel() == 0) {
        return y;
    }
#ifdef KWB_CPU_MODE
    sum_reduction_launch(x.data_ptr<float>(), y.data_ptr<float>(), outer, reduce, inner, nullptr);
#else
    // Kernels must run on the tensor's device and on PyTorch's current stream, otherwise
    // they race with surrounding torch work and break stream-based timing.
    const c10::cuda::CUDAGuard device_guard(x.device());
    sum_reduction_launch(x.data_ptr<float>(), y.data_ptr<float>(), outer, reduce, inner,
                         at::cuda::getCurrentCUDAStream().stream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
#endif
    return y;
}

static void register_fn(pybind11::module& m) {
    m.def("sum_reduction_forward", &sum_reduction_forward,
          "Sum over one dimension, keeping it with size 1 (float32)", pybind11::arg("x"),
          pybind11::arg("dim"));
}

REGISTER_BINDING(sum_reduction, register_fn);
