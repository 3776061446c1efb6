// The "kernel" of this binding is torch itself: ATen operators called from C++, where a guard
// that only patches Python attributes would never see them.
#include "../binding_registry.h"

static torch::Tensor cheat_forward(const torch::Tensor& x, const torch::Tensor& y,
                                   const torch::Tensor& scale) {
    return torch::sigmoid(x * scale + y);
}

static void register_fn(pybind11::module& m) {
    m.def("cheat_forward", &cheat_forward);
}

REGISTER_BINDING(cheat, register_fn);
