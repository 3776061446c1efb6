#include "engine/torch/policy_trainer.h"

#include "engine/torch/advantages.h"
#include "engine/torch/llama_model.h"
#include "engine/torch/llama_network.h"
#include "engine/torch/multi_tensor_step.h"
#include "engine/torch/policy_losses.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#if __has_include(<c10/core/CachingDeviceAllocator.h>)
#include <c10/core/CachingDeviceAllocator.h>
#define KWB_HAVE_DEVICE_ALLOCATOR_STATS 1
#endif
#include <sys/resource.h>
#include <torch/torch.h>

namespace kwb::torchnn {
namespace {

// A batch as tensors: right-padded tokens [B, T], which tokens are real, which are trained.
struct Collated {
    torch::Tensor ids, valid, trained, sampled;
    bool hasSampled = true;
    // The first position (in the predicted-token frame) that any sequence trains on: the head
    // and the log-softmax over the vocabulary are computed from there only, since a long prompt
    // before the policy's tokens would otherwise cost most of a step's time and memory.
    std::int64_t firstTrained = 0;
};

Collated collate(const std::vector<TrainingSequence>& batch, torch::Device device) {
    std::size_t length = 0;
    for (const auto& s : batch)
        length = std::max(length, s.tokens.size());
    const auto B = static_cast<std::int64_t>(batch.size());
    const auto T = static_cast<std::int64_t>(length);
    Collated c;
    c.ids = torch::zeros({B, T}, torch::kInt64);
    c.valid = torch::zeros({B, T}, torch::kFloat32);
    c.trained = torch::zeros({B, T}, torch::kFloat32);
    c.sampled = torch::zeros({B, T}, torch::kFloat32);
    auto ids = c.ids.accessor<std::int64_t, 2>();
    auto valid = c.valid.accessor<float, 2>();
    auto trained = c.trained.accessor<float, 2>();
    auto sampled = c.sampled.accessor<float, 2>();
    for (std::int64_t b = 0; b < B; ++b) {
        const TrainingSequence& s = batch[b];
        c.hasSampled = c.hasSampled && s.sampledLogprobs.size() == s.tokens.size();
        for (std::size_t t = 0; t < s.tokens.size(); ++t) {
            ids[b][t] = s.tokens[t];
            valid[b][t] = 1.0F;
            trained[b][t] = t < s.trained.size() && s.trained[t] ? 1.0F : 0.0F;
            if (t < s.sampledLogprobs.size())
                sampled[b][t] = s.sampledLogprobs[t];
        }
    }
    std::int64_t first = T;
    for (const auto& s : batch)
        for (std::size_t t = 1; t < s.tokens.size() && t < s.trained.size(); ++t)
            if (s.trained[t]) {
                first = std::min(first, static_cast<std::int64_t>(t) - 1);
                break;
            }
    c.firstTrained = first == T ? 0 : first;
    c.ids = c.ids.to(device);
    c.valid = c.valid.to(device);
    c.trained = c.trained.to(device);
    c.sampled = c.sampled.to(device);
    return c;
}

std::int64_t peakMemory(torch::Device device) {
    // On the CPU the process's high-water mark; on a GPU the caching allocator's peak of
    // allocated bytes (what torch.cuda.max_memory_allocated reports), where this libtorch has
    // the statistics (torch 2.8 and later); 0 where neither is known.
    if (device.is_cpu()) {
        rusage usage{};
        getrusage(RUSAGE_SELF, &usage);
        return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;
    }
#ifdef KWB_HAVE_DEVICE_ALLOCATOR_STATS
    try {
        const auto stats = c10::getDeviceAllocator(device.type())
                               ->getDeviceStats(device.has_index() ? device.index() : 0);
        return stats
            .allocated_bytes[static_cast<std::size_t>(c10::CachingAllocator::StatType::AGGREGATE)]
            .peak;
    } catch (const c10::Error&) {
        return 0; // an allocator without statistics
    }
#else
    return 0;
#endif
}

} // namespace

struct PolicyTrainer::Impl {
    LlamaNetwork* net = nullptr;
    bool lora = true;
    OptimiserSettings settings;
    std::vector<torch::Tensor> parameters;
    std::unique_ptr<torch::optim::AdamW> optimiser;
    std::string error;
    int steps = 0;

    // Generation's merged float32 weights (LoraLinear::forwardMerged) are read by no training
    // pass, and a policy step makes them stale anyway: dropped before the step's forward pass,
    // they are not part of its peak memory (SmolLM2's 210 adapted projections: 405 MiB).
    void releaseGenerationWeights() const { net->adaptersChanged(); }

    // The trained tokens in the predicted-token frame (positions 1..T-1).
    static torch::Tensor predictedMask(const Collated& c) {
        const std::int64_t T = c.ids.size(1);
        return c.trained.narrow(1, 1, T - 1) * c.valid.narrow(1, 1, T - 1);
    }

    // Why a policy update cannot run with these settings, or "".
    std::string updateProblem(const PolicyUpdateSettings& settings) const {
        if (settings.klCoefficient != 0.0 && !lora)
            return "a KL term needs the LoRA reference (the base weights); full fine-tuning "
                   "keeps no copy of them";
        return {};
    }

    // What the clipped policy loss compares against: the sampler's log-probabilities (or the
    // policy's before the update), the reference's for a KL term, and the loss's options.
    struct PolicyBaseline {
        torch::Tensor old, reference;
        PolicyLossOptions options;
    };
    PolicyBaseline policyBaseline(const Collated& c, const PolicyUpdateSettings& settings) const {
        const std::int64_t T = c.ids.size(1);
        PolicyBaseline b;
        b.old = c.hasSampled ? c.sampled.narrow(1, 1, T - 1)
                             : predict(c, false, false, c.firstTrained).logprobs.detach();
        if (settings.klCoefficient != 0.0)
            b.reference =
                predict(c, false, /*withoutAdapters=*/true, c.firstTrained).logprobs.detach();
        b.options.clipLow = settings.clipLow;
        b.options.clipHigh = settings.clipHigh;
        b.options.klCoefficient = settings.klCoefficient;
        b.options.entropyCoefficient = settings.entropyCoefficient;
        return b;
    }

    // One optimiser step on the clipped policy loss; its figures go into `out`.
    void policyUpdate(const Collated& c, const torch::Tensor& advantages, const torch::Tensor& mask,
                      const PolicyBaseline& baseline, TrainingStep& out) {
        const TokenLogprobs predicted =
            predict(c, true, false, c.firstTrained, baseline.options.entropyCoefficient != 0.0);
        const PolicyLoss loss =
            clippedPolicyLoss(predicted.logprobs, baseline.old, advantages, mask, baseline.options,
                              baseline.reference, predicted.entropy);
        optimise(loss.loss, out);
        out.loss = loss.loss.item<double>();
        out.clipFraction = loss.clipFraction;
        out.approximateKl = loss.approximateKl;
        out.referenceKl = loss.referenceKl;
        out.entropy = loss.entropy;
    }

    // The figures every step ends with: trained tokens, time, throughput over `passes` forward
    // and backward passes of the batch, peak memory.
    void finishStep(TrainingStep& out, const Collated& c, const torch::Tensor& mask,
                    std::chrono::steady_clock::time_point started, int passes) const {
        out.tokens = static_cast<std::int64_t>(mask.sum().item<double>());
        out.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        out.tokensPerSecond =
            out.seconds > 0 ? c.valid.sum().item<double>() * passes / out.seconds : 0;
        out.peakMemoryBytes = peakMemory(net->device);
    }

    // PPO's critic (enableCritic): its own network (the policy's base weights, adapters of its
    // own), a value head, an optimiser.
    std::unique_ptr<LlamaNetwork> critic;
    torch::Tensor valueWeight, valueBias;
    std::vector<torch::Tensor> criticParameters;
    std::unique_ptr<torch::optim::AdamW> criticOptimiser;
    CriticSettings criticSettings;

    // The critic's value of the state before each predicted token: [B, T - 1].
    torch::Tensor values(const Collated& c, bool withGrad) const {
        std::optional<torch::NoGradGuard> noGrad;
        if (!withGrad)
            noGrad.emplace();
        const std::int64_t T = c.ids.size(1);
        const torch::Tensor hidden =
            critic->hiddenStates(c.ids, nullptr, withGrad).narrow(1, 0, T - 1);
        return torch::linear(hidden.to(torch::kFloat32), valueWeight, valueBias).squeeze(-1);
    }

    // The episode's reward on its last trained token (in the predicted-token frame).
    static torch::Tensor terminalRewards(const std::vector<TrainingSequence>& batch,
                                         const torch::Tensor& mask) {
        torch::Tensor rewards = torch::zeros(mask.sizes(), torch::kFloat32);
        const torch::Tensor m = mask.cpu();
        for (std::size_t b = 0; b < batch.size(); ++b) {
            const auto row = static_cast<std::int64_t>(b);
            const torch::Tensor trained = m[row].nonzero();
            if (trained.size(0) > 0)
                rewards[row][trained[-1][0].item<std::int64_t>()] = batch[b].reward;
        }
        return rewards.to(mask.device());
    }

    void optimiseCritic(const torch::Tensor& loss) {
        criticOptimiser->zero_grad();
        loss.backward();
        clipGradientNorm(criticParameters, settings.maxGradNorm > 0 ? settings.maxGradNorm : 1e30);
        adamwStep(*criticOptimiser);
        critic->adaptersChanged();
    }

    double learningRateAt(int step) const {
        if (settings.warmupSteps <= 0 || step >= settings.warmupSteps)
            return settings.learningRate;
        return settings.learningRate * double(step + 1) / double(settings.warmupSteps);
    }

    // Predictions of tokens 1..T-1 from positions 0..T-2: log-probabilities and entropy, zero
    // before `from` (positions nothing trains on; the vocabulary-wide work is skipped there).
    // The entropy carries gradients only with `entropyGradient` (tokenLogprobs says why).
    TokenLogprobs predict(const Collated& c, bool withGrad, bool withoutAdapters = false,
                          std::int64_t from = 0, bool entropyGradient = false) const {
        const std::int64_t T = c.ids.size(1);
        std::optional<torch::NoGradGuard> noGrad;
        if (!withGrad)
            noGrad.emplace();
        const torch::Tensor hidden = net->hiddenStates(
            c.ids, nullptr, withGrad,
            withoutAdapters ? LlamaNetwork::Adapters::Off : LlamaNetwork::Adapters::Trained);
        const torch::Tensor logits = torch::linear(hidden.narrow(1, from, T - 1 - from), net->head);
        TokenLogprobs window = tokenLogprobs(logits, c.ids.narrow(1, from + 1, T - 1 - from),
                                             withGrad && entropyGradient);
        if (from == 0)
            return window;
        const std::vector<std::int64_t> padding = {from, 0}; // `from` zeros before, none after
        window.logprobs = torch::constant_pad_nd(window.logprobs, padding, 0.0);
        window.entropy = torch::constant_pad_nd(window.entropy, padding, 0.0);
        return window;
    }

    // Zero gradients, backward, clip, the scheduled step; fills the step's common fields.
    void optimise(const torch::Tensor& loss, TrainingStep& out) {
        const double rate = learningRateAt(steps);
        for (auto& group : optimiser->param_groups())
            static_cast<torch::optim::AdamWOptions&>(group.options()).lr(rate);
        optimiser->zero_grad();
        loss.backward();
        out.gradNorm =
            clipGradientNorm(parameters, settings.maxGradNorm > 0 ? settings.maxGradNorm : 1e30);
        adamwStep(*optimiser);
        net->adaptersChanged(); // LoRA's merged weights for generation; nothing without LoRA
        out.learningRate = rate;
        out.step = ++steps;
    }
};

PolicyTrainer::PolicyTrainer(LlamaModel& model, const LoraSettings& lora,
                             const OptimiserSettings& optimiser)
    : impl_(std::make_unique<Impl>()) {
    Impl& p = *impl_;
    p.net = &model.network();
    p.lora = lora.enabled;
    p.settings = optimiser;
    if (lora.enabled) {
        p.parameters = p.net->attachLora(lora.rank, lora.alpha, lora.targets, lora.seed, p.error);
    } else {
        // Full fine-tuning: every weight learns (the head too when it is not the embedding).
        LlamaNetwork& n = *p.net;
        std::vector<torch::Tensor*> all = {&n.embed, &n.norm};
        if (!n.config.tiedEmbeddings)
            all.push_back(&n.head);
        for (auto& layer : n.layers) {
            all.push_back(&layer.attnNorm);
            all.push_back(&layer.ffnNorm);
            for (auto& projection : layer.projections)
                all.push_back(&projection);
            for (auto& bias : layer.biases)
                if (bias.defined())
                    all.push_back(&bias);
        }
        for (torch::Tensor* t : all) {
            *t = t->detach().to(torch::kFloat32).set_requires_grad(true);
            p.parameters.push_back(*t);
        }
        if (n.config.tiedEmbeddings)
            n.head = n.embed;
        n.dtype = torch::kFloat32; // trained weights stay in float32
    }
    if (p.error.empty() && p.parameters.empty())
        p.error = "nothing to train";
    if (!p.error.empty())
        return;
    p.optimiser = std::make_unique<torch::optim::AdamW>(
        p.parameters,
        torch::optim::AdamWOptions(optimiser.learningRate).weight_decay(optimiser.weightDecay));
}

PolicyTrainer::~PolicyTrainer() = default;

const std::string& PolicyTrainer::error() const {
    return impl_->error;
}

std::int64_t PolicyTrainer::trainableParameters() const {
    std::int64_t n = 0;
    for (const auto& t : impl_->parameters)
        n += t.numel();
    return n;
}

int PolicyTrainer::steps() const {
    return impl_->steps;
}

namespace {

constexpr std::int64_t kCheckpointFormat = 1;

void writeTensors(torch::serialize::OutputArchive& archive, const std::string& prefix,
                  const std::vector<torch::Tensor>& tensors) {
    archive.write(prefix + "count", torch::tensor(static_cast<std::int64_t>(tensors.size())));
    for (std::size_t i = 0; i < tensors.size(); ++i)
        archive.write(prefix + std::to_string(i), tensors[i].detach());
}

// The tensors under `prefix`, each checked against the trainer's own; empty with `error` set
// when they do not fit.
std::vector<torch::Tensor> readTensors(torch::serialize::InputArchive& archive,
                                       const std::string& prefix,
                                       const std::vector<torch::Tensor>& expected,
                                       std::string& error) {
    torch::Tensor count;
    archive.read(prefix + "count", count);
    if (count.item<std::int64_t>() != static_cast<std::int64_t>(expected.size())) {
        error = "it holds " + std::to_string(count.item<std::int64_t>()) + " " + prefix +
                " tensors where this trainer has " + std::to_string(expected.size()) +
                " (another rank, LoRA targets or model?)";
        return {};
    }
    std::vector<torch::Tensor> tensors(expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        archive.read(prefix + std::to_string(i), tensors[i]);
        if (tensors[i].sizes() != expected[i].sizes()) {
            error = "its " + prefix + std::to_string(i) +
                    " has another shape than this "
                    "trainer's (another rank, LoRA targets or model?)";
            return {};
        }
    }
    return tensors;
}

void copyInto(const std::vector<torch::Tensor>& targets, const std::vector<torch::Tensor>& from) {
    torch::NoGradGuard noGrad;
    for (std::size_t i = 0; i < targets.size(); ++i)
        targets[i].copy_(from[i]);
}

} // namespace

std::string PolicyTrainer::saveCheckpoint(const std::string& path) const {
    const Impl& p = *impl_;
    if (!p.error.empty())
        return p.error;
    const std::string partial = path + ".part";
    try {
        torch::serialize::OutputArchive archive;
        archive.write("format", torch::tensor(kCheckpointFormat));
        archive.write("steps", torch::tensor(static_cast<std::int64_t>(p.steps)));
        writeTensors(archive, "policy/", p.parameters);
        torch::serialize::OutputArchive optimiser;
        p.optimiser->save(optimiser);
        archive.write("policy_optimiser", optimiser);
        archive.write("has_critic", torch::tensor(static_cast<std::int64_t>(p.critic != nullptr)));
        if (p.critic) {
            writeTensors(archive, "critic/", p.criticParameters);
            torch::serialize::OutputArchive criticOptimiser;
            p.criticOptimiser->save(criticOptimiser);
            archive.write("critic_optimiser", criticOptimiser);
        }
        archive.save_to(partial);
    } catch (const c10::Error& e) {
        std::remove(partial.c_str());
        return "cannot write the checkpoint " + path + ": " + e.what_without_backtrace();
    }
    // rename(2): libtorch exports its own std::filesystem symbols, which have crashed here.
    if (std::rename(partial.c_str(), path.c_str()) != 0) {
        std::remove(partial.c_str());
        return "cannot write the checkpoint " + path + ": " + std::strerror(errno);
    }
    return {};
}

std::string PolicyTrainer::loadCheckpoint(const std::string& path) {
    Impl& p = *impl_;
    if (!p.error.empty())
        return p.error;
    const std::string refused = "cannot resume from " + path + ": ";
    try {
        torch::serialize::InputArchive archive;
        archive.load_from(path, p.net->device);
        torch::Tensor format, steps, hasCritic;
        archive.read("format", format);
        if (format.item<std::int64_t>() != kCheckpointFormat)
            return refused + "checkpoint format " + std::to_string(format.item<std::int64_t>()) +
                   " is not this version's (" + std::to_string(kCheckpointFormat) + ")";
        archive.read("steps", steps);
        archive.read("has_critic", hasCritic);
        if ((hasCritic.item<std::int64_t>() != 0) != (p.critic != nullptr))
            return refused + (p.critic ? "it has no critic and this trainer has one"
                                       : "it has a critic and this trainer has none");
        std::string error;
        const std::vector<torch::Tensor> policy =
            readTensors(archive, "policy/", p.parameters, error);
        if (!error.empty())
            return refused + error;
        std::vector<torch::Tensor> critic;
        if (p.critic) {
            critic = readTensors(archive, "critic/", p.criticParameters, error);
            if (!error.empty())
                return refused + error;
        }
        // Everything fits: the optimisers' state, then the weights.
        torch::serialize::InputArchive optimiser;
        archive.read("policy_optimiser", optimiser);
        p.optimiser->load(optimiser);
        if (p.critic) {
            torch::serialize::InputArchive criticOptimiser;
            archive.read("critic_optimiser", criticOptimiser);
            p.criticOptimiser->load(criticOptimiser);
            copyInto(p.criticParameters, critic);
            p.critic->adaptersChanged();
        }
        copyInto(p.parameters, policy);
        p.net->adaptersChanged();
        p.steps = static_cast<int>(steps.item<std::int64_t>());
    } catch (const c10::Error& e) {
        return refused + e.what_without_backtrace();
    }
    return {};
}

TrainingStep PolicyTrainer::supervisedStep(const std::vector<TrainingSequence>& batch) {
    Impl& p = *impl_;
    TrainingStep out;
    if (!p.error.empty() || batch.empty())
        return out;
    const auto started = std::chrono::steady_clock::now();
    const Collated c = collate(batch, p.net->device);
    if (c.ids.size(1) < 2)
        return out;
    const torch::Tensor mask = Impl::predictedMask(c);
    p.releaseGenerationWeights();
    const TokenLogprobs predicted = p.predict(c, true, false, c.firstTrained);
    const torch::Tensor loss = -maskedMean(predicted.logprobs, mask);
    p.optimise(loss, out);
    out.loss = loss.item<double>();
    out.entropy = maskedMean(predicted.entropy.detach(), mask).item<double>();
    p.finishStep(out, c, mask, started, 1);
    return out;
}

TrainingStep PolicyTrainer::groupPolicyStep(const std::vector<TrainingSequence>& batch,
                                            const PolicyUpdateSettings& settings) {
    Impl& p = *impl_;
    TrainingStep out;
    if (!p.error.empty() || batch.empty())
        return out;
    if (const std::string why = p.updateProblem(settings); !why.empty()) {
        p.error = why;
        return out;
    }
    const auto started = std::chrono::steady_clock::now();
    const Collated c = collate(batch, p.net->device);
    if (c.ids.size(1) < 2)
        return out;
    const torch::Tensor mask = Impl::predictedMask(c);
    std::vector<double> rewardValues;
    std::vector<std::int64_t> groupValues;
    for (const auto& s : batch) {
        rewardValues.push_back(s.reward);
        groupValues.push_back(s.group);
    }
    const torch::Tensor rewards = torch::tensor(rewardValues, torch::kFloat32);
    const torch::Tensor advantages =
        groupRelativeAdvantages(rewards, torch::tensor(groupValues, torch::kInt64), mask.cpu())
            .to(p.net->device);
    p.releaseGenerationWeights();
    const Impl::PolicyBaseline baseline = p.policyBaseline(c, settings);
    const int epochs = std::max(1, settings.epochs);
    for (int epoch = 0; epoch < epochs; ++epoch)
        p.policyUpdate(c, advantages, mask, baseline, out);
    out.meanReward = rewards.mean().item<double>();
    p.finishStep(out, c, mask, started, epochs);
    return out;
}

std::string PolicyTrainer::enableCritic(const CriticSettings& settings) {
    Impl& p = *impl_;
    if (!p.error.empty())
        return p.error;
    auto critic = std::make_unique<LlamaNetwork>(*p.net);
    for (auto& layer : critic->layers)
        for (auto& adapter : layer.adapters)
            adapter.reset(); // the policy's stay the policy's
    if (!p.lora) {
        // Full fine-tuning changes the policy's weights in place: the critic keeps a copy of
        // its own, frozen under its adapters.
        const auto frozen = [](torch::Tensor& t) { t = t.detach().clone(); };
        frozen(critic->embed);
        frozen(critic->norm);
        critic->head =
            critic->config.tiedEmbeddings ? critic->embed : critic->head.detach().clone();
        for (auto& layer : critic->layers) {
            frozen(layer.attnNorm);
            frozen(layer.ffnNorm);
            for (auto& projection : layer.projections)
                frozen(projection);
            for (auto& bias : layer.biases)
                if (bias.defined())
                    frozen(bias);
        }
    }
    std::string error;
    std::vector<torch::Tensor> parameters = critic->attachLora(
        settings.rank, settings.alpha,
        {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"},
        settings.seed, error);
    if (!error.empty())
        return error;
    const auto options = torch::TensorOptions().dtype(torch::kFloat32).device(critic->device);
    p.valueWeight = torch::zeros({1, critic->config.width}, options).set_requires_grad(true);
    p.valueBias = torch::zeros({1}, options).set_requires_grad(true);
    parameters.push_back(p.valueWeight);
    parameters.push_back(p.valueBias);
    p.criticParameters = parameters;
    p.criticOptimiser = std::make_unique<torch::optim::AdamW>(
        parameters, torch::optim::AdamWOptions(settings.learningRate).weight_decay(0.0));
    p.criticSettings = settings;
    p.critic = std::move(critic);
    return {};
}

TrainingStep PolicyTrainer::valueStep(const std::vector<TrainingSequence>& batch) {
    Impl& p = *impl_;
    TrainingStep out;
    if (!p.critic) {
        p.error = p.error.empty() ? "value steps need a critic (enableCritic)" : p.error;
        return out;
    }
    if (batch.empty())
        return out;
    const auto started = std::chrono::steady_clock::now();
    const Collated c = collate(batch, p.net->device);
    if (c.ids.size(1) < 2)
        return out;
    const torch::Tensor mask = Impl::predictedMask(c);
    // Zero values and lambda 1 make GAE's returns the discounted reward-to-go.
    const AdvantageEstimate target =
        generalisedAdvantages(Impl::terminalRewards(batch, mask), torch::zeros_like(mask), mask,
                              p.criticSettings.gamma, 1.0);
    const torch::Tensor values = p.values(c, true);
    const torch::Tensor loss = clippedValueLoss(values, values.detach(), target.returns, mask, 0.0);
    p.optimiseCritic(loss);
    out.valueLoss = loss.item<double>();
    out.meanValue = maskedMean(values.detach(), mask).item<double>();
    out.meanReturn = maskedMean(target.returns, mask).item<double>();
    p.finishStep(out, c, mask, started, 1);
    out.step = p.steps;
    return out;
}

TrainingStep PolicyTrainer::ppoStep(const std::vector<TrainingSequence>& batch,
                                    const PolicyUpdateSettings& settings) {
    Impl& p = *impl_;
    TrainingStep out;
    if (!p.critic) {
        p.error = p.error.empty() ? "PPO steps need a critic (enableCritic)" : p.error;
        return out;
    }
    if (const std::string why = p.updateProblem(settings); !why.empty()) {
        p.error = why;
        return out;
    }
    if (batch.empty())
        return out;
    const auto started = std::chrono::steady_clock::now();
    const Collated c = collate(batch, p.net->device);
    if (c.ids.size(1) < 2)
        return out;
    const torch::Tensor mask = Impl::predictedMask(c);
    const torch::Tensor rewards = Impl::terminalRewards(batch, mask);
    p.releaseGenerationWeights();
    const torch::Tensor oldValues = p.values(c, false);
    const AdvantageEstimate estimate = generalisedAdvantages(
        rewards, oldValues, mask, p.criticSettings.gamma, p.criticSettings.lambda);
    const torch::Tensor advantages = maskedWhiten(estimate.advantages, mask);
    const Impl::PolicyBaseline baseline = p.policyBaseline(c, settings);
    const int epochs = std::max(1, settings.epochs);
    for (int epoch = 0; epoch < epochs; ++epoch) {
        p.policyUpdate(c, advantages, mask, baseline, out);
        const torch::Tensor values = p.values(c, true);
        const torch::Tensor valueLoss =
            clippedValueLoss(values, oldValues, estimate.returns, mask, p.criticSettings.valueClip);
        p.optimiseCritic(valueLoss);
        out.valueLoss = valueLoss.item<double>();
    }
    double total = 0;
    for (const auto& s : batch)
        total += s.reward;
    out.meanReward = total / double(batch.size());
    out.meanValue = maskedMean(oldValues, mask).item<double>();
    out.meanReturn = maskedMean(estimate.returns, mask).item<double>();
    p.finishStep(out, c, mask, started, epochs);
    return out;
}

std::vector<std::vector<float>>
PolicyTrainer::logprobs(const std::vector<TrainingSequence>& batch) const {
    std::vector<std::vector<float>> out;
    if (batch.empty())
        return out;
    const Collated c = collate(batch, impl_->net->device);
    const std::int64_t T = c.ids.size(1);
    torch::Tensor values = torch::zeros({c.ids.size(0), T}, torch::kFloat32);
    if (T >= 2)
        values.narrow(1, 1, T - 1).copy_(impl_->predict(c, false).logprobs.cpu());
    for (std::size_t b = 0; b < batch.size(); ++b) {
        const torch::Tensor row = values[static_cast<std::int64_t>(b)].contiguous();
        const float* first = row.data_ptr<float>();
        out.emplace_back(first, first + batch[b].tokens.size());
    }
    return out;
}

} // namespace kwb::torchnn
