#include "engine/workspace/contained_files.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace kwb {
namespace {

std::vector<std::string> componentsOf(std::string_view relative) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= relative.size()) {
        const std::size_t slash = relative.find('/', start);
        const std::size_t end = slash == std::string_view::npos ? relative.size() : slash;
        parts.emplace_back(relative.substr(start, end - start));
        if (slash == std::string_view::npos)
            break;
        start = slash + 1;
    }
    return parts;
}

// An owned descriptor, closed on every path out.
class Descriptor {
public:
    explicit Descriptor(int fd = -1) : fd_(fd) {}
    ~Descriptor() {
        if (fd_ >= 0)
            ::close(fd_);
    }
    Descriptor(const Descriptor&) = delete;
    Descriptor(Descriptor&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    Descriptor& operator=(const Descriptor&) = delete;
    Descriptor& operator=(Descriptor&& other) noexcept {
        if (this != &other) {
            if (fd_ >= 0)
                ::close(fd_);
            fd_ = other.fd_;
            other.fd_ = -1;
        }
        return *this;
    }
    int get() const { return fd_; }
    bool valid() const { return fd_ >= 0; }

private:
    int fd_;
};

constexpr int kDirectoryFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// The folder holding the last component, reached through real folders only. With `create`,
// missing folders are made and links or files in the way replaced.
Descriptor openParent(const std::filesystem::path& root, const std::vector<std::string>& parts,
                      bool create, std::string* error) {
    Descriptor dir(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir.valid()) {
        if (error)
            *error = "cannot open " + root.string() + ": " + std::strerror(errno);
        return Descriptor();
    }
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
        const char* name = parts[i].c_str();
        Descriptor next(::openat(dir.get(), name, kDirectoryFlags));
        if (!next.valid() && create) {
            const int why = errno;
            if (why == ELOOP || why == ENOTDIR)
                ::unlinkat(dir.get(), name, 0); // a link or a file where a folder belongs
            if (why == ENOENT || why == ELOOP || why == ENOTDIR)
                ::mkdirat(dir.get(), name, 0755);
            next = Descriptor(::openat(dir.get(), name, kDirectoryFlags));
        }
        if (!next.valid()) {
            if (error)
                *error = "cannot open folder " + parts[i] + ": " + std::strerror(errno);
            return Descriptor();
        }
        dir = std::move(next);
    }
    return dir;
}

} // namespace

std::string containedPathProblem(std::string_view relative) {
    if (relative.empty())
        return "empty path";
    if (relative.front() == '/')
        return "absolute path";
    if (relative.find('\0') != std::string_view::npos)
        return "path with a NUL byte";
    if (relative.find('\\') != std::string_view::npos)
        return "path with a backslash";
    for (const std::string& part : componentsOf(relative)) {
        if (part.empty())
            return "path with an empty component";
        if (part == "." || part == "..")
            return "path with a '" + part + "' component";
    }
    return {};
}

std::optional<std::string> readFileInside(const std::filesystem::path& root,
                                          std::string_view relative, std::size_t maxBytes) {
    if (!containedPathProblem(relative).empty())
        return std::nullopt;
    const std::vector<std::string> parts = componentsOf(relative);
    Descriptor dir = openParent(root, parts, false, nullptr);
    if (!dir.valid())
        return std::nullopt;
    Descriptor file(::openat(dir.get(), parts.back().c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    struct stat info {};
    if (!file.valid() || ::fstat(file.get(), &info) != 0 || !S_ISREG(info.st_mode) ||
        static_cast<std::size_t>(info.st_size) > maxBytes)
        return std::nullopt;
    std::string bytes;
    bytes.reserve(static_cast<std::size_t>(info.st_size));
    char buffer[65536];
    while (true) {
        const ssize_t n = ::read(file.get(), buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return std::nullopt;
        if (n == 0)
            break;
        bytes.append(buffer, static_cast<std::size_t>(n));
        if (bytes.size() > maxBytes)
            return std::nullopt; // it grew while being read
    }
    return bytes;
}

bool writeFileInside(const std::filesystem::path& root, std::string_view relative,
                     std::string_view bytes, std::string* error) {
    if (std::string problem = containedPathProblem(relative); !problem.empty()) {
        if (error)
            *error = problem + ": " + std::string(relative);
        return false;
    }
    const std::vector<std::string> parts = componentsOf(relative);
    Descriptor dir = openParent(root, parts, true, error);
    if (!dir.valid())
        return false;
    const char* name = parts.back().c_str();
    struct stat info {};
    if (::fstatat(dir.get(), name, &info, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(info.st_mode))
        ::unlinkat(dir.get(), name, 0);
    Descriptor file(
        ::openat(dir.get(), name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!file.valid()) {
        if (error)
            *error = "cannot write " + std::string(relative) + ": " + std::strerror(errno);
        return false;
    }
    std::size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t n = ::write(file.get(), bytes.data() + written, bytes.size() - written);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (error)
                *error = "cannot write " + std::string(relative) + ": " + std::strerror(errno);
            return false;
        }
        written += static_cast<std::size_t>(n);
    }
    return true;
}

bool removeFileInside(const std::filesystem::path& root, std::string_view relative) {
    if (!containedPathProblem(relative).empty())
        return false;
    const std::vector<std::string> parts = componentsOf(relative);
    Descriptor dir = openParent(root, parts, false, nullptr);
    if (!dir.valid())
        return errno == ENOENT; // a missing folder holds no file
    if (::unlinkat(dir.get(), parts.back().c_str(), 0) == 0)
        return true;
    return errno == ENOENT;
}

bool isRegularFileInside(const std::filesystem::path& root, std::string_view relative) {
    if (!containedPathProblem(relative).empty())
        return false;
    const std::vector<std::string> parts = componentsOf(relative);
    Descriptor dir = openParent(root, parts, false, nullptr);
    struct stat info {};
    return dir.valid() &&
           ::fstatat(dir.get(), parts.back().c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 &&
           S_ISREG(info.st_mode);
}

} // namespace kwb
