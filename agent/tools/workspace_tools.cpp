#include "agent/tools/workspace_tools.h"

#include "agent/tools/evaluation_summary.h"
#include "agent/tools/tool_arguments.h"
#include "engine/evaluation/evaluator.h"
#include "engine/workspace/workspace.h"

#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

using nlohmann::json;

namespace kwb::agent {
namespace {

enum class Mode { Compile, Verify, Profile };

// Finding the task Python probes it (seconds: it imports torch), so each tool keeps its
// evaluator for as long as the interpreter setting stays the same.
class EvaluatorCache {
public:
    const Evaluator& get(const std::string& python) {
        std::lock_guard lock(mutex_);
        if (!evaluator_ || python_ != python) {
            evaluator_.emplace(python);
            python_ = python;
        }
        return *evaluator_;
    }

private:
    std::mutex mutex_;
    std::optional<Evaluator> evaluator_;
    std::string python_;
};

class EvaluationTool : public Tool {
public:
    EvaluationTool(Mode mode, std::shared_ptr<EvaluatorCache> cache)
        : mode_(mode), cache_(std::move(cache)) {
        const char* name = mode == Mode::Compile  ? "Compile"
                           : mode == Mode::Verify ? "Verify"
                                                  : "Profile";
        const char* description =
            mode == Mode::Compile
                ? "Builds kernels/*.cu, kernels/*.cpp and binding.cpp into the workspace's torch "
                  "extension, after the static source checks. Shows compiler errors with file and "
                  "line."
            : mode == Mode::Verify
                ? "Compiles, then checks model_new.py's ModelNew against model.py's Model on fresh "
                  "random inputs (the trusted evaluator, sandboxed). Reward 1 when correct, -1 "
                  "otherwise."
                : "The full evaluation: compile, verify, then time eager PyTorch, torch.compile "
                  "and your ModelNew. Reward -1 (failed), 1 (correct), 2 (>5% faster than eager), "
                  "3 (also >5% faster than torch.compile).";
        schema_ = objectSchema(name, description, json::object(), {});
    }

    const ToolSchema& schema() const override { return schema_; }

    ToolResult run(const json&, ToolContext& context, std::stop_token stop) override {
        if (!isWorkspace(context.workspace))
            return ToolResult::error(context.workspace +
                                     " is not a workspace (model.py and model_new.py missing)");
        EvaluationOptions options = context.evaluation;
        options.profile = mode_ == Mode::Profile;
        options.stopAfterCompile = mode_ == Mode::Compile;
        const EvaluationTarget target = EvaluationTarget::forWorkspace(context.workspace);
        const EvaluationResult r =
            context.evaluations
                ? *context.evaluations->evaluate({target, options, context.evaluationTag}, {}, stop)
                : cache_->get(context.python).evaluate(target, options, {}, stop);
        if (stop.stop_requested())
            return ToolResult::error("cancelled");
        const std::string text =
            mode_ == Mode::Compile ? summarizeCompile(r) : summarizeEvaluation(r);
        const char* mode = mode_ == Mode::Compile  ? "compile"
                           : mode_ == Mode::Verify ? "verify"
                                                   : "profile";
        return ToolResult::success(text, {{"mode", mode}, {"evaluation", toJson(r)}});
    }

private:
    Mode mode_;
    std::shared_ptr<EvaluatorCache> cache_;
    ToolSchema schema_;
};

} // namespace

std::vector<std::unique_ptr<Tool>> makeWorkspaceTools() {
    auto cache = std::make_shared<EvaluatorCache>();
    std::vector<std::unique_ptr<Tool>> tools;
    for (Mode mode : {Mode::Compile, Mode::Verify, Mode::Profile})
        tools.push_back(std::make_unique<EvaluationTool>(mode, cache));
    return tools;
}

} // namespace kwb::agent
