#pragma once

#include "engine/process/process_runner.h"

#include <chrono>
#include <optional>
#include <string>

namespace kwb {

// A long-lived child spoken to in lines: requests on its stdin, replies on its stdout; its
// stderr goes to a file. Used for the warm evaluation worker. runProcess() is for children that
// run to completion; this one stays up between requests. The child leads its own process group,
// so kill() also ends whatever it forked.
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

private:
    int pid_ = -1;
    int toChild_ = -1;
    int fromChild_ = -1;
    bool ended_ = false;
    std::string pending_;
};

} // namespace kwb
