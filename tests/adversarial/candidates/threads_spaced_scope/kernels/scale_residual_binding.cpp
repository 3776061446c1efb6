// torch computes the whole output on a thread of the extension's own, joined before the call
// returns: a thread starts with none of its creator's thread-local dispatch modes, so the
// operator guard does not see torch's operators there. The scope is spelled `std :: thread` and
// <future> brings the type in, so no pattern written as `std::thread` or `<thread>` matches.
#include "../binding_registry.h"
#include <future>

static torch::Tensor scale_residual_sigmoid_forward(const torch::Tensor& x, const torch::Tensor& y,
                                                    const torch::Tensor& scale) {
    torch::Tensor out;
    std :: thread worker([&] { out = torch::sigmoid(torch::addcmul(y, x, scale)); });
    worker.join();
    return out;
}

static void register_fn(pybind11::module& m) {
    m.def("scale_residual_sigmoid_forward", &scale_residual_sigmoid_forward, "", pybind11::arg("x"),
          pybind11::arg("y"), pybind11::arg("scale"));
}
REGISTER_BINDING(scale_residual, register_fn);
