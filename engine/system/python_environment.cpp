#include "engine/system/python_environment.h"

#include "engine/process/process_runner.h"
#include "engine/system/bounded_json.h"
#include "kwb/version.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

namespace kwb {
namespace {

// Prints one JSON object; torch failures are reported, not raised, so a broken torch install
// still yields the Python version and the import error.
constexpr const char* kProbeScript = R"PY(
import json, sys
info = {"python": sys.version.split()[0], "executable": sys.executable}
try:
    import torch
    info["torch"] = torch.__version__
    info["torch_cuda"] = torch.version.cuda or ""
    info["compile"] = hasattr(torch, "compile")
    try:
        info["cuda_available"] = bool(torch.cuda.is_available())
        info["device_count"] = torch.cuda.device_count() if info["cuda_available"] else 0
        if info["device_count"]:
            info["device_name"] = torch.cuda.get_device_name(0)
    except Exception as exc:
        info["cuda_error"] = str(exc)
except Exception as exc:
    info["torch_error"] = "%s: %s" % (type(exc).__name__, exc)
print(json.dumps(info))
)PY";

std::string homeDirectory() {
    const char* home = std::getenv("HOME");
    return home ? home : "";
}

} // namespace

std::string toString(PythonSource source) {
    switch (source) {
    case PythonSource::Environment:
        return "KWB_PYTHON";
    case PythonSource::Settings:
        return "settings";
    case PythonSource::ProjectVenv:
        return "project venv";
    case PythonSource::Path:
        return "PATH";
    }
    return "unknown";
}

std::string PythonProbe::summary() const {
    if (!runs)
        return "Python not found: " + error;
    if (!hasTorch)
        return "Python " + pythonVersion + " without torch (" + error + ")";
    std::string text = "torch " + torchVersion + " (Python " + pythonVersion + ")";
    if (cudaAvailable)
        text += ", CUDA " + torchCudaVersion + " on " + cudaDeviceName;
    else
        text += torchCudaVersion.empty() ? ", CPU build"
                                         : ", CUDA " + torchCudaVersion + " build, no GPU";
    return text;
}

std::string ninjaFor(const std::string& python) {
    if (!python.empty()) {
        const std::string beside = (std::filesystem::path(python).parent_path() / "ninja").string();
        if (!findExecutable(beside).empty())
            return beside;
    }
    return findExecutable("ninja");
}

std::vector<std::string> projectVenvPythons() {
    std::vector<std::string> paths;
    paths.push_back(std::string(build::kSourceDir) + "/.venv/bin/python3");
    const std::string home = homeDirectory();
    if (!home.empty())
        paths.push_back(home + "/.local/share/kernel-workbench/venv/bin/python3");
    return paths;
}

std::vector<PythonCandidate> pythonCandidates(const std::string& configuredPath) {
    std::vector<PythonCandidate> candidates;
    if (const char* env = std::getenv("KWB_PYTHON"); env && *env)
        candidates.push_back({env, PythonSource::Environment});
    if (!configuredPath.empty())
        candidates.push_back({configuredPath, PythonSource::Settings});
    for (const auto& venv : projectVenvPythons())
        if (std::filesystem::exists(venv))
            candidates.push_back({venv, PythonSource::ProjectVenv});
    for (const char* name : {"python3", "python"}) {
        std::string found = findExecutable(name);
        if (!found.empty()) {
            candidates.push_back({found, PythonSource::Path});
            break;
        }
    }
    return candidates;
}

PythonProbe probePython(const std::string& path, PythonSource source) {
    PythonProbe probe;
    probe.path = path;
    probe.source = source;
    if (path.empty()) {
        probe.error = "no interpreter configured";
        return probe;
    }
    ProcessSpec spec;
    spec.argv = {path, "-c", kProbeScript};
    spec.timeout = std::chrono::seconds(90);
    spec.outputLimitBytes = 64 * 1024;
    ProcessResult run = runProcess(spec);
    if (!run.started) {
        probe.error = run.startError;
        return probe;
    }
    if (!run.succeeded()) {
        probe.error = "'" + path + "' failed: " + run.statusText();
        if (!run.err.text.empty())
            probe.error += ": " + run.err.text.substr(0, 400);
        return probe;
    }
    nlohmann::json info = parseBoundedJson(run.out.text);
    if (info.is_discarded() || !info.is_object()) {
        probe.error = "'" + path + "' did not answer the probe (is it a Python interpreter?)";
        return probe;
    }
    probe.runs = true;
    probe.pythonVersion = info.value("python", "");
    if (info.contains("torch_error")) {
        probe.error = "cannot import torch: " + info.value("torch_error", "");
        return probe;
    }
    probe.hasTorch = info.contains("torch");
    probe.torchVersion = info.value("torch", "");
    probe.torchCudaVersion = info.value("torch_cuda", "");
    probe.hasTorchCompile = info.value("compile", false);
    probe.cudaAvailable = info.value("cuda_available", false);
    probe.cudaDeviceCount = intOr(info, "device_count", 0);
    probe.cudaDeviceName = info.value("device_name", "");
    return probe;
}

PythonProbe detectPython(const std::string& configuredPath) {
    std::vector<PythonCandidate> candidates = pythonCandidates(configuredPath);
    if (candidates.empty()) {
        PythonProbe none;
        none.error = "no python3 on PATH, no project venv, nothing configured";
        return none;
    }
    PythonProbe firstFailure;
    bool haveFailure = false;
    for (const auto& candidate : candidates) {
        PythonProbe probe = probePython(candidate.path, candidate.source);
        if (probe.usable())
            return probe;
        // An explicit choice that fails is what the user must hear about, not a later fallback.
        if (!haveFailure) {
            firstFailure = probe;
            haveFailure = true;
        }
        if (candidate.source == PythonSource::Environment ||
            candidate.source == PythonSource::Settings)
            return probe;
    }
    return firstFailure;
}

namespace {

// Whether `path` runs and has a torch package to import (without importing it).
bool torchInstalled(const std::string& path) {
    ProcessSpec spec;
    // -I: a torch/ folder in kwb's working directory is not an installed torch.
    spec.argv = {path, "-I", "-c",
                 "import importlib.util, sys; "
                 "sys.exit(0 if importlib.util.find_spec('torch') else 3)"};
    spec.timeout = std::chrono::seconds(20);
    spec.outputLimitBytes = 4096;
    return runProcess(spec).succeeded();
}

} // namespace

PythonProbe locatePython(const std::string& configuredPath) {
    for (const auto& candidate : pythonCandidates(configuredPath)) {
        if (torchInstalled(candidate.path)) {
            PythonProbe found;
            found.path = candidate.path;
            found.source = candidate.source;
            found.runs = found.hasTorch = true;
            return found;
        }
        // An explicit choice that fails is reported, not passed over (as detectPython does).
        if (candidate.source == PythonSource::Environment ||
            candidate.source == PythonSource::Settings)
            break;
    }
    return detectPython(configuredPath);
}

namespace {

std::vector<std::string> reportedPythonPrefixes(const std::string& python) {
    static std::mutex mutex;
    static std::map<std::string, std::vector<std::string>> known;
    {
        std::lock_guard lock(mutex);
        if (auto found = known.find(python); found != known.end())
            return found->second;
    }
    ProcessSpec spec;
    spec.argv = {python, "-I", "-c",
                 "import json, os, sys; print(json.dumps([sys.prefix, sys.base_prefix, "
                 "sys.exec_prefix, sys.base_exec_prefix, "
                 "os.path.dirname(os.path.dirname(sys.executable))]))"};
    spec.timeout = std::chrono::seconds(20);
    spec.outputLimitBytes = 16 * 1024;
    std::vector<std::string> folders;
    const ProcessResult run = runProcess(spec);
    const nlohmann::json reported =
        run.succeeded() ? parseBoundedJson(run.out.text) : nlohmann::json();
    if (reported.is_array())
        for (const auto& entry : reported)
            if (entry.is_string())
                folders.push_back(entry.get<std::string>());
    std::lock_guard lock(mutex);
    known[python] = folders;
    return folders;
}

} // namespace

std::vector<std::string> pythonInstallFolders(const std::string& python) {
    namespace fs = std::filesystem;
    std::vector<std::string> folders;
    auto add = [&folders](const fs::path& folder) {
        std::error_code ec;
        if (folder.empty() || !fs::is_directory(folder, ec))
            return;
        const std::string text = fs::weakly_canonical(folder, ec).string();
        if (std::find(folders.begin(), folders.end(), text) == folders.end())
            folders.push_back(text);
    };
    if (python.empty())
        return folders;
    std::error_code ec;
    const fs::path prefix = fs::absolute(python, ec).parent_path().parent_path();
    add(prefix);
    add(fs::weakly_canonical(python, ec).parent_path().parent_path());
    // What the interpreter itself says (a wrapper script that execs another Python, a venv
    // made from a Python in a hidden folder). Asked once per path: it takes ~30 ms.
    for (const auto& folder : reportedPythonPrefixes(python))
        add(folder);
    // A virtual environment names the installation it was made from.
    std::ifstream config(prefix / "pyvenv.cfg");
    for (std::string line; std::getline(config, line);) {
        if (line.rfind("home", 0) != 0)
            continue;
        const auto equals = line.find('=');
        if (equals == std::string::npos)
            continue;
        std::string home = line.substr(equals + 1);
        home.erase(0, home.find_first_not_of(" \t"));
        home.erase(home.find_last_not_of(" \t\r") + 1);
        add(fs::path(home).parent_path());
    }
    return folders;
}

} // namespace kwb
