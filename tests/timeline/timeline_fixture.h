#pragma once

// Synthetic kernel timelines for the timeline widget tests and benchmark, shaped like a profiled
// evaluation: NVTX phases eager / compile / candidate, each with timed iterations, kernels with
// repeating names on a main stream and a few side streams, launch configurations per name.
// The real TimelineBuilder turns CUPTI records into the same KernelTimeline; this stands in for
// it so widget tests do not depend on CUPTI.

#include "engine/timeline/kernel_timeline.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kwb::testing {

struct SyntheticKernelRecord {
    std::uint32_t streamId = 0;
    std::int64_t startNs = 0;
    std::int64_t endNs = 0;
    std::uint32_t nameId = 0;
};

struct SyntheticRangeRecord {
    std::int64_t startNs = 0;
    std::int64_t endNs = 0;
    std::uint32_t nameId = 0;
    std::uint32_t depth = 0;
};

// What a trace file or the CUPTI reader would hand over: flat records in arrival order.
struct SyntheticRecords {
    std::vector<std::string> names;
    std::vector<std::string> demangled;
    std::vector<kwb::timeline::KernelLaunch> launchPerName;
    std::vector<SyntheticKernelRecord> kernels;
    std::vector<SyntheticRangeRecord> ranges;
    kwb::timeline::DroppedCounts dropped;
};

struct SyntheticSpec {
    std::size_t kernels = 20000;
    int sideStreams = 3;         // besides the main stream 7
    int iterationsPerPhase = 40; // NVTX "iteration" ranges per phase
    std::uint64_t seed = 42;
    kwb::timeline::DroppedCounts dropped{};
};

namespace detail {
inline std::uint64_t splitMix(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

struct KernelKind {
    const char* mangled;
    const char* demangled;
    std::int64_t meanNs;
    std::uint32_t grid;
    std::uint32_t block;
    std::uint32_t registers;
    std::uint32_t staticShared;
    std::uint32_t dynamicShared;
};

// Per phase, the kernels one iteration launches in order (names repeat across iterations).
inline const std::vector<std::vector<KernelKind>>& phaseKernels() {
    static const std::vector<std::vector<KernelKind>> kinds = {
        {{"sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32",
          "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32", 42000, 264, 256, 168, 0,
          98304},
         {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_T1_",
          "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >"
          "(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
          2500, 1024, 128, 16, 0, 0},
         {"_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_15gpu_kernel_implIN_3addEEEvRNS_"
          "18TensorIteratorBaseERKT_EUliE_EEviT1_",
          "void at::native::elementwise_kernel<128, 2, at::native::add>(int, at::native::add)",
          6000, 2048, 128, 28, 0, 0},
         {"_ZN2at6native13reduce_kernelILi512ELi1EEEvv", "void at::native::reduce_kernel<512, 1>()",
          9000, 132, 512, 40, 4096, 0}},
        {{"triton_poi_fused_addmm_relu_0", "triton_poi_fused_addmm_relu_0", 1500, 4096, 128, 24, 0,
          0},
         {"triton_tem_fused_mm_1", "triton_tem_fused_mm_1", 35000, 132, 256, 232, 0, 147456}},
        {{"_Z20fused_gemm_bias_reluPKfS0_S0_Pfiii",
          "fused_gemm_bias_relu(float const*, float const*, float const*, float*, int, int, int)",
          30000, 528, 256, 128, 32768, 65536},
         {"_Z11tiny_memsetPfi", "tiny_memset(float*, int)", 800, 64, 256, 8, 0, 0}},
    };
    return kinds;
}
} // namespace detail

inline SyntheticRecords generateRecords(const SyntheticSpec& spec) {
    using kwb::timeline::KernelLaunch;
    SyntheticRecords out;
    out.dropped = spec.dropped;
    std::uint64_t rng = spec.seed;
    const auto& phases = detail::phaseKernels();
    std::vector<std::vector<std::uint32_t>> phaseNameIds;
    for (const auto& phase : phases) {
        phaseNameIds.emplace_back();
        for (const auto& kind : phase) {
            phaseNameIds.back().push_back(static_cast<std::uint32_t>(out.names.size()));
            out.names.emplace_back(kind.mangled);
            out.demangled.emplace_back(kind.demangled);
            KernelLaunch launch;
            launch.grid[0] = kind.grid;
            launch.block[0] = kind.block;
            launch.registersPerThread = kind.registers;
            launch.staticSharedBytes = kind.staticShared;
            launch.dynamicSharedBytes = kind.dynamicShared;
            out.launchPerName.push_back(launch);
        }
    }
    const char* phaseNames[] = {"eager", "compile", "candidate"};
    std::uint32_t phaseRangeIds[3];
    for (int p = 0; p < 3; ++p) {
        phaseRangeIds[p] = static_cast<std::uint32_t>(out.names.size());
        out.names.emplace_back(phaseNames[p]);
        out.demangled.emplace_back(phaseNames[p]);
        out.launchPerName.push_back({});
    }
    const auto iterationId = static_cast<std::uint32_t>(out.names.size());
    out.names.emplace_back("iteration");
    out.demangled.emplace_back("iteration");
    out.launchPerName.push_back({});

    const int streams = 1 + spec.sideStreams;
    std::vector<std::int64_t> cursor(static_cast<std::size_t>(streams), 5000);
    const auto streamIdOf = [](int s) { return s == 0 ? 7u : 12u + static_cast<std::uint32_t>(s); };
    out.kernels.reserve(spec.kernels);
    const std::size_t perPhase = spec.kernels / 3;
    for (int p = 0; p < 3; ++p) {
        const std::size_t phaseKernels = p == 2 ? spec.kernels - 2 * perPhase : perPhase;
        const std::size_t perIteration = std::max<std::size_t>(
            1, phaseKernels / static_cast<std::size_t>(spec.iterationsPerPhase));
        const std::int64_t phaseStart = *std::max_element(cursor.begin(), cursor.end());
        std::fill(cursor.begin(), cursor.end(), phaseStart);
        std::size_t emitted = 0;
        while (emitted < phaseKernels) {
            const std::int64_t iterationStart = *std::max_element(cursor.begin(), cursor.end());
            std::fill(cursor.begin(), cursor.end(), iterationStart + 2000);
            const std::size_t n = std::min(perIteration, phaseKernels - emitted);
            for (std::size_t k = 0; k < n; ++k) {
                const auto& ids = phaseNameIds[static_cast<std::size_t>(p)];
                const std::size_t which = k % ids.size();
                const auto& kind = phases[static_cast<std::size_t>(p)][which];
                const std::uint64_t r = detail::splitMix(rng);
                // Mostly the main stream; every fifth kernel goes to a side stream.
                const int s = (spec.sideStreams > 0 && r % 5 == 0)
                                  ? 1 + static_cast<int>(
                                            (r >> 8) % static_cast<std::uint64_t>(spec.sideStreams))
                                  : 0;
                auto& t = cursor[static_cast<std::size_t>(s)];
                const std::int64_t jitter =
                    static_cast<std::int64_t>((r >> 16) % 41) - 20; // +-20 %
                const std::int64_t duration =
                    std::max<std::int64_t>(100, kind.meanNs + kind.meanNs * jitter / 100);
                const std::int64_t gap = 500 + static_cast<std::int64_t>((r >> 32) % 3000);
                out.kernels.push_back({streamIdOf(s), t + gap, t + gap + duration, ids[which]});
                t += gap + duration;
            }
            emitted += n;
            const std::int64_t iterationEnd = *std::max_element(cursor.begin(), cursor.end());
            out.ranges.push_back({iterationStart, iterationEnd, iterationId, 1});
        }
        const std::int64_t phaseEnd = *std::max_element(cursor.begin(), cursor.end());
        out.ranges.push_back({phaseStart, phaseEnd, phaseRangeIds[p], 0});
    }
    return out;
}

// The "load" step: group by stream, sort by start, prefix maxima, per-name statistics.
inline kwb::timeline::TimelineSnapshot buildTimeline(const SyntheticRecords& records) {
    using namespace kwb::timeline;
    auto timeline = std::make_shared<KernelTimeline>();
    timeline->originNs = 1'700'000'000'000'000'000;
    timeline->names = records.names;
    timeline->demangledNames = records.demangled;
    timeline->deviceName = "NVIDIA H200 (synthetic)";
    timeline->dropped = records.dropped;

    std::map<std::uint32_t, std::size_t> laneOfStream;
    for (const auto& k : records.kernels)
        laneOfStream.emplace(k.streamId, 0);
    std::size_t lane = 0;
    for (auto& [stream, index] : laneOfStream) {
        index = lane++;
        StreamLane l;
        l.deviceId = 0;
        l.streamId = stream;
        l.label = "GPU 0 · stream " + std::to_string(stream);
        timeline->streams.push_back(std::move(l));
    }
    std::vector<std::size_t> counts(timeline->streams.size(), 0);
    for (const auto& k : records.kernels)
        ++counts[laneOfStream[k.streamId]];
    for (std::size_t i = 0; i < counts.size(); ++i)
        timeline->streams[i].events.reserve(counts[i]);
    timeline->launches.reserve(records.kernels.size());
    std::vector<NameStatistics> stats(records.names.size());
    for (const auto& k : records.kernels) {
        TimelineEvent e;
        e.startNs = k.startNs;
        e.endNs = k.endNs;
        e.nameId = k.nameId;
        e.detail = static_cast<std::uint32_t>(timeline->launches.size());
        e.kind = EventKind::Kernel;
        KernelLaunch launch = records.launchPerName[k.nameId];
        launch.correlationId = static_cast<std::uint32_t>(timeline->launches.size() + 1);
        timeline->launches.push_back(launch);
        timeline->streams[laneOfStream[k.streamId]].events.push_back(e);
        NameStatistics& s = stats[k.nameId];
        const std::int64_t d = e.durationNs();
        s.minNs = s.count == 0 ? d : std::min(s.minNs, d);
        s.maxNs = std::max(s.maxNs, d);
        s.totalNs += d;
        ++s.count;
    }
    for (StreamLane& l : timeline->streams) {
        std::stable_sort(
            l.events.begin(), l.events.end(),
            [](const TimelineEvent& a, const TimelineEvent& b) { return a.startNs < b.startNs; });
        indexStreamLane(l);
        if (!l.events.empty())
            timeline->endNs = std::max(timeline->endNs, l.maxEndPrefix.back());
    }
    RangeLane ranges;
    ranges.threadId = 1;
    ranges.label = "NVTX · harness thread";
    for (const auto& r : records.ranges) {
        TimelineEvent e;
        e.startNs = r.startNs;
        e.endNs = r.endNs;
        e.nameId = r.nameId;
        e.detail = r.depth;
        e.kind = EventKind::Range;
        ranges.events.push_back(e);
        ranges.maxDepth = std::max(ranges.maxDepth, r.depth);
        timeline->endNs = std::max(timeline->endNs, r.endNs);
    }
    std::stable_sort(ranges.events.begin(), ranges.events.end(),
                     [](const TimelineEvent& a, const TimelineEvent& b) {
                         return a.startNs < b.startNs ||
                                (a.startNs == b.startNs && a.detail < b.detail);
                     });
    std::int64_t maxEnd = INT64_MIN;
    for (const auto& e : ranges.events)
        ranges.maxEndPrefix.push_back(maxEnd = std::max(maxEnd, e.endNs));
    if (!ranges.events.empty())
        timeline->ranges.push_back(std::move(ranges));

    for (std::size_t id = 0; id < stats.size(); ++id) {
        if (stats[id].count == 0)
            continue;
        stats[id].nameId = static_cast<std::uint32_t>(id);
        stats[id].meanNs =
            static_cast<double>(stats[id].totalNs) / static_cast<double>(stats[id].count);
        timeline->kernelStatistics.push_back(stats[id]);
    }
    std::sort(
        timeline->kernelStatistics.begin(), timeline->kernelStatistics.end(),
        [](const NameStatistics& a, const NameStatistics& b) { return a.totalNs > b.totalNs; });
    timeline->kernelCount = records.kernels.size();
    return timeline;
}

inline kwb::timeline::TimelineSnapshot makeSyntheticTimeline(const SyntheticSpec& spec = {}) {
    return buildTimeline(generateRecords(spec));
}

// A hand-made timeline for exact assertions: one stream with the given [start, end) pairs, all
// named "k<i % names>", one launch each.
inline kwb::timeline::TimelineSnapshot
makeStreamTimeline(const std::vector<std::pair<std::int64_t, std::int64_t>>& spans,
                   std::uint32_t names = 1) {
    SyntheticRecords records;
    for (std::uint32_t n = 0; n < names; ++n) {
        records.names.push_back("k" + std::to_string(n));
        records.demangled.push_back("k" + std::to_string(n));
        kwb::timeline::KernelLaunch launch;
        launch.grid[0] = 128;
        launch.block[0] = 256;
        launch.registersPerThread = 32;
        records.launchPerName.push_back(launch);
    }
    for (std::size_t i = 0; i < spans.size(); ++i)
        records.kernels.push_back(
            {7, spans[i].first, spans[i].second, static_cast<std::uint32_t>(i % names)});
    return buildTimeline(records);
}

} // namespace kwb::testing
