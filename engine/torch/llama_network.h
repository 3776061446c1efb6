#pragma once

#include "engine/model/llama_weights.h"
#include "engine/torch/lora_linear.h"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <torch/types.h>
#include <utility>
#include <vector>

namespace kwb::torchnn {

// The tensors and the forward pass of a Llama-family decoder: what LlamaModel generates with and
// PolicyTrainer trains. Base weights never take gradients; LoRA adapters, where attached, do.
struct LlamaNetwork {
    // The seven projections of a layer, in Hugging Face's names (LoRA's target modules).
    static constexpr std::array<const char*, 7> kProjections = {
        "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};

    model::LlamaConfig config;
    torch::Device device{torch::kCPU};
    torch::Dtype dtype = torch::kFloat32;
    torch::Tensor embed, norm, head;
    struct Layer {
        torch::Tensor attnNorm, ffnNorm;
        std::array<torch::Tensor, 7> projections; // in kProjections' order
        std::array<std::shared_ptr<LoraLinear>, 7> adapters;
        // Qwen2's q, k and v biases (config.qkvBias); undefined where the model has none.
        std::array<torch::Tensor, 3> biases;
    };
    std::vector<Layer> layers;
    torch::Tensor inverseFrequencies; // [headDim / 2], float32
    // Training keeps only each layer's input and computes the layer again in the backward pass
    // (gradient checkpointing): activation memory of one layer instead of all of them, for
    // about one more forward pass of time. A 4.4k-token agent episode took ~10 GB of
    // activations per sequence on the CPU without it.
    bool gradientCheckpointing = false;

    // How LoRA adapters take part in a forward pass. Trained: as trained (the low-rank update
    // beside the frozen weight; training and the trainer's log-probabilities). Merged: one
    // product with the merged float32 weight (LoraLinear::forwardMerged; generation, where it
    // saves most of a decoding step's launches). Off: the base weights alone (the reference
    // policy of a LoRA run).
    enum class Adapters { Trained, Merged, Off };

    // Keys and values of every layer for the positions seen so far, allocated once for the
    // whole generation ([batch, kv heads, capacity, head dim] per layer).
    struct KvCache {
        std::vector<torch::Tensor> keys, values;
        std::int64_t length = 0;
    };
    KvCache allocateCache(std::int64_t batch, std::int64_t capacity) const;

    // Logits for `ids` ([batch, length]) following the `cache->length` positions already in the
    // cache (none without one); the new keys and values are appended to it. Attention is causal,
    // so right-padded sequences of a batch see only their own earlier tokens. With `withGrad`
    // the adapters' gradients flow (training); otherwise no graph is built.
    // `adapters` says how LoRA adapters take part (see Adapters).
    torch::Tensor forward(const torch::Tensor& ids, KvCache* cache = nullptr, bool withGrad = false,
                          Adapters adapters = Adapters::Trained) const;
    // The final normalised hidden states [batch, length, width] that the head reads: a critic's
    // value head reads them too.
    torch::Tensor hiddenStates(const torch::Tensor& ids, KvCache* cache = nullptr,
                               bool withGrad = false, Adapters adapters = Adapters::Trained) const;

    // Attaches a fresh LoRA adapter (rank, alpha) to each named projection of every layer,
    // replacing any there; returns the adapters' parameters. Unknown names are an error.
    std::vector<torch::Tensor> attachLora(int rank, double alpha,
                                          const std::vector<std::string>& targets,
                                          std::uint64_t seed, std::string& error);
    std::vector<torch::Tensor> adapterParameters() const;
    // The adapters' parameters changed in place (an optimiser step, a restore): generation must
    // not run the merged weights it formed before (LoraLinear::adapterChanged).
    void adaptersChanged();
    // Folds every adapter into its projection and removes it (for export and fast inference).
    void mergeAdapters();
    // The weights under Hugging Face's names, adapters merged in, as float32 on the CPU.
    std::vector<std::pair<std::string, torch::Tensor>> namedWeights() const;

    // From read weights (the host copies are released as the device takes them).
    static std::unique_ptr<LlamaNetwork> fromWeights(model::LlamaWeights& weights,
                                                     torch::Device device, torch::Dtype dtype,
                                                     std::string& error);
    // Freshly initialised (normal with `std`, 0.02 as Llama's recipe; norms 1): a small model
    // trained from scratch. A very narrow model needs larger weights to tell tokens apart.
    static std::unique_ptr<LlamaNetwork> randomlyInitialised(const model::LlamaConfig& config,
                                                             std::uint64_t seed,
                                                             torch::Device device,
                                                             torch::Dtype dtype, double std = 0.02);

    // One decoder layer on `x` (rotary tables, the mask or causal flag, and the cache as
    // hiddenStates prepares them); what a checkpointed layer runs again in the backward pass.
    torch::Tensor layerForward(std::size_t index, const torch::Tensor& x, const torch::Tensor& cos,
                               const torch::Tensor& sin, const std::optional<torch::Tensor>& mask,
                               bool causal, KvCache* cache, std::int64_t past,
                               Adapters adapters) const;

    // One decoding step whose every shape and address is fixed, so that a CUDA graph captured
    // once replays it (DecodeGraphs): `ids` [batch, 1] follow the cached positions before
    // `position` ([1], int64, on the device; no value of it is read on the host). The new keys
    // and values go to the cache at `position`, and attention reads the cache's first `window`
    // positions (at least position + 1), those after `position` masked. Logits
    // [batch, 1, vocabulary]; cache->length is not changed (the caller's step counter is).
    torch::Tensor decodeStep(const torch::Tensor& ids, const torch::Tensor& position,
                             KvCache& cache, std::int64_t window, Adapters adapters) const;

private:
    struct Projected {
        torch::Tensor q, k, v;
    };
    // cos and sin of the rotary angles of `positions` ([length], float32), [1, 1, length, head
    // dim] in the model's type, as Hugging Face forms them.
    std::pair<torch::Tensor, torch::Tensor> rotaryTables(const torch::Tensor& positions) const;
    // Keys or values [batch, kv heads, length, head dim] repeated for each query head of their
    // group (grouped-query attention).
    torch::Tensor repeatKvHeads(const torch::Tensor& t) const;
    // A layer's queries, keys and values for its normalised input `h`, rotated to their positions.
    Projected projectQkv(const Layer& layer, const torch::Tensor& h, const torch::Tensor& cos,
                         const torch::Tensor& sin, Adapters adapters) const;
    // The rest of a layer after attention ([batch, heads, length, head dim]): the output
    // projection, the residual, the feed-forward block.
    torch::Tensor finishLayer(const Layer& layer, const torch::Tensor& x,
                              const torch::Tensor& attended, Adapters adapters) const;
    torch::Tensor rmsNorm(const torch::Tensor& x, const torch::Tensor& weight) const;
    // Projection `which` of `layer` on x; `inputInFloat32` is x in float32 where several trained
    // adapters read the same x (sharedAdapterInput), undefined otherwise.
    torch::Tensor project(const Layer& layer, int which, const torch::Tensor& x, Adapters adapters,
                          const torch::Tensor& inputInFloat32 = {}) const;
    // x in float32, formed once, when trained adapters sit on more than one of the projections
    // `which` that read it; undefined when no more than one would cast it.
    static torch::Tensor sharedAdapterInput(const Layer& layer, std::initializer_list<int> which,
                                            const torch::Tensor& x, Adapters adapters);
    void prepareRotary();
};

} // namespace kwb::torchnn
