#include "engine/process/environment.h"

#include <array>
#include <cctype>

extern char** environ;

namespace kwb {
namespace {

constexpr std::array<std::string_view, 21> kExactNames = {"PATH",
                                                          "LANG",
                                                          "LANGUAGE",
                                                          "LC_ALL",
                                                          "LC_CTYPE",
                                                          "LC_NUMERIC",
                                                          "TZ",
                                                          "USER",
                                                          "LOGNAME",
                                                          "CUDA_HOME",
                                                          "CUDA_PATH",
                                                          "LD_LIBRARY_PATH",
                                                          "LIBRARY_PATH",
                                                          "CPATH",
                                                          "CC",
                                                          "CXX",
                                                          "NVIDIA_VISIBLE_DEVICES",
                                                          "NVIDIA_DRIVER_CAPABILITIES",
                                                          "TORCH_CUDA_ARCH_LIST",
                                                          "KWB_DEVICE",
                                                          "TERM"};

// Families tools read for behaviour, not identity: thread pools and BLAS quirks (some machines
// need OPENBLAS_CORETYPE to compute correctly), CUDA and torch tuning.
constexpr std::array<std::string_view, 8> kPrefixes = {"OMP_", "MKL_",  "OPENBLAS_", "GOMP_",
                                                       "KMP_", "CUDA_", "TORCH_",    "PYTORCH_"};

// Hooks that load code into the child: the engine sets them itself when it means to.
constexpr std::array<std::string_view, 4> kNeverInherited = {
    "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "LD_PRELOAD", "LD_AUDIT"};

} // namespace

std::map<std::string, std::string> currentEnvironment() {
    std::map<std::string, std::string> variables;
    for (char** entry = environ; entry && *entry; ++entry) {
        const std::string_view kv(*entry);
        const auto eq = kv.find('=');
        if (eq != std::string_view::npos)
            variables[std::string(kv.substr(0, eq))] = kv.substr(eq + 1);
    }
    return variables;
}

std::vector<std::string> environmentStrings(const std::map<std::string, std::string>& variables) {
    std::vector<std::string> strings;
    strings.reserve(variables.size());
    for (const auto& [key, value] : variables)
        strings.push_back(key + "=" + value);
    return strings;
}

std::vector<std::string> mergedEnvironment(const std::map<std::string, std::string>& overrides) {
    std::map<std::string, std::string> merged = currentEnvironment();
    for (const auto& [key, value] : overrides)
        merged[key] = value;
    return environmentStrings(merged);
}

bool looksLikeCredentialName(std::string_view name) {
    std::string n(name);
    for (char& c : n)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (std::string_view word : {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL",
                                  "AUTH", "COOKIE", "SESSION"})
        if (n.find(word) != std::string::npos)
            return true;
    for (std::string_view family : {"AWS_", "AZURE_", "GOOGLE_", "GCP_", "GCLOUD_", "HF_", "GH_",
                                    "GITHUB_", "OPENAI", "ANTHROPIC"})
        if (n.rfind(family, 0) == 0)
            return true;
    return false;
}

bool passesIntoSandbox(std::string_view name) {
    for (std::string_view never : kNeverInherited)
        if (name == never)
            return false;
    if (looksLikeCredentialName(name))
        return false;
    for (std::string_view exact : kExactNames)
        if (name == exact)
            return true;
    for (std::string_view prefix : kPrefixes)
        if (name.substr(0, prefix.size()) == prefix)
            return true;
    return false;
}

std::map<std::string, std::string> sandboxEnvironment() {
    std::map<std::string, std::string> environment;
    for (auto& [name, value] : currentEnvironment())
        if (passesIntoSandbox(name))
            environment.emplace(name, std::move(value));
    if (!environment.count("PATH"))
        environment["PATH"] = "/usr/local/bin:/usr/bin:/bin";
    return environment;
}

} // namespace kwb
