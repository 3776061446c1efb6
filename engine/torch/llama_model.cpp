#include "engine/torch/llama_model.h"

#include "engine/model/llama_weights.h"
#include "engine/torch/decode_graphs.h"
#include "engine/torch/llama_network.h"

#include <ATen/CPUGeneratorImpl.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <torch/torch.h>

namespace kwb::torchnn {

struct LlamaModel::Impl {
    std::unique_ptr<LlamaNetwork> net;
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
    std::string error;
    auto net = LlamaNetwork::fromWeights(
        weights, device == "cuda" ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU),
        device == "cuda" && !float32 ? torch::kBFloat16 : torch::kFloat32, error);
    if (!net) {
        out.error = path + " has " + error;
        return out;
    }
    out.model = fromNetwork(std::move(net));
    return out;
}

std::unique_ptr<LlamaModel> LlamaModel::fromNetwork(std::unique_ptr<LlamaNetwork> network) {
    std::unique_ptr<LlamaModel> m(new LlamaModel);
    m->impl_->net = std::move(network);
    return m;
}

LlamaNetwork& LlamaModel::network() {
    return *impl_->net;
}

const LlamaNetwork& LlamaModel::network() const {
    return *impl_->net;
}

void LlamaModel::setGradientCheckpointing(bool enabled) {
    impl_->net->gradientCheckpointing = enabled;
}

namespace {

// Ids come from the command line, a JSON request or a file: one outside the vocabulary would
// index past the embedding (an abort inside torch), so it is refused here by value.
void requireTokenIds(const std::vector<std::int32_t>& ids, int vocabulary) {
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (ids[i] < 0 || ids[i] >= vocabulary)
            throw std::invalid_argument("token id " + std::to_string(ids[i]) + " at position " +
                                        std::to_string(i) + " is outside the vocabulary (0 to " +
                                        std::to_string(vocabulary - 1) + ")");
}

// torch's errors carry a backtrace after their first line.
std::string firstLine(const std::string& text) {
    return text.substr(0, text.find('\n'));
}

} // namespace

std::vector<float> LlamaModel::logits(const std::vector<std::int32_t>& ids) const {
    if (ids.empty())
        return {};
    requireTokenIds(ids, vocabulary());
    const torch::Tensor input =
        torch::tensor(std::vector<std::int64_t>(ids.begin(), ids.end()), torch::kInt64)
            .view({1, -1})
            .to(impl_->net->device);
    const torch::Tensor out =
        impl_->net->forward(input, nullptr, false, LlamaNetwork::Adapters::Merged)
            .to(torch::kFloat32)
            .cpu()
            .contiguous();
    return std::vector<float>(out.data_ptr<float>(), out.data_ptr<float>() + out.numel());
}

LlamaModel::Generation LlamaModel::generate(const std::vector<std::int32_t>& prompt,
                                            const GenerationOptions& options) const {
    std::vector<Generation> group = generateGroup(prompt, 1, options);
    return group.empty() ? Generation{} : std::move(group.front());
}

namespace {

// One token per row of `scores` [rows, vocabulary], on the scores' device: the top-k filter,
// then the top-p filter (the smallest set of tokens whose probability reaches p), then a draw
// from what is left by the inverse of its cumulative distribution; greedy without a temperature.
// `uniform` [rows, 1] holds one number per row, drawn on the CPU, so a seed draws the same tokens
// on any device, and the vocabulary-wide work stays where the logits are: drawing row by
// row on the CPU (about 3 ms a row) held a batch of 16 replies to a third of the single reply's
// speed per row on an H200 (bench/results/2026-12-03-h200-model-throughput.md).
torch::Tensor drawTokens(const torch::Tensor& scores, const LlamaModel::GenerationOptions& options,
                         const torch::Tensor& uniform) {
    if (options.temperature <= 0)
        return scores.argmax(-1);
    const std::int64_t vocabulary = scores.size(-1);
    torch::Tensor filtered = scores;
    if (options.topK > 0 && options.topK < vocabulary) {
        const torch::Tensor kth = std::get<0>(filtered.topk(options.topK, -1)).amin(-1, true);
        filtered = filtered.masked_fill(filtered < kth, -INFINITY);
    }
    if (options.topP < 1.0) {
        const auto sortedPair = filtered.sort(-1, /*descending=*/true);
        const torch::Tensor sorted = std::get<0>(sortedPair);
        const torch::Tensor order = std::get<1>(sortedPair);
        const torch::Tensor probabilities = sorted.softmax(-1);
        // Drop a token once the ones before it already reach p (the first always stays).
        const torch::Tensor drop = (probabilities.cumsum(-1) - probabilities) >= options.topP;
        filtered = filtered.scatter(-1, order, sorted.masked_fill(drop, -INFINITY));
    }
    // In float64: the cumulative sum of 50,000 probabilities keeps its tail apart.
    const torch::Tensor cumulative = filtered.softmax(-1).to(torch::kFloat64).cumsum(-1);
    // The first token whose cumulative probability exceeds the draw: a token of probability 0
    // never is (its sum equals the one before it).
    return torch::searchsorted(cumulative, uniform * cumulative.narrow(-1, vocabulary - 1, 1),
                               /*out_int32=*/false, /*right=*/true)
        .squeeze(-1)
        .clamp_max(vocabulary - 1);
}

} // namespace

std::vector<LlamaModel::Generation>
LlamaModel::generateGroup(const std::vector<std::int32_t>& prompt, int count,
                          const GenerationOptions& options,
                          const std::vector<model::TokenConstraint*>& constraints) const {
    const LlamaNetwork& p = *impl_->net;
    if (prompt.empty() || count <= 0)
        return {};
    requireTokenIds(prompt, vocabulary());
    std::vector<Generation> out(static_cast<std::size_t>(count));
    const std::int64_t capacity = std::min<std::int64_t>(
        std::int64_t(prompt.size()) + std::max(0, options.maxTokens),
        std::max<std::int64_t>(p.config.context, std::int64_t(prompt.size())));
    torch::Generator generator = at::make_generator<at::CPUGeneratorImpl>(options.seed);
    const auto started = std::chrono::steady_clock::now();
    // The prompt's keys and values once, then copied to every row.
    LlamaNetwork::KvCache cache = p.allocateCache(1, capacity);
    const torch::Tensor input =
        torch::tensor(std::vector<std::int64_t>(prompt.begin(), prompt.end()), torch::kInt64)
            .view({1, -1})
            .to(p.device);
    // The last position's logits stay on the model's device: the draw happens there.
    torch::Tensor last = p.forward(input, &cache, false, LlamaNetwork::Adapters::Merged)
                             .select(1, -1)
                             .to(torch::kFloat32);
    if (count > 1) {
        for (auto* tensors : {&cache.keys, &cache.values})
            for (torch::Tensor& t : *tensors)
                t = t.repeat({count, 1, 1, 1});
        last = last.repeat({count, 1});
    }
    const double prefillSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const auto decoding = std::chrono::steady_clock::now();
    // Every step's uniform numbers at once (step by step, row by row: the order one draw per
    // step would take them in), on the device before decoding: a copy to the device per step
    // would wait for the step's forward pass on the host.
    const torch::Tensor uniforms =
        options.temperature > 0
            ? torch::rand({std::max(1, options.maxTokens), count, 1}, generator, torch::kFloat64)
                  .to(p.device)
            : torch::Tensor();
    // On a GPU each step is a CUDA graph's replay (DecodeGraphs says why); on the CPU, where a
    // launch costs nothing like a GPU's, the steps run as the prompt did.
    std::optional<DecodeGraphs> graphs;
    if (DecodeGraphs::wanted(p))
        graphs.emplace(p, cache, count);
    std::vector<bool> done(std::size_t(count), false);
    std::vector<std::int64_t> fed(std::size_t(count), prompt.back());
    for (Generation& g : out)
        g.stopReason = "max_tokens";
    const std::int64_t vocabulary = last.size(1);
    for (int step = 0; step < options.maxTokens; ++step) {
        const torch::Tensor scores = options.temperature > 0 ? last / options.temperature : last;
        const torch::Tensor logprobs = torch::log_softmax(scores, -1);
        // Each constrained row's disallowed tokens out of the draw (not out of the recorded
        // log-probabilities, which stay the unconstrained policy's).
        torch::Tensor drawable = scores;
        for (int r = 0; r < count; ++r) {
            model::TokenConstraint* constraint =
                std::size_t(r) < constraints.size() ? constraints[std::size_t(r)] : nullptr;
            if (done[std::size_t(r)] || !constraint)
                continue;
            std::vector<std::uint8_t> allowed = constraint->allowedTokens();
            allowed.resize(std::size_t(vocabulary), 0);
            const torch::Tensor mask =
                torch::from_blob(allowed.data(), {vocabulary}, torch::kUInt8).to(torch::kBool);
            if (!mask.any().item<bool>()) {
                out[std::size_t(r)].stopReason = "constraint";
                done[std::size_t(r)] = true;
                continue;
            }
            if (drawable.is_same(scores))
                drawable = scores.clone();
            drawable[r].masked_fill_(mask.logical_not().to(drawable.device()), -INFINITY);
        }
        const torch::Tensor drawnTokens =
            drawTokens(drawable, options, uniforms.defined() ? uniforms[step] : uniforms);
        // The tokens and their log-probabilities to the CPU in one copy (ids are exact in a
        // double): one wait for the device per step, as when the logits came over whole.
        const torch::Tensor drawn = torch::stack({drawnTokens.to(torch::kFloat64),
                                                  logprobs.gather(1, drawnTokens.view({count, 1}))
                                                      .view({count})
                                                      .to(torch::kFloat64)})
                                        .cpu()
                                        .contiguous();
        const double* drawnToken = drawn.data_ptr<double>();
        const double* drawnLogprob = drawnToken + count;
        for (int r = 0; r < count; ++r) {
            if (done[std::size_t(r)])
                continue;
            Generation& g = out[std::size_t(r)];
            model::TokenConstraint* constraint =
                std::size_t(r) < constraints.size() ? constraints[std::size_t(r)] : nullptr;
            const auto token = static_cast<std::int64_t>(drawnToken[r]);
            g.tokens.push_back(std::int32_t(token));
            g.logprobs.push_back(static_cast<float>(drawnLogprob[r]));
            fed[std::size_t(r)] = token;
            if (constraint)
                constraint->accept(std::int32_t(token));
            if (std::find(options.stopIds.begin(), options.stopIds.end(), std::int32_t(token)) !=
                options.stopIds.end()) {
                g.stopReason = "stop_token";
                done[std::size_t(r)] = true;
            } else if (cache.length >= capacity) {
                g.stopReason = "context";
                done[std::size_t(r)] = true;
            }
        }
        if (std::all_of(done.begin(), done.end(), [](bool d) { return d; }))
            break;
        if (cache.length >= capacity)
            break;
        const torch::Tensor next = torch::tensor(fed, torch::kInt64).view({count, 1});
        last = graphs ? graphs->step(next)
                      : p.forward(next.to(p.device), &cache, false, LlamaNetwork::Adapters::Merged)
                            .select(1, -1)
                            .to(torch::kFloat32);
    }
    std::string decodingMode = "eager";
    if (graphs)
        decodingMode =
            graphs->fallbackReason().empty()
                ? "cuda graphs (" + std::to_string(graphs->graphsCaptured()) + " captured)"
                : "eager (" + firstLine(graphs->fallbackReason()) + ")";
    const double decodeSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - decoding).count();
    for (Generation& g : out) {
        g.prefillSeconds = prefillSeconds;
        g.decodeSeconds = decodeSeconds;
        g.decoding = decodingMode;
    }
    return out;
}

std::vector<std::pair<std::string, model::FloatTensor>> LlamaModel::exportWeights() const {
    std::vector<std::pair<std::string, model::FloatTensor>> out;
    for (const auto& [name, tensor] : impl_->net->namedWeights()) {
        model::FloatTensor host;
        host.shape.assign(tensor.sizes().begin(), tensor.sizes().end());
        host.values.assign(tensor.data_ptr<float>(), tensor.data_ptr<float>() + tensor.numel());
        out.emplace_back(name, std::move(host));
    }
    return out;
}

const model::LlamaConfig& LlamaModel::config() const {
    return impl_->net->config;
}

int LlamaModel::vocabulary() const {
    return int(impl_->net->head.size(0));
}

std::string LlamaModel::describe() const {
    const model::LlamaConfig& c = impl_->net->config;
    return std::to_string(c.layers) + " layers, " + std::to_string(c.heads) + " heads (" +
           std::to_string(c.kvHeads) + " key/value), width " + std::to_string(c.width) + ", " +
           (impl_->net->device.is_cuda() ? "cuda " : "cpu ") +
           (impl_->net->dtype == torch::kBFloat16 ? "bfloat16" : "float32");
}

} // namespace kwb::torchnn
