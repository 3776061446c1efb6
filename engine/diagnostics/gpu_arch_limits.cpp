#include "engine/diagnostics/gpu_arch_limits.h"

#include <regex>

namespace kwb::diagnostics {

ArchLimits limitsForArch(const std::string& arch) {
    static const std::regex pattern(R"(^(?:sm|compute)_(\d+)[af]?$)");
    ArchLimits limits;
    std::smatch match;
    if (!std::regex_match(arch, match, pattern))
        return limits;
    const int cc = std::stoi(match[1]);
    limits.computeCapability = cc;
    // Opt-in maximum of shared memory per block (static + dynamic), in KB.
    int optInKb = 0;
    switch (cc) {
    case 50:
    case 52:
    case 53:
    case 60:
    case 61:
    case 62:
        optInKb = 48;
        break;
    case 70:
    case 72:
        optInKb = 96;
        break;
    case 75:
        optInKb = 64;
        break;
    case 80:
    case 87:
        optInKb = 163;
        break;
    case 86:
    case 89:
        optInKb = 99;
        break;
    case 90:
    case 100:
    case 101:
    case 103:
    case 110:
        optInKb = 227;
        break;
    case 120:
    case 121:
        optInKb = 99;
        break;
    default:
        return limits;
    }
    limits.maxSharedPerBlockOptInBytes = static_cast<long>(optInKb) * 1024;
    limits.known = true;
    return limits;
}

int maxThreadsForRegisters(int registers, const ArchLimits& limits) {
    if (registers <= 0)
        return limits.maxThreadsPerBlock;
    const int unit = limits.registerAllocationUnit;
    const int perWarp = (registers * 32 + unit - 1) / unit * unit;
    const int granularity = limits.warpAllocationGranularity;
    const int warps = limits.registersPerBlock / perWarp / granularity * granularity;
    const int threads = warps * 32;
    return threads < limits.maxThreadsPerBlock ? threads : limits.maxThreadsPerBlock;
}

} // namespace kwb::diagnostics
