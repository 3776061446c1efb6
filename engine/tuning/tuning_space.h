#pragma once

#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace kwb {

// One tunable choice of a kernel template: its name, what it means, and the values it may take.
struct TuningKnob {
    std::string name;
    std::string about;
    std::vector<std::string> choices;
};

// A bundled task whose candidate is a template with knobs (block size, vector width, unrolling,
// reduction style, ...): the environment of a local RL run. The policy's action is one line
// naming a choice for every knob ("threads=256 vec=4 ..."), which the template turns into
// model_new.py and kernels/*.cu of a fast-path workspace. Read from a folder holding
// tuning.json and the template files, where `{{knob}}` stands for the chosen value and
// `{{action}}` for the action's text.
struct TuningSpace {
    using Action = std::vector<std::string>; // a choice per knob, in the knobs' order

    std::string name;     // the folder's name
    std::string folder;   // the template folder
    std::string taskPath; // the reference task (model.py of the workspace)
    std::string about;    // one or two sentences for the prompt
    std::vector<TuningKnob> knobs;
    std::vector<std::string> files; // template files, workspace-relative

    // `tasksDirectory` resolves tuning.json's task name. nullopt with `error` set when the
    // folder, its JSON, a knob, a file or a placeholder is wrong.
    static std::optional<TuningSpace> load(const std::string& folder,
                                           const std::string& tasksDirectory, std::string* error);

    // The action language as a ChoiceGrammar text: "threads={64|128} vec={1|2|4}".
    std::string grammar() const;
    std::string actionText(const Action& action) const;
    // nullopt unless the text names a valid choice for every knob, in order, as grammar() says.
    std::optional<Action> parseAction(const std::string& text) const;
    Action randomAction(std::mt19937_64& random) const;
    double actionCount() const;

    // The workspace files for an action (path, content); nullopt with `error` set when a
    // template cannot be read or names an unknown placeholder.
    std::optional<std::vector<std::pair<std::string, std::string>>>
    render(const Action& action, std::string* error) const;

    // The chat that asks the policy for an action.
    std::string systemPrompt() const;
    std::string userPrompt() const;
};

// Every space in `directory` (each sub-folder with a tuning.json), sorted by name, or those
// named in `only` in that order. A space that cannot be loaded is an error, not skipped.
std::optional<std::vector<TuningSpace>> loadTuningSpaces(const std::string& directory,
                                                         const std::vector<std::string>& only,
                                                         const std::string& tasksDirectory,
                                                         std::string* error);

// resources/tuning of the running kwb.
std::string bundledTuningDirectory();

} // namespace kwb
