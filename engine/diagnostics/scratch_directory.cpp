#include "engine/diagnostics/scratch_directory.h"

#include <cstdlib>
#include <filesystem>

namespace kwb::diagnostics {

ScratchDirectory::ScratchDirectory(const std::string& prefix) {
    std::error_code ec;
    std::string pattern = (std::filesystem::temp_directory_path(ec) / (prefix + "XXXXXX")).string();
    if (ec)
        pattern = "/tmp/" + prefix + "XXXXXX";
    if (mkdtemp(pattern.data()))
        path_ = pattern;
}

ScratchDirectory::~ScratchDirectory() {
    if (path_.empty())
        return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

} // namespace kwb::diagnostics
