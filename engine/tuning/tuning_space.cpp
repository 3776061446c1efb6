#include "engine/tuning/tuning_space.h"

#include "engine/system/resource_paths.h"
#include "engine/workspace/contained_files.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

namespace kwb {
namespace {

namespace fs = std::filesystem;

// A knob's name or choice must survive the action line and the grammar: no spaces, no '=' in
// names, none of the grammar's special characters.
bool isPlainWord(const std::string& s, bool allowEquals) {
    if (s.empty() || s.size() > 64)
        return false;
    return std::all_of(s.begin(), s.end(), [&](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u > 32 && u < 127 && c != '{' && c != '}' && c != '|' && c != '\\' &&
               (allowEquals || c != '=');
    });
}

// Replaces `{{name}}` by its value; an unknown name is an error.
std::optional<std::string>
substitute(const std::string& text, const std::vector<std::pair<std::string, std::string>>& values,
           std::string* error) {
    std::string out;
    std::size_t at = 0;
    for (;;) {
        const std::size_t open = text.find("{{", at);
        if (open == std::string::npos) {
            out.append(text, at, std::string::npos);
            return out;
        }
        const std::size_t close = text.find("}}", open + 2);
        if (close == std::string::npos) {
            *error = "a '{{' is not closed";
            return std::nullopt;
        }
        out.append(text, at, open - at);
        const std::string name = text.substr(open + 2, close - open - 2);
        const auto found = std::find_if(values.begin(), values.end(),
                                        [&](const auto& v) { return v.first == name; });
        if (found == values.end()) {
            *error = "unknown placeholder {{" + name + "}}";
            return std::nullopt;
        }
        out += found->second;
        at = close + 2;
    }
}

} // namespace

std::optional<TuningSpace> TuningSpace::load(const std::string& folder,
                                             const std::string& tasksDirectory,
                                             std::string* error) {
    TuningSpace space;
    space.folder = folder;
    space.name = fs::path(folder).filename().string();
    const auto fail = [&](const std::string& why) -> std::optional<TuningSpace> {
        *error = space.name + ": " + why;
        return std::nullopt;
    };
    const auto text = readFileInside(folder, "tuning.json");
    if (!text)
        return fail("cannot read tuning.json");
    const nlohmann::json d = nlohmann::json::parse(*text, nullptr, false);
    if (d.is_discarded() || !d.is_object())
        return fail("tuning.json is not a JSON object");
    if (!d.value("task", nlohmann::json()).is_string())
        return fail("tuning.json needs \"task\": the bundled task file's name");
    const std::string task = d["task"].get<std::string>();
    if (task.find('/') != std::string::npos || task.find("..") != std::string::npos)
        return fail("the task must be a file name in the tasks folder");
    space.taskPath = (fs::path(tasksDirectory) / task).string();
    if (!fs::is_regular_file(space.taskPath))
        return fail("task " + space.taskPath + " does not exist");
    space.about = d.value("about", nlohmann::json("")).is_string() ? d.value("about", "") : "";
    const nlohmann::json knobs = d.value("knobs", nlohmann::json());
    if (!knobs.is_array() || knobs.empty())
        return fail("tuning.json needs \"knobs\": a list of {name, choices, about}");
    for (const nlohmann::json& k : knobs) {
        TuningKnob knob;
        if (!k.is_object() || !k.value("name", nlohmann::json()).is_string())
            return fail("each knob needs a name");
        knob.name = k["name"].get<std::string>();
        if (!isPlainWord(knob.name, false) || knob.name == "action")
            return fail("knob name '" + knob.name + "' is not a plain word");
        for (const auto& other : space.knobs)
            if (other.name == knob.name)
                return fail("knob " + knob.name + " is named twice");
        knob.about = k.value("about", nlohmann::json("")).is_string() ? k.value("about", "") : "";
        const nlohmann::json choices = k.value("choices", nlohmann::json());
        if (!choices.is_array() || choices.empty())
            return fail("knob " + knob.name + " needs choices");
        for (const nlohmann::json& c : choices) {
            if (!c.is_string() || !isPlainWord(c.get<std::string>(), true))
                return fail("knob " + knob.name + " has a choice that is not a plain word");
            if (std::find(knob.choices.begin(), knob.choices.end(), c.get<std::string>()) !=
                knob.choices.end())
                return fail("knob " + knob.name + " lists a choice twice");
            knob.choices.push_back(c.get<std::string>());
        }
        space.knobs.push_back(std::move(knob));
    }
    const nlohmann::json files = d.value("files", nlohmann::json());
    if (!files.is_array() || files.empty())
        return fail("tuning.json needs \"files\": the template files");
    bool hasModel = false;
    for (const nlohmann::json& f : files) {
        if (!f.is_string())
            return fail("each file is a workspace-relative path");
        const std::string file = f.get<std::string>();
        if (file != "model_new.py" &&
            (file.rfind("kernels/", 0) != 0 || file.find("..") != std::string::npos ||
             file.find('/', 8) != std::string::npos))
            return fail(file + ": templates write model_new.py and kernels/<file> only");
        hasModel |= file == "model_new.py";
        space.files.push_back(file);
    }
    if (!hasModel)
        return fail("the files must include model_new.py");
    // Every template must read and render: a broken one is found now, not mid-run.
    Action first;
    for (const auto& knob : space.knobs)
        first.push_back(knob.choices.front());
    if (std::string why; !space.render(first, &why))
        return fail(why);
    return space;
}

std::string TuningSpace::grammar() const {
    std::string g;
    for (std::size_t i = 0; i < knobs.size(); ++i) {
        g += (i ? " " : "") + knobs[i].name + "={";
        for (std::size_t c = 0; c < knobs[i].choices.size(); ++c)
            g += (c ? "|" : "") + knobs[i].choices[c];
        g += "}";
    }
    return g;
}

std::string TuningSpace::actionText(const Action& action) const {
    std::string text;
    for (std::size_t i = 0; i < knobs.size() && i < action.size(); ++i)
        text += (i ? " " : "") + knobs[i].name + "=" + action[i];
    return text;
}

std::optional<TuningSpace::Action> TuningSpace::parseAction(const std::string& text) const {
    std::istringstream words(text);
    Action action;
    std::string word;
    for (const TuningKnob& knob : knobs) {
        if (!(words >> word) || word.rfind(knob.name + "=", 0) != 0)
            return std::nullopt;
        const std::string value = word.substr(knob.name.size() + 1);
        if (std::find(knob.choices.begin(), knob.choices.end(), value) == knob.choices.end())
            return std::nullopt;
        action.push_back(value);
    }
    if (words >> word)
        return std::nullopt;
    return action;
}

TuningSpace::Action TuningSpace::randomAction(std::mt19937_64& random) const {
    Action action;
    for (const TuningKnob& knob : knobs)
        action.push_back(knob.choices[std::uniform_int_distribution<std::size_t>(
            0, knob.choices.size() - 1)(random)]);
    return action;
}

double TuningSpace::actionCount() const {
    double count = 1;
    for (const TuningKnob& knob : knobs)
        count *= double(knob.choices.size());
    return count;
}

std::optional<std::vector<std::pair<std::string, std::string>>>
TuningSpace::render(const Action& action, std::string* error) const {
    if (action.size() != knobs.size()) {
        *error =
            "an action needs a choice for each of the " + std::to_string(knobs.size()) + " knobs";
        return std::nullopt;
    }
    std::vector<std::pair<std::string, std::string>> values;
    for (std::size_t i = 0; i < knobs.size(); ++i)
        values.emplace_back(knobs[i].name, action[i]);
    values.emplace_back("action", actionText(action));
    std::vector<std::pair<std::string, std::string>> out;
    for (const std::string& file : files) {
        const auto text = readFileInside(folder, file);
        if (!text) {
            *error = name + ": cannot read template " + file;
            return std::nullopt;
        }
        std::string why;
        auto rendered = substitute(*text, values, &why);
        if (!rendered) {
            *error = name + "/" + file + ": " + why;
            return std::nullopt;
        }
        out.emplace_back(file, std::move(*rendered));
    }
    return out;
}

std::string TuningSpace::systemPrompt() const {
    return "You tune CUDA kernels for speed on the GPU. Answer with the settings only, on one "
           "line, in the form the user gives.";
}

std::string TuningSpace::userPrompt() const {
    std::string text = "Task: " + about + "\nSettings:\n";
    for (const TuningKnob& knob : knobs) {
        text += "- " + knob.name + " (" + knob.about + "): ";
        for (std::size_t c = 0; c < knob.choices.size(); ++c)
            text += (c ? ", " : "") + knob.choices[c];
        text += "\n";
    }
    text += "Answer as: ";
    for (std::size_t i = 0; i < knobs.size(); ++i)
        text += (i ? " " : "") + knobs[i].name + "=<" + knobs[i].name + ">";
    return text;
}

std::optional<std::vector<TuningSpace>> loadTuningSpaces(const std::string& directory,
                                                         const std::vector<std::string>& only,
                                                         const std::string& tasksDirectory,
                                                         std::string* error) {
    std::vector<std::string> names = only;
    if (names.empty()) {
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(directory, ec))
            if (entry.is_directory() && fs::exists(entry.path() / "tuning.json"))
                names.push_back(entry.path().filename().string());
        if (ec) {
            *error = "cannot list " + directory + ": " + ec.message();
            return std::nullopt;
        }
        std::sort(names.begin(), names.end());
    }
    std::vector<TuningSpace> spaces;
    for (const std::string& name : names) {
        if (name.empty() || name.find('/') != std::string::npos || name == "..") {
            *error = "'" + name + "' is not a tuning space name";
            return std::nullopt;
        }
        auto space =
            TuningSpace::load((fs::path(directory) / name).string(), tasksDirectory, error);
        if (!space)
            return std::nullopt;
        spaces.push_back(std::move(*space));
    }
    if (spaces.empty()) {
        *error = "no tuning space in " + directory;
        return std::nullopt;
    }
    return spaces;
}

std::string bundledTuningDirectory() {
    return (fs::path(resourceRoot()) / "tuning").string();
}

} // namespace kwb
