#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kwb {

// The environments kwb gives its children, and what it knows about environment variables.

// kwb's own environment, by name.
std::map<std::string, std::string> currentEnvironment();

// "KEY=value" strings for execve.
std::vector<std::string> environmentStrings(const std::map<std::string, std::string>& variables);

// The current environment with `overrides` applied, as "KEY=value" strings for execve.
std::vector<std::string> mergedEnvironment(const std::map<std::string, std::string>& overrides);

// Whether an environment variable's name says it holds a credential: *KEY*, *TOKEN*, *SECRET*,
// *PASSWORD*, *CREDENTIAL*, *AUTH*, *COOKIE*, *SESSION*, and the cloud and model-provider
// families (AWS_*, AZURE_*, GOOGLE_*, HF_*, OPENAI*, ...). Such values never enter a sandbox
// and are redacted wherever kwb writes or shows text.
bool looksLikeCredentialName(std::string_view name);

// The environment every sandboxed child starts from (harness stages, the warm worker, the
// agent's shell and background jobs): an allow-list of what tools and libraries need (PATH,
// locale, the CUDA toolkit and driver, thread counts, BLAS quirks), never the rest of kwb's
// environment. API keys, cloud credentials, HOME, SSH and desktop sockets stay outside. A
// variable on the list whose name looks like a credential is still left out, and injection
// hooks (CUDA_INJECTION64_PATH, LD_PRELOAD) are set by the engine when it means them, never
// inherited. Callers add what the child needs on top (HOME, caches, the harness path).
std::map<std::string, std::string> sandboxEnvironment();

// Whether `name` from kwb's environment may pass into a sandbox.
bool passesIntoSandbox(std::string_view name);

} // namespace kwb
