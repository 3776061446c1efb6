#pragma once

#include <string>

namespace kwb {

// Where `kwb serve` listens and how a client finds it. One daemon serves one configuration: the
// same executable, task Python and environment that decide an evaluation (KWB_* variables, PATH,
// CUDA_VISIBLE_DEVICES, the cache folders). A client with another configuration gets a daemon of
// its own instead of results computed under someone else's settings.
struct ServiceEndpoint {
    std::string directory;  // owner-only (0700), checked before every use
    std::string socketPath; // <directory>/serve-<fingerprint>.sock
    std::string lockPath;   // held by the running daemon for its whole life
    std::string logPath;    // the daemon's output when a client started it
};

// The fingerprint of this process's configuration for `python` (the --python option; empty:
// auto-detect, which itself depends on the environment).
std::string serviceFingerprint(const std::string& python);

// $XDG_RUNTIME_DIR/kernel-workbench, or /tmp/kernel-workbench-<uid>.
ServiceEndpoint serviceEndpoint(const std::string& fingerprint);

// Creates the endpoint's folder if needed and checks that it is a real folder owned by this user
// and closed to everyone else (a socket there is then only reachable by this user). Returns why
// not, or "".
std::string prepareEndpointDirectory(const ServiceEndpoint& endpoint);

} // namespace kwb
