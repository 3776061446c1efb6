// Entry point of the workspace extension. The kernel binding files only register
// themselves; this file owns the one PYBIND11_MODULE so that adding or removing a kernel
// never requires touching a shared list.

#include "binding_registry.h"

#include <algorithm>
#include <stdexcept>
#include <string>

// torch.utils.cpp_extension passes -DTORCH_EXTENSION_NAME=<name>; the Python import name
// must equal the PyInit_ symbol, so follow it when present and fall back to the name the
// workbench build uses.
#ifndef TORCH_EXTENSION_NAME
#define TORCH_EXTENSION_NAME cuda_extension
#endif

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.doc() = "Kernel Workbench workspace extension";

    // Static-init order across translation units depends on link order; sorting keeps
    // the module's function order reproducible between builds.
    auto entries = kwb::binding_registry();
    std::stable_sort(
        entries.begin(), entries.end(),
        [](const kwb::BindingEntry& a, const kwb::BindingEntry& b) { return a.name < b.name; });

    // Two files registering under one name usually means a kernel was copied without being
    // renamed; failing the import is clearer than pybind11 silently adding an overload.
    for (size_t i = 1; i < entries.size(); ++i) {
        if (entries[i].name == entries[i - 1].name) {
            throw std::runtime_error("duplicate REGISTER_BINDING name: " + entries[i].name);
        }
    }

    for (const auto& entry : entries) {
        entry.fn(m);
    }
}
