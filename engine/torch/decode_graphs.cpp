#include "engine/torch/decode_graphs.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <torch/torch.h>

// CUDA graphs come with a CUDA build of libtorch; a CPU-only one (Debian's fallback) decodes
// eagerly.
#if __has_include(<ATen/cuda/CUDAGraph.h>) && __has_include(<c10/cuda/CUDAGuard.h>)
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#define KWB_HAS_CUDA_GRAPHS 1
#else
#define KWB_HAS_CUDA_GRAPHS 0
#endif

namespace kwb::torchnn {

struct DecodeGraphs::Captured {
#if KWB_HAS_CUDA_GRAPHS
    at::cuda::CUDAGraph graph;
#endif
    torch::Tensor logits; // the graph's output, overwritten by each replay
};

DecodeGraphs::DecodeGraphs(const LlamaNetwork& network, LlamaNetwork::KvCache& cache,
                           std::int64_t batch)
    : network_(network), cache_(cache) {
    const auto onDevice = torch::TensorOptions().dtype(torch::kInt64).device(network.device);
    ids_ = torch::zeros({batch, 1}, onDevice);
    position_ = torch::zeros({1}, onDevice);
    if (!network.device.is_cuda())
        fallbackReason_ = "not a CUDA device";
    else if (!KWB_HAS_CUDA_GRAPHS)
        fallbackReason_ = "this libtorch has no CUDA graphs";
}

DecodeGraphs::~DecodeGraphs() = default;

bool DecodeGraphs::wanted(const LlamaNetwork& network) {
    const char* setting = std::getenv("KWB_CUDA_GRAPHS");
    return network.device.is_cuda() && !(setting && std::string(setting) == "off");
}

std::int64_t DecodeGraphs::windowFor(std::int64_t position) const {
    const std::int64_t capacity = cache_.keys.empty() ? 0 : cache_.keys.front().size(2);
    std::int64_t window = kSmallestWindow;
    while (window <= position)
        window *= 2;
    return std::min(window, capacity);
}

DecodeGraphs::Captured* DecodeGraphs::capture(std::int64_t window) {
#if KWB_HAS_CUDA_GRAPHS
    auto entry = std::make_unique<Captured>();
    const c10::cuda::CUDAStream launching = c10::cuda::getCurrentCUDAStream();
    const c10::cuda::CUDAStream capturing =
        c10::cuda::getStreamFromPool(false, network_.device.index());
    {
        // The capture stream starts after what the launching stream queued (the inputs' copies).
        at::cuda::CUDAEvent queued;
        queued.record(launching);
        queued.block(capturing);
        const c10::cuda::CUDAStreamGuard onCapturing(capturing);
        // One step outside the capture first: cuBLAS makes its handle and workspace for this
        // stream, and kernels load, none of which may happen while capturing. It writes the
        // cache's slot at the position with exactly what the replay will write there.
        network_.decodeStep(ids_, position_, cache_, window, LlamaNetwork::Adapters::Merged);
        // Thread-local: a call that cannot be captured on another thread of the process (a
        // worker's allocation) is not this capture's error.
        entry->graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
        entry->logits =
            network_.decodeStep(ids_, position_, cache_, window, LlamaNetwork::Adapters::Merged)
                .select(1, 0)
                .to(torch::kFloat32);
        entry->graph.capture_end();
        at::cuda::CUDAEvent captured;
        captured.record(capturing);
        captured.block(launching);
    }
    Captured* kept = entry.get();
    graphs_[window] = std::move(entry);
    return kept;
#else
    (void)window;
    return nullptr;
#endif
}

torch::Tensor DecodeGraphs::step(const torch::Tensor& ids) {
    const std::int64_t position = cache_.length;
    const std::int64_t window = windowFor(position);
    ids_.copy_(ids.view({-1, 1}));
    position_.fill_(position);
    torch::Tensor logits;
    if (fallbackReason_.empty()) {
        try {
            auto found = graphs_.find(window);
            Captured* graph = found != graphs_.end() ? found->second.get() : capture(window);
#if KWB_HAS_CUDA_GRAPHS
            graph->graph.replay();
#endif
            logits = graph->logits;
        } catch (const std::exception& error) {
            // Decoding goes on without graphs; the reason is reported with the generation.
            fallbackReason_ = error.what();
            graphs_.clear();
        }
    }
    if (!logits.defined())
        logits =
            network_.decodeStep(ids_, position_, cache_, window, LlamaNetwork::Adapters::Merged)
                .select(1, 0)
                .to(torch::kFloat32);
    cache_.length = position + 1;
    return logits;
}

} // namespace kwb::torchnn
