#pragma once

#include <string>
#include <vector>

namespace kwb {

// Where an interpreter candidate came from; the order of the enum is the order of preference.
enum class PythonSource { Environment, Settings, ProjectVenv, Path };

std::string toString(PythonSource source);

struct PythonCandidate {
    std::string path;
    PythonSource source = PythonSource::Path;
};

// What one interpreter reported about itself. A probe that failed carries the reason in `error`
// ("not found", "does not run", "cannot import torch: ...").
struct PythonProbe {
    std::string path;
    PythonSource source = PythonSource::Path;
    bool runs = false;
    bool hasTorch = false;
    std::string pythonVersion;
    std::string torchVersion;
    std::string torchCudaVersion; // empty for CPU-only torch builds
    bool cudaAvailable = false;
    int cudaDeviceCount = 0;
    std::string cudaDeviceName;
    bool hasTorchCompile = false;
    std::string error;

    bool usable() const { return runs && hasTorch; }
    std::string summary() const;
};

// The project's own virtual environments, in preference order: `<source>/.venv`, then the
// per-user one that tools/setup.sh creates and shares between clones.
std::vector<std::string> projectVenvPythons();

// Candidates in preference order: $KWB_PYTHON, the configured path, the project's virtual
// environments, then python3 on PATH. Missing paths are kept so a bad setting is reported.
std::vector<PythonCandidate> pythonCandidates(const std::string& configuredPath);

// The folders a sandboxed process needs to run `python`: its own prefix (a virtual
// environment's root) and the installation that prefix was made from (its interpreter's real
// location, and a venv's `home`), which may sit in a folder the sandbox hides, such as a pyenv
// Python below the home folder. Existing folders only, each once.
std::vector<std::string> pythonInstallFolders(const std::string& python);

// The ninja torch's extension builds will use for stages run by `python`: the one installed
// beside it (pip's, in its venv: stages have the interpreter's folder first on PATH), else the
// first on PATH; empty when there is none.
std::string ninjaFor(const std::string& python);

// Runs the interpreter once (a few seconds: it imports torch). Never throws.
PythonProbe probePython(const std::string& path, PythonSource source = PythonSource::Settings);

// The first candidate that can import torch; otherwise the most useful failure to show.
PythonProbe detectPython(const std::string& configuredPath);

// The first candidate where torch is installed (found, not imported: tens of milliseconds, not
// seconds), for callers that only need the path; versions stay empty. Where none has it, the
// full probe's answer, which says why.
PythonProbe locatePython(const std::string& configuredPath);

} // namespace kwb
