#include "agent/tools/files/text_files.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace fs = std::filesystem;

namespace kwb::agent {

FileText readWholeFile(const std::string& path, std::size_t maxBytes) {
    FileText result;
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (!fs::exists(status))
        return result;
    if (fs::is_directory(status)) {
        result.error = "is a folder, not a file";
        return result;
    }
    if (!fs::is_regular_file(status)) {
        result.error = "is not a regular file";
        return result;
    }
    const auto size = fs::file_size(path, ec);
    if (!ec && size > maxBytes) {
        result.error = "is too large (" + std::to_string(size) + " bytes)";
        return result;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        result.error = std::string("cannot be read: ") + std::strerror(errno);
        return result;
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    result.text = buffer.str();
    return result;
}

bool looksBinary(std::string_view text) {
    return text.substr(0, 8192).find('\0') != std::string_view::npos;
}

std::string writeWholeFile(const std::string& path, std::string_view text) {
    const fs::path target = path;
    std::error_code ec;
    if (fs::is_directory(target, ec))
        return "is a folder, not a file";
    fs::create_directories(target.parent_path(), ec);
    if (ec)
        return "cannot create its folder: " + ec.message();
    std::random_device device;
    const fs::path temporary = target.parent_path() / ("." + target.filename().string() + ".kwb-" +
                                                       std::to_string(device()) + ".tmp");
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        if (!out)
            return std::string("cannot be written: ") + std::strerror(errno);
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        out.flush();
        if (!out) {
            fs::remove(temporary, ec);
            return "cannot be written (disk full?)";
        }
    }
    const fs::file_status old = fs::status(target, ec);
    if (fs::exists(old))
        fs::permissions(temporary, old.permissions(), ec);
    fs::rename(temporary, target, ec);
    if (ec) {
        std::error_code ignored;
        fs::remove(temporary, ignored);
        return "cannot be replaced: " + ec.message();
    }
    return {};
}

} // namespace kwb::agent
