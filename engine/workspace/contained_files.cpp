#include "engine/workspace/contained_files.h"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <random>
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

// A new file under a name no one else uses, created (O_EXCL: never an existing file, link or
// hard link) in `dir`; its name is returned in `name`.
Descriptor createFreshFile(int dir, std::string& name) {
    static thread_local std::mt19937_64 random{std::random_device{}()};
    for (int attempt = 0; attempt < 16; ++attempt) {
        name = ".kwb-new-" + std::to_string(::getpid()) + "-" + std::to_string(random());
        Descriptor file(::openat(dir, name.c_str(),
                                 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
        if (file.valid() || errno != EEXIST)
            return file;
    }
    return Descriptor();
}

bool writeAll(int fd, std::string_view bytes) {
    std::size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        written += static_cast<std::size_t>(n);
    }
    return true;
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
    // Non-blocking: a FIFO in the file's place would otherwise hold the reader until a writer
    // came; it is refused below like any other non-file.
    Descriptor file(
        ::openat(dir.get(), parts.back().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
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
                     std::string_view bytes, std::string* error, int mode) {
    if (std::string problem = containedPathProblem(relative); !problem.empty()) {
        if (error)
            *error = problem + ": " + std::string(relative);
        return false;
    }
    const std::vector<std::string> parts = componentsOf(relative);
    Descriptor dir = openParent(root, parts, true, error);
    if (!dir.valid())
        return false;
    const auto fail = [&](const std::string& what) {
        if (error)
            *error = what + " " + std::string(relative) + ": " + std::strerror(errno);
        return false;
    };
    std::string temporary;
    Descriptor file = createFreshFile(dir.get(), temporary);
    if (!file.valid())
        return fail("cannot write");
    struct stat replaced {};
    if (mode < 0)
        mode = ::fstatat(dir.get(), parts.back().c_str(), &replaced, AT_SYMLINK_NOFOLLOW) == 0 &&
                       S_ISREG(replaced.st_mode)
                   ? static_cast<int>(replaced.st_mode & 0777)
                   : 0644;
    const bool written =
        ::fchmod(file.get(), static_cast<mode_t>(mode & 0777)) == 0 && writeAll(file.get(), bytes);
    const int why = errno;
    file = Descriptor();
    // rename() replaces whatever entry has the name (a link, a hard link to a file elsewhere)
    // and never writes through it.
    if (!written ||
        ::renameat(dir.get(), temporary.c_str(), dir.get(), parts.back().c_str()) != 0) {
        const int failure = written ? errno : why;
        ::unlinkat(dir.get(), temporary.c_str(), 0);
        errno = failure;
        return fail(written ? "cannot replace" : "cannot write");
    }
    return true;
}

bool makeFolderInside(const std::filesystem::path& root, std::string_view relative,
                      std::string* error) {
    if (std::string problem = containedPathProblem(relative); !problem.empty()) {
        if (error)
            *error = problem + ": " + std::string(relative);
        return false;
    }
    std::vector<std::string> parts = componentsOf(relative);
    parts.emplace_back(); // openParent makes and opens every component before the last
    return openParent(root, parts, true, error).valid();
}

std::vector<std::string> regularFilesInside(const std::filesystem::path& root,
                                            std::string_view relative) {
    std::vector<std::string> names;
    if (!containedPathProblem(relative).empty())
        return names;
    std::vector<std::string> parts = componentsOf(relative);
    parts.emplace_back();
    Descriptor folder = openParent(root, parts, false, nullptr);
    const int listed = folder.valid() ? ::dup(folder.get()) : -1;
    DIR* entries = listed >= 0 ? ::fdopendir(listed) : nullptr;
    if (!entries) {
        if (listed >= 0)
            ::close(listed);
        return names;
    }
    while (const dirent* entry = ::readdir(entries)) {
        struct stat info {};
        if (::fstatat(folder.get(), entry->d_name, &info, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISREG(info.st_mode))
            names.emplace_back(entry->d_name);
    }
    ::closedir(entries);
    return names;
}

AnchoredPath anchoredPath(const std::filesystem::path& root, const std::filesystem::path& path) {
    namespace fs = std::filesystem;
    const fs::path normal = (fs::absolute(path).lexically_normal() / "").parent_path();
    const std::string inside =
        normal.lexically_relative(fs::absolute(root).lexically_normal()).generic_string();
    if (!inside.empty() && containedPathProblem(inside).empty())
        return {fs::absolute(root).lexically_normal(), inside};
    return {normal.parent_path(), normal.filename().string()};
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
