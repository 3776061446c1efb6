#pragma once

#include <string>

namespace kwb::diagnostics {

// A fresh private folder under the system temp directory, removed with everything in it when
// the object goes away (a compile's intermediates, disassembly input).
class ScratchDirectory {
public:
    explicit ScratchDirectory(const std::string& prefix = "kwb-check-");
    ~ScratchDirectory();
    ScratchDirectory(const ScratchDirectory&) = delete;
    ScratchDirectory& operator=(const ScratchDirectory&) = delete;

    bool ok() const { return !path_.empty(); }
    const std::string& path() const { return path_; } // empty when it could not be created

private:
    std::string path_;
};

} // namespace kwb::diagnostics
