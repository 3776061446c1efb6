#include "engine/torch/llama_model.h"

#include "engine/model/llama_weights.h"

#include <ATen/CPUGeneratorImpl.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <torch/torch.h>

namespace kwb::torchnn {

struct LlamaModel::Impl {
    model::LlamaConfig config;
    torch::Device device{torch::kCPU};
    torch::Dtype dtype = torch::kFloat32;
    torch::Tensor embed, norm, head;
    struct Layer {
        torch::Tensor attnNorm, q, k, v, o, ffnNorm, gate, up, down;
    };
    std::vector<Layer> layers;
    torch::Tensor inverseFrequencies; // [headDim / 2], float32

    torch::Tensor rmsNorm(const torch::Tensor& x, const torch::Tensor& weight) const {
        // In float32, as Hugging Face's LlamaRMSNorm computes it, then back to the weights' type.
        const torch::Tensor x32 = x.to(torch::kFloat32);
        const torch::Tensor scaled =
            x32 * torch::rsqrt(x32.pow(2).mean(-1, true) + config.rmsEpsilon);
        return weight * scaled.to(dtype);
    }

    static torch::Tensor rotateHalf(const torch::Tensor& x) {
        const std::int64_t half = x.size(-1) / 2;
        return torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
    }

    // Keys and values of every layer for the positions seen so far, allocated once for the
    // whole generation ([1, kv heads, capacity, head dim] per layer).
    struct KvCache {
        std::vector<torch::Tensor> keys, values;
        std::int64_t length = 0;
    };

    KvCache allocateCache(std::int64_t capacity) const {
        KvCache cache;
        const auto options = torch::TensorOptions().dtype(dtype).device(device);
        for (std::size_t i = 0; i < layers.size(); ++i) {
            cache.keys.push_back(
                torch::zeros({1, config.kvHeads, capacity, config.headDim}, options));
            cache.values.push_back(
                torch::zeros({1, config.kvHeads, capacity, config.headDim}, options));
        }
        return cache;
    }

    // Logits for `ids` ([batch, length]) following the `cache->length` positions already in
    // the cache (none without a cache); the new keys and values are appended to it.
    torch::Tensor forward(const torch::Tensor& ids, KvCache* cache = nullptr) const {
        torch::NoGradGuard noGrad;
        const std::int64_t batch = ids.size(0), length = ids.size(1);
        const std::int64_t past = cache ? cache->length : 0;
        const std::int64_t total = past + length;
        const int D = config.headDim;
        torch::Tensor x = embed.index_select(0, ids.reshape({-1})).reshape({batch, length, -1});
        const torch::Tensor positions = torch::arange(
            past, total, torch::TensorOptions().dtype(torch::kFloat32).device(device));
        const torch::Tensor angles = torch::outer(positions, inverseFrequencies);
        const torch::Tensor doubled = torch::cat({angles, angles}, -1);
        const torch::Tensor cos = doubled.cos().to(dtype).view({1, 1, length, D});
        const torch::Tensor sin = doubled.sin().to(dtype).view({1, 1, length, D});
        // New position i (absolute past + i) sees keys 0 .. past + i.
        const torch::Tensor mask = torch::full({length, total}, -INFINITY,
                                               torch::TensorOptions().dtype(dtype).device(device))
                                       .triu(past + 1);
        const int groups = config.heads / config.kvHeads;
        for (std::size_t index = 0; index < layers.size(); ++index) {
            const Layer& l = layers[index];
            const torch::Tensor h = rmsNorm(x, l.attnNorm);
            torch::Tensor q =
                torch::linear(h, l.q).view({batch, length, config.heads, D}).transpose(1, 2);
            torch::Tensor k =
                torch::linear(h, l.k).view({batch, length, config.kvHeads, D}).transpose(1, 2);
            torch::Tensor v =
                torch::linear(h, l.v).view({batch, length, config.kvHeads, D}).transpose(1, 2);
            q = q * cos + rotateHalf(q) * sin;
            k = k * cos + rotateHalf(k) * sin;
            if (cache) {
                cache->keys[index].narrow(2, past, length).copy_(k);
                cache->values[index].narrow(2, past, length).copy_(v);
                k = cache->keys[index].narrow(2, 0, total);
                v = cache->values[index].narrow(2, 0, total);
            }
            if (groups > 1) {
                k = k.repeat_interleave(groups, 1);
                v = v.repeat_interleave(groups, 1);
            }
            torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(D));
            scores = (scores + mask).to(torch::kFloat32).softmax(-1).to(dtype);
            const torch::Tensor attended =
                torch::matmul(scores, v).transpose(1, 2).reshape({batch, length, config.heads * D});
            x = x + torch::linear(attended, l.o);
            const torch::Tensor g = rmsNorm(x, l.ffnNorm);
            x = x + torch::linear(torch::silu(torch::linear(g, l.gate)) * torch::linear(g, l.up),
                                  l.down);
        }
        if (cache)
            cache->length = total;
        return torch::linear(rmsNorm(x, norm), head);
    }
};

LlamaModel::LlamaModel() : impl_(std::make_unique<Impl>()) {}
LlamaModel::~LlamaModel() = default;

LlamaModel::Loaded LlamaModel::load(const std::string& path, const std::string& device,
                                    bool float32) {
    Loaded out;
    model::LlamaWeights weights = model::readLlamaWeights(path);
    if (!weights.error.empty()) {
        out.error = weights.error;
        return out;
    }
    if (device == "cuda" && !torch::cuda::is_available()) {
        out.error = "no CUDA device is available to torch";
        return out;
    }
    std::unique_ptr<LlamaModel> m(new LlamaModel);
    Impl& p = *m->impl_;
    p.config = weights.config;
    p.device = device == "cuda" ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
    p.dtype = device == "cuda" && !float32 ? torch::kBFloat16 : torch::kFloat32;
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
                              .to(p.device, p.dtype, /*non_blocking=*/false, /*copy=*/true);
        std::vector<float>().swap(w.values); // the host copy goes once the device has it
        return t;
    };
    p.embed = take("model.embed_tokens.weight");
    p.norm = take("model.norm.weight");
    p.head = weights.config.tiedEmbeddings || !weights.tensors.count("lm_head.weight")
                 ? p.embed
                 : take("lm_head.weight");
    for (int i = 0; i < p.config.layers; ++i) {
        const std::string prefix = "model.layers." + std::to_string(i) + ".";
        p.layers.push_back(
            {take(prefix + "input_layernorm.weight"), take(prefix + "self_attn.q_proj.weight"),
             take(prefix + "self_attn.k_proj.weight"), take(prefix + "self_attn.v_proj.weight"),
             take(prefix + "self_attn.o_proj.weight"),
             take(prefix + "post_attention_layernorm.weight"),
             take(prefix + "mlp.gate_proj.weight"), take(prefix + "mlp.up_proj.weight"),
             take(prefix + "mlp.down_proj.weight")});
    }
    if (!missing.empty()) {
        out.error = path + " has no weight " + missing;
        return out;
    }
    const int D = p.config.headDim;
    p.inverseFrequencies =
        1.0 / torch::pow(p.config.ropeBase,
                         torch::arange(0, D, 2, torch::TensorOptions().dtype(torch::kFloat32)) /
                             double(D));
    p.inverseFrequencies = p.inverseFrequencies.to(p.device);
    out.model = std::move(m);
    return out;
}

std::vector<float> LlamaModel::logits(const std::vector<std::int32_t>& ids) const {
    if (ids.empty())
        return {};
    const torch::Tensor input =
        torch::tensor(std::vector<std::int64_t>(ids.begin(), ids.end()), torch::kInt64)
            .view({1, -1})
            .to(impl_->device);
    const torch::Tensor out = impl_->forward(input).to(torch::kFloat32).cpu().contiguous();
    return std::vector<float>(out.data_ptr<float>(), out.data_ptr<float>() + out.numel());
}

LlamaModel::Generation LlamaModel::generate(const std::vector<std::int32_t>& prompt,
                                            const GenerationOptions& options) const {
    Generation out;
    const Impl& p = *impl_;
    if (prompt.empty())
        return out;
    const std::int64_t capacity = std::min<std::int64_t>(
        std::int64_t(prompt.size()) + std::max(0, options.maxTokens),
        std::max<std::int64_t>(p.config.context, std::int64_t(prompt.size())));
    Impl::KvCache cache = p.allocateCache(capacity);
    torch::Generator generator = at::make_generator<at::CPUGeneratorImpl>(options.seed);
    const auto started = std::chrono::steady_clock::now();
    torch::Tensor input =
        torch::tensor(std::vector<std::int64_t>(prompt.begin(), prompt.end()), torch::kInt64)
            .view({1, -1})
            .to(p.device);
    torch::Tensor last =
        p.forward(input, &cache).select(1, -1).to(torch::kFloat32).cpu().squeeze(0);
    out.prefillSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const auto decoding = std::chrono::steady_clock::now();
    out.stopReason = "max_tokens";
    for (int step = 0; step < options.maxTokens; ++step) {
        const torch::Tensor scores = options.temperature > 0 ? last / options.temperature : last;
        const torch::Tensor logprobs = torch::log_softmax(scores, -1);
        std::int64_t token;
        if (options.temperature <= 0) {
            token = scores.argmax().item<std::int64_t>();
        } else {
            // Top-k, then top-p (the smallest set of tokens whose probability reaches p), then a
            // draw from what is left.
            torch::Tensor filtered = scores.clone();
            if (options.topK > 0 && options.topK < filtered.size(0)) {
                const torch::Tensor kth = std::get<0>(filtered.topk(options.topK)).min();
                filtered.masked_fill_(filtered < kth, -INFINITY);
            }
            if (options.topP < 1.0) {
                const auto sortedPair = filtered.sort(-1, /*descending=*/true);
                const torch::Tensor sorted = std::get<0>(sortedPair);
                const torch::Tensor order = std::get<1>(sortedPair);
                const torch::Tensor probabilities = sorted.softmax(-1);
                // Drop a token once the ones before it already reach p (the first always stays).
                const torch::Tensor drop =
                    (probabilities.cumsum(-1) - probabilities) >= options.topP;
                filtered.index_put_({order.masked_select(drop)}, -INFINITY);
            }
            token =
                torch::multinomial(filtered.softmax(-1), 1, false, generator).item<std::int64_t>();
        }
        out.tokens.push_back(std::int32_t(token));
        out.logprobs.push_back(logprobs[token].item<float>());
        if (std::find(options.stopIds.begin(), options.stopIds.end(), std::int32_t(token)) !=
            options.stopIds.end()) {
            out.stopReason = "stop_token";
            break;
        }
        if (cache.length >= capacity) {
            out.stopReason = "context";
            break;
        }
        const torch::Tensor next = torch::tensor({token}, torch::kInt64).view({1, 1}).to(p.device);
        last = p.forward(next, &cache).select(1, -1).to(torch::kFloat32).cpu().squeeze(0);
    }
    out.decodeSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - decoding).count();
    return out;
}

int LlamaModel::vocabulary() const {
    return int(impl_->head.size(0));
}

std::string LlamaModel::describe() const {
    const model::LlamaConfig& c = impl_->config;
    return std::to_string(c.layers) + " layers, " + std::to_string(c.heads) + " heads (" +
           std::to_string(c.kvHeads) + " key/value), width " + std::to_string(c.width) + ", " +
           (impl_->device.is_cuda() ? "cuda " : "cpu ") +
           (impl_->dtype == torch::kBFloat16 ? "bfloat16" : "float32");
}

} // namespace kwb::torchnn
