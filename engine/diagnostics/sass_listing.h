#pragma once

#include "engine/diagnostics/cuda_toolkit.h"

#include <stop_token>
#include <string>
#include <utility>
#include <vector>

namespace kwb::diagnostics {

// SASS (the GPU's machine code) of a compiled object, as cuobjdump or nvdisasm prints it.
struct SassListing {
    bool available = false; // false: no disassembler, or it failed (see `error`)
    std::string tool;       // the disassembler that ran
    std::string error;
    std::string text; // its whole output
    // Per function, in listing order: mangled name -> that function's lines.
    std::vector<std::pair<std::string, std::string>> functions;
};

// Splits a listing into functions: cuobjdump marks each with "Function : NAME", nvdisasm with a
// ".text.NAME:" label.
std::vector<std::pair<std::string, std::string>> splitSassFunctions(const std::string& listing);

// Disassembles a cubin or an object file: `cuobjdump -sass FILE` where cuobjdump exists, else
// `nvdisasm FILE` (cubin only). Never throws; without either tool `available` is false.
SassListing disassemble(const std::string& binaryPath, const CudaToolkit& toolkit,
                        std::stop_token stop = {});

} // namespace kwb::diagnostics
