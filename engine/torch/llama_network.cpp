#include "engine/torch/llama_network.h"

#include <ATen/CPUGeneratorImpl.h>
#include <algorithm>
#include <cmath>
#include <optional>
#include <torch/torch.h>

namespace kwb::torchnn {
namespace {

torch::Tensor rotateHalf(const torch::Tensor& x) {
    const std::int64_t half = x.size(-1) / 2;
    return torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

std::string layerPrefix(std::size_t index) {
    return "model.layers." + std::to_string(index) + ".";
}

// Where each projection's weight (and bias) lives under Hugging Face's names.
std::string projectionName(std::size_t layer, int which, const char* part = "weight") {
    const std::string module = which < 4 ? "self_attn." : "mlp.";
    return layerPrefix(layer) + module + LlamaNetwork::kProjections[which] + "." + part;
}

} // namespace

torch::Tensor LlamaNetwork::rmsNorm(const torch::Tensor& x, const torch::Tensor& weight) const {
    // In float32, as Hugging Face's LlamaRMSNorm computes it, then back to the weights' type.
    const torch::Tensor x32 = x.to(torch::kFloat32);
    const torch::Tensor scaled = x32 * torch::rsqrt(x32.pow(2).mean(-1, true) + config.rmsEpsilon);
    return weight * scaled.to(dtype);
}

torch::Tensor LlamaNetwork::project(const Layer& layer, int which, const torch::Tensor& x,
                                    Adapters adapters, const torch::Tensor& inputInFloat32) const {
    const auto& adapter = layer.adapters[which];
    torch::Tensor y;
    if (!adapter || adapters == Adapters::Off)
        y = torch::linear(x, layer.projections[which]);
    else
        y = adapters == Adapters::Merged ? adapter->forwardMerged(x)
                                         : adapter->forward(x, inputInFloat32);
    // A bias stays outside the adapter: LoRA adapts the weight only, as peft does.
    if (which < 3 && layer.biases[which].defined())
        y = y + layer.biases[which];
    return y;
}

torch::Tensor LlamaNetwork::sharedAdapterInput(const Layer& layer, std::initializer_list<int> which,
                                               const torch::Tensor& x, Adapters adapters) {
    if (adapters != Adapters::Trained || x.scalar_type() == torch::kFloat32)
        return {}; // no adapter casts, or the cast is x itself
    int adapted = 0;
    for (int w : which)
        adapted += layer.adapters[w] ? 1 : 0;
    return adapted > 1 ? x.to(torch::kFloat32) : torch::Tensor();
}

LlamaNetwork::KvCache LlamaNetwork::allocateCache(std::int64_t batch, std::int64_t capacity) const {
    KvCache cache;
    const auto options = torch::TensorOptions().dtype(dtype).device(device);
    for (std::size_t i = 0; i < layers.size(); ++i) {
        cache.keys.push_back(
            torch::zeros({batch, config.kvHeads, capacity, config.headDim}, options));
        cache.values.push_back(
            torch::zeros({batch, config.kvHeads, capacity, config.headDim}, options));
    }
    return cache;
}

torch::Tensor LlamaNetwork::forward(const torch::Tensor& ids, KvCache* cache, bool withGrad,
                                    Adapters adapters) const {
    std::optional<torch::NoGradGuard> noGrad;
    if (!withGrad)
        noGrad.emplace();
    return torch::linear(hiddenStates(ids, cache, withGrad, adapters), head);
}

namespace {

// A decoder layer whose activations are not kept: the forward pass runs without a graph and
// saves the layer's input; the backward pass runs the layer again with one and propagates
// through it, the adapters' gradients accumulating as in an ordinary pass (torch's reentrant
// checkpoint, which libtorch's C++ API does not provide).
class CheckpointedLayer : public torch::autograd::Function<CheckpointedLayer> {
public:
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                                 const torch::Tensor& cos, const torch::Tensor& sin,
                                 std::int64_t network, std::int64_t index, std::int64_t adapters) {
        ctx->save_for_backward({x, cos, sin});
        // The network outlives the step that built this graph (it owns the trained weights);
        // an IValue holds no pointer, so its address travels as an integer.
        ctx->saved_data["network"] = network;
        ctx->saved_data["index"] = index;
        ctx->saved_data["adapters"] = adapters;
        return layerOf(network).layerForward(std::size_t(index), x, cos, sin, std::nullopt,
                                             x.size(1) > 1, nullptr, 0,
                                             LlamaNetwork::Adapters(adapters));
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const torch::Tensor x = saved[0].detach().requires_grad_(true);
        torch::Tensor out;
        {
            torch::AutoGradMode enabled(true);
            out = layerOf(ctx->saved_data["network"].toInt())
                      .layerForward(std::size_t(ctx->saved_data["index"].toInt()), x, saved[1],
                                    saved[2], std::nullopt, x.size(1) > 1, nullptr, 0,
                                    LlamaNetwork::Adapters(ctx->saved_data["adapters"].toInt()));
        }
        torch::autograd::backward({out}, {grads[0]});
        return {x.grad(),        torch::Tensor(), torch::Tensor(),
                torch::Tensor(), torch::Tensor(), torch::Tensor()};
    }

private:
    static const LlamaNetwork& layerOf(std::int64_t network) {
        return *reinterpret_cast<const LlamaNetwork*>(network);
    }
};

} // namespace

torch::Tensor LlamaNetwork::hiddenStates(const torch::Tensor& ids, KvCache* cache, bool withGrad,
                                         Adapters adapters) const {
    std::optional<torch::NoGradGuard> noGrad;
    if (!withGrad)
        noGrad.emplace();
    const std::int64_t batch = ids.size(0), length = ids.size(1);
    const std::int64_t past = cache ? cache->length : 0;
    const std::int64_t total = past + length;
    torch::Tensor x = embed.index_select(0, ids.reshape({-1})).reshape({batch, length, -1});
    const auto [cos, sin] = rotaryTables(
        torch::arange(past, total, torch::TensorOptions().dtype(torch::kFloat32).device(device)));
    // New position i (absolute past + i) sees keys 0 .. past + i. Without a past that is plain
    // causal attention and one token after a past sees every key: both need no mask, which
    // keeps torch's flash kernels eligible. A chunk after a past needs it (true: attended).
    std::optional<torch::Tensor> mask;
    if (past > 0 && length > 1)
        mask =
            torch::ones({length, total}, torch::TensorOptions().dtype(torch::kBool).device(device))
                .tril(past);
    const bool causal = past == 0 && length > 1;
    const bool checkpointed = withGrad && gradientCheckpointing && !cache;
    if (checkpointed && !x.requires_grad())
        // The recomputation's gradients reach the adapters only through a graph: the frozen
        // embedding's output is made a leaf that asks for one (its own gradient is dropped).
        x = x.detach().requires_grad_(true);
    for (std::size_t index = 0; index < layers.size(); ++index)
        x = checkpointed
                ? CheckpointedLayer::apply(x, cos, sin, reinterpret_cast<std::int64_t>(this),
                                           std::int64_t(index), std::int64_t(adapters))
                : layerForward(index, x, cos, sin, mask, causal, cache, past, adapters);
    if (cache)
        cache->length = total;
    return rmsNorm(x, norm);
}

std::pair<torch::Tensor, torch::Tensor>
LlamaNetwork::rotaryTables(const torch::Tensor& positions) const {
    const torch::Tensor angles = torch::outer(positions, inverseFrequencies);
    const torch::Tensor doubled = torch::cat({angles, angles}, -1);
    const std::vector<std::int64_t> shape = {1, 1, positions.size(0), config.headDim};
    return {doubled.cos().to(dtype).view(shape), doubled.sin().to(dtype).view(shape)};
}

torch::Tensor LlamaNetwork::repeatKvHeads(const torch::Tensor& t) const {
    const int groups = config.heads / config.kvHeads;
    if (groups == 1)
        return t;
    // A broadcast view and one copy (what repeat_interleave computes), with no index formed on
    // the host, so that a CUDA graph can capture it.
    const std::int64_t batch = t.size(0), length = t.size(2), D = t.size(3);
    return t.unsqueeze(2)
        .expand({batch, config.kvHeads, groups, length, D})
        .reshape({batch, config.heads, length, D});
}

LlamaNetwork::Projected LlamaNetwork::projectQkv(const Layer& l, const torch::Tensor& h,
                                                 const torch::Tensor& cos, const torch::Tensor& sin,
                                                 Adapters adapters) const {
    const std::int64_t batch = h.size(0), length = h.size(1);
    const int D = config.headDim;
    const torch::Tensor h32 = sharedAdapterInput(l, {0, 1, 2}, h, adapters);
    torch::Tensor q =
        project(l, 0, h, adapters, h32).view({batch, length, config.heads, D}).transpose(1, 2);
    torch::Tensor k =
        project(l, 1, h, adapters, h32).view({batch, length, config.kvHeads, D}).transpose(1, 2);
    torch::Tensor v =
        project(l, 2, h, adapters, h32).view({batch, length, config.kvHeads, D}).transpose(1, 2);
    q = q * cos + rotateHalf(q) * sin;
    k = k * cos + rotateHalf(k) * sin;
    return {q, k, v};
}

torch::Tensor LlamaNetwork::finishLayer(const Layer& l, const torch::Tensor& x,
                                        const torch::Tensor& attended, Adapters adapters) const {
    const std::int64_t batch = attended.size(0), length = attended.size(2);
    const torch::Tensor merged =
        attended.transpose(1, 2).reshape({batch, length, config.heads * config.headDim});
    const torch::Tensor afterAttention = x + project(l, 3, merged, adapters);
    const torch::Tensor g = rmsNorm(afterAttention, l.ffnNorm);
    const torch::Tensor g32 = sharedAdapterInput(l, {4, 5}, g, adapters);
    const torch::Tensor gated =
        torch::silu(project(l, 4, g, adapters, g32)) * project(l, 5, g, adapters, g32);
    return afterAttention + project(l, 6, gated, adapters);
}

torch::Tensor LlamaNetwork::layerForward(std::size_t index, const torch::Tensor& input,
                                         const torch::Tensor& cos, const torch::Tensor& sin,
                                         const std::optional<torch::Tensor>& mask, bool causal,
                                         KvCache* cache, std::int64_t past,
                                         Adapters adapters) const {
    const std::int64_t length = input.size(1);
    const std::int64_t total = past + length;
    const Layer& l = layers[index];
    auto [q, k, v] = projectQkv(l, rmsNorm(input, l.attnNorm), cos, sin, adapters);
    if (cache) {
        cache->keys[index].narrow(2, past, length).copy_(k);
        cache->values[index].narrow(2, past, length).copy_(v);
        k = cache->keys[index].narrow(2, 0, total);
        v = cache->values[index].narrow(2, 0, total);
    }
    // Without a mask, in half precision on a GPU, torch's flash kernel takes the grouped keys
    // and values as they are (enable_gqa, as transformers' sdpa path passes them): no copy of
    // each per query head of its group, and the backward pass keeps only the groups' own (a GRPO
    // step's peak memory was 5% over transformers' with the copies). Elsewhere the kernels that
    // would take the grouped heads are not sure to be flash (torch's math kernel keeps the whole
    // scores matrix), so every head gets its own.
    const bool grouped = config.heads != config.kvHeads && !mask && q.is_cuda() &&
                         (q.scalar_type() == torch::kBFloat16 || q.scalar_type() == torch::kHalf);
    if (!grouped) {
        k = repeatKvHeads(k);
        v = repeatKvHeads(v);
    }
    // Torch's fused attention (flash or memory-efficient where it has them): the scores
    // matrix is never kept for the backward pass, where a 4k-token episode's would take
    // ~20 GB in float32 over 30 layers; the softmax accumulates in float32 as before.
    return finishLayer(
        l, input,
        at::scaled_dot_product_attention(q, k, v, mask, 0.0, causal, std::nullopt, grouped),
        adapters);
}

torch::Tensor LlamaNetwork::decodeStep(const torch::Tensor& ids, const torch::Tensor& position,
                                       KvCache& cache, std::int64_t window,
                                       Adapters adapters) const {
    torch::NoGradGuard noGrad;
    const std::int64_t batch = ids.size(0);
    torch::Tensor x = embed.index_select(0, ids.reshape({-1})).reshape({batch, 1, -1});
    // The rotary tables of the one position, read on the device.
    const auto [cos, sin] = rotaryTables(position.to(torch::kFloat32));
    // Keys up to the position take part; the window's later slots hold zeros or a longer
    // sequence's leftovers, and are masked.
    const torch::Tensor attended =
        torch::arange(window, torch::TensorOptions().dtype(torch::kInt64).device(device))
            .le(position)
            .view({1, 1, 1, window});
    for (std::size_t index = 0; index < layers.size(); ++index) {
        const Layer& l = layers[index];
        auto [q, k, v] = projectQkv(l, rmsNorm(x, l.attnNorm), cos, sin, adapters);
        cache.keys[index].index_copy_(2, position, k);
        cache.values[index].index_copy_(2, position, v);
        const torch::Tensor keys = repeatKvHeads(cache.keys[index].narrow(2, 0, window));
        const torch::Tensor values = repeatKvHeads(cache.values[index].narrow(2, 0, window));
        x = finishLayer(l, x, at::scaled_dot_product_attention(q, keys, values, attended),
                        adapters);
    }
    return torch::linear(rmsNorm(x, norm), head);
}

std::vector<torch::Tensor> LlamaNetwork::attachLora(int rank, double alpha,
                                                    const std::vector<std::string>& targets,
                                                    std::uint64_t seed, std::string& error) {
    std::vector<int> chosen;
    for (const auto& target : targets) {
        const auto found = std::find_if(kProjections.begin(), kProjections.end(),
                                        [&](const char* name) { return target == name; });
        if (found == kProjections.end()) {
            error = "unknown LoRA target " + target +
                    " (q_proj, k_proj, v_proj, o_proj, "
                    "gate_proj, up_proj, down_proj)";
            return {};
        }
        chosen.push_back(int(found - kProjections.begin()));
    }
    if (rank <= 0) {
        error = "the LoRA rank must be positive";
        return {};
    }
    std::uint64_t next = seed;
    for (auto& layer : layers)
        for (int which : chosen)
            layer.adapters[which] =
                std::make_shared<LoraLinear>(layer.projections[which], rank, alpha, next++);
    return adapterParameters();
}

std::vector<torch::Tensor> LlamaNetwork::adapterParameters() const {
    std::vector<torch::Tensor> parameters;
    for (const auto& layer : layers)
        for (const auto& adapter : layer.adapters)
            if (adapter)
                for (const auto& p : adapter->parameters())
                    parameters.push_back(p);
    return parameters;
}

void LlamaNetwork::adaptersChanged() {
    for (Layer& layer : layers)
        for (const auto& adapter : layer.adapters)
            if (adapter)
                adapter->adapterChanged();
}

void LlamaNetwork::mergeAdapters() {
    for (auto& layer : layers)
        for (int which = 0; which < 7; ++which)
            if (auto& adapter = layer.adapters[which]) {
                layer.projections[which] = adapter->merged();
                adapter.reset();
            }
}

std::vector<std::pair<std::string, torch::Tensor>> LlamaNetwork::namedWeights() const {
    torch::NoGradGuard noGrad;
    const auto host = [](const torch::Tensor& t) {
        return t.detach().to(torch::kCPU, torch::kFloat32).contiguous();
    };
    std::vector<std::pair<std::string, torch::Tensor>> out;
    out.emplace_back("model.embed_tokens.weight", host(embed));
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const Layer& l = layers[i];
        out.emplace_back(layerPrefix(i) + "input_layernorm.weight", host(l.attnNorm));
        out.emplace_back(layerPrefix(i) + "post_attention_layernorm.weight", host(l.ffnNorm));
        for (int which = 0; which < 7; ++which)
            out.emplace_back(
                projectionName(i, which),
                host(l.adapters[which] ? l.adapters[which]->merged() : l.projections[which]));
        for (int which = 0; which < 3; ++which)
            if (l.biases[which].defined())
                out.emplace_back(projectionName(i, which, "bias"), host(l.biases[which]));
    }
    out.emplace_back("model.norm.weight", host(norm));
    if (!config.tiedEmbeddings)
        out.emplace_back("lm_head.weight", host(head));
    return out;
}

void LlamaNetwork::prepareRotary() {
    const int D = config.headDim;
    torch::Tensor inverse =
        1.0 / torch::pow(config.ropeBase,
                         torch::arange(0, D, 2, torch::TensorOptions().dtype(torch::kFloat32)) /
                             double(D));
    if (!config.ropeDivisors.empty())
        // Rotary scaling (Llama 3's, linear): each frequency divided by its own number.
        inverse = inverse / torch::tensor(config.ropeDivisors, torch::kFloat64).to(torch::kFloat32);
    inverseFrequencies = inverse.to(device);
}

std::unique_ptr<LlamaNetwork> LlamaNetwork::fromWeights(model::LlamaWeights& weights,
                                                        torch::Device device, torch::Dtype dtype,
                                                        std::string& error) {
    auto net = std::make_unique<LlamaNetwork>();
    net->config = weights.config;
    net->device = device;
    net->dtype = dtype;
    std::string missing;
    const auto take = [&](const std::string& name) -> torch::Tensor {
        auto found = weights.tensors.find(name);
        if (found == weights.tensors.end()) {
            if (missing.empty())
                missing = name;
            return {};
        }
        model::FloatTensor& w = found->second;
        torch::Tensor t = torch::from_blob(w.values.data(), w.shape, torch::kFloat32)
                              .to(device, dtype, /*non_blocking=*/false, /*copy=*/true);
        std::vector<float>().swap(w.values); // the host copy goes once the device has it
        return t;
    };
    net->embed = take("model.embed_tokens.weight");
    net->norm = take("model.norm.weight");
    net->head = weights.config.tiedEmbeddings || !weights.tensors.count("lm_head.weight")
                    ? net->embed
                    : take("lm_head.weight");
    for (int i = 0; i < net->config.layers; ++i) {
        Layer layer;
        layer.attnNorm = take(layerPrefix(i) + "input_layernorm.weight");
        layer.ffnNorm = take(layerPrefix(i) + "post_attention_layernorm.weight");
        for (int which = 0; which < 7; ++which)
            layer.projections[which] = take(projectionName(i, which));
        if (net->config.qkvBias)
            for (int which = 0; which < 3; ++which)
                layer.biases[which] = take(projectionName(i, which, "bias"));
        net->layers.push_back(std::move(layer));
    }
    if (!missing.empty()) {
        error = "no weight " + missing;
        return nullptr;
    }
    net->prepareRotary();
    return net;
}

std::unique_ptr<LlamaNetwork> LlamaNetwork::randomlyInitialised(const model::LlamaConfig& config,
                                                                std::uint64_t seed,
                                                                torch::Device device,
                                                                torch::Dtype dtype, double std) {
    auto net = std::make_unique<LlamaNetwork>();
    net->config = config;
    net->device = device;
    net->dtype = dtype;
    torch::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
    const auto normal = [&](std::vector<std::int64_t> shape) {
        return torch::empty(shape, torch::kFloat32).normal_(0.0, std, generator).to(device, dtype);
    };
    const auto ones = [&](std::int64_t n) {
        return torch::ones({n}, torch::TensorOptions().dtype(dtype).device(device));
    };
    const std::int64_t W = config.width, F = config.feedForward, D = config.headDim;
    net->embed = normal({config.vocabulary, W});
    net->norm = ones(W);
    net->head = config.tiedEmbeddings ? net->embed : normal({config.vocabulary, W});
    for (int i = 0; i < config.layers; ++i) {
        Layer layer;
        layer.attnNorm = ones(W);
        layer.ffnNorm = ones(W);
        layer.projections = {normal({config.heads * D, W}),
                             normal({config.kvHeads * D, W}),
                             normal({config.kvHeads * D, W}),
                             normal({W, config.heads * D}),
                             normal({F, W}),
                             normal({F, W}),
                             normal({W, F})};
        if (config.qkvBias)
            layer.biases = {torch::zeros({config.heads * D}, ones(1).options()),
                            torch::zeros({config.kvHeads * D}, ones(1).options()),
                            torch::zeros({config.kvHeads * D}, ones(1).options())};
        net->layers.push_back(std::move(layer));
    }
    net->prepareRotary();
    return net;
}

} // namespace kwb::torchnn
