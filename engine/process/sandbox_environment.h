#pragma once

#include <map>
#include <string>
#include <string_view>

namespace kwb {

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
