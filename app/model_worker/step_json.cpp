#include "step_json.h"

namespace kwb::modelworker {

nlohmann::json stepJson(const torchnn::TrainingStep& r) {
    return {{"step", r.step},
            {"loss", r.loss},
            {"learning_rate", r.learningRate},
            {"grad_norm", r.gradNorm},
            {"clip_fraction", r.clipFraction},
            {"approximate_kl", r.approximateKl},
            {"reference_kl", r.referenceKl},
            {"entropy", r.entropy},
            {"mean_reward", r.meanReward},
            {"value_loss", r.valueLoss},
            {"tokens", r.tokens},
            {"seconds", r.seconds},
            {"tokens_per_second", r.tokensPerSecond},
            {"peak_memory_bytes", r.peakMemoryBytes}};
}

} // namespace kwb::modelworker
