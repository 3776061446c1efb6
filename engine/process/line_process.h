#pragma once

#include "engine/process/process_runner.h"

#include <chrono>
#include <optional>
#include <string>

namespace kwb {

// A long-lived child spoken to in lines over a private socket at its descriptor 3 (requests and
// replies); its stdout and stderr go to a file, its stdin is /dev/null. Used for the warm
// evaluation worker. runProcess() is for children that run to completion; this one stays up
// between requests. The child leads its own process group, so kill() also ends whatever it
// forked.
//
// Why not stdin and stdout: inside a sandbox, bubblewrap's init (PID 1) keeps descriptors 0-2
// open, and any process there can open /proc/1/fd/1. Candidate code could then write lines into
// the reply stream (a forged reply, or gigabytes without a newline); descriptor 3 is closed in
// that init and, with the server not dumpable, out of reach. A reply line longer than
// kMaxLineBytes ends the channel all the same.
class LineProcess {
public:
    LineProcess() = default;
    ~LineProcess();
    LineProcess(const LineProcess&) = delete;
    LineProcess& operator=(const LineProcess&) = delete;

    // argv, workingDirectory, environmentOverrides and limits of `spec` are used.
    bool start(const ProcessSpec& spec, const std::string& stderrPath, std::string* error);
    bool writeLine(const std::string& line);
    // The next line without its newline; nullopt on timeout or end of output (see ended()).
    std::optional<std::string> readLine(std::chrono::milliseconds timeout);
    bool ended() const { return ended_; }
    bool running();
    void kill(); // SIGKILL to the process group, then reaped
    int pid() const { return pid_; }

    static constexpr std::size_t kMaxLineBytes = 16 << 20;

private:
    int pid_ = -1;
    int channel_ = -1; // our end of the socket pair
    bool ended_ = false;
    std::string pending_;
    std::size_t scanned_ = 0; // bytes of pending_ known to hold no newline
};

} // namespace kwb
