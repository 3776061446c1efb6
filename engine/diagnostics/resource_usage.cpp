#include "engine/diagnostics/resource_usage.h"

#include "engine/diagnostics/demangle.h"
#include "engine/diagnostics/gpu_arch_limits.h"
#include "engine/diagnostics/ptx_kernel_facts.h"
#include "engine/diagnostics/ptxas_verbose_log.h"

#include <algorithm>

namespace kwb::diagnostics {

std::vector<ResourceUsage> collectResourceUsage(const std::string& ptxasLog, const std::string& ptx,
                                                const std::string& arch) {
    const PtxasReport report = parsePtxasVerbose(ptxasLog);
    const std::vector<PtxKernelFacts> facts = scanPtxKernels(ptx);
    std::vector<ResourceUsage> kernels;
    for (const PtxasFunctionReport& f : report.functions) {
        if (!f.isEntry)
            continue;
        ResourceUsage u;
        u.mangledName = f.mangledName;
        u.name = demangleSymbol(f.mangledName);
        u.arch = f.arch.empty() ? arch : f.arch;
        u.registers = f.registers;
        u.barriers = f.barriers;
        u.staticSharedBytes = f.sharedBytes;
        u.constantBytes = f.constantBytes;
        u.localBytes = f.stackFrameBytes;
        u.spillStoreBytes = f.spillStoreBytes;
        u.spillLoadBytes = f.spillLoadBytes;
        u.cumulativeStackBytes = f.cumulativeStackBytes;

        const ArchLimits limits = limitsForArch(u.arch);
        u.maxThreadsPerBlock = maxThreadsForRegisters(u.registers, limits);
        auto fact = std::find_if(facts.begin(), facts.end(), [&](const PtxKernelFacts& k) {
            return k.mangledName == f.mangledName;
        });
        if (fact != facts.end()) {
            if (fact->launchBoundThreads > 0) {
                u.maxThreadsPerBlock =
                    std::min(fact->launchBoundThreads, limits.maxThreadsPerBlock);
                u.maxThreadsFromLaunchBounds = true;
            }
            u.usesDynamicShared = fact->usesDynamicShared;
        }
        u.dynamicSharedAvailableBytes =
            std::max(0L, limits.maxSharedPerBlockOptInBytes - u.staticSharedBytes);
        kernels.push_back(std::move(u));
    }
    return kernels;
}

} // namespace kwb::diagnostics
