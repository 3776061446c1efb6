// Registry that lets every kernel binding file contribute functions to the single
// cuda_extension module without a central list that has to be edited per solution.
//
// Each *_binding.cpp calls REGISTER_BINDING once at namespace scope; binding.cpp then
// hands the Python module to every registered function inside PYBIND11_MODULE.

#pragma once

#include <string>
#include <torch/extension.h>
#include <vector>

namespace kwb {

using BindingFn = void (*)(pybind11::module&);

struct BindingEntry {
    std::string name;
    BindingFn fn;
};

// A function-local static instead of a namespace-scope vector: registrars in other
// translation units run during static initialization in unspecified order, and a
// namespace-scope vector could still be unconstructed when the first one pushes into it.
// `inline` keeps a single instance across all translation units of the extension.
inline std::vector<BindingEntry>& binding_registry() {
    static std::vector<BindingEntry> entries;
    return entries;
}

struct BindingRegistrar {
    BindingRegistrar(const char* name, BindingFn fn) { binding_registry().push_back({name, fn}); }
};

} // namespace kwb

// `name` must be a plain identifier: it is pasted into the registrar's variable name so two
// bindings in one translation unit do not collide, and stringified for diagnostics.
// The registrar has internal linkage, so the object file must be linked directly into the
// extension (not pulled from a static archive, where the linker would drop it as unused).
#define REGISTER_BINDING(name, register_fn)                                                        \
    static ::kwb::BindingRegistrar kwb_binding_registrar_##name(#name, register_fn)
