#include "engine/evaluation/bytecode_cache.h"

#include "engine/evaluation/harness_stage.h"
#include "engine/process/sandbox.h"
#include "engine/system/content_hash.h"
#include "engine/system/exclusive_file_lock.h"
#include "engine/system/python_environment.h"
#include "engine/system/resource_paths.h"
#include "engine/workspace/contained_files.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace kwb {
namespace {

constexpr const char* kMarkerName = "kwb-fill.txt";
// A fill imports torch and the modules torch.compile loads: 5-15 s; a minute on a loaded
// two-core machine. Ten minutes means the interpreter hangs.
constexpr std::chrono::seconds kFillTimeout{600};

std::string modificationTime(const fs::path& path) {
    std::error_code ec;
    const auto time = fs::last_write_time(path, ec);
    return ec ? "-" : std::to_string(time.time_since_epoch().count());
}

// Each <folder>/{lib,local/lib}/python3.X of the installation: the folders that hold the standard
// library and, below them, site-packages or dist-packages.
std::vector<fs::path> pythonLibFolders(const std::string& python) {
    std::vector<fs::path> folders;
    for (const auto& installed : pythonInstallFolders(python))
        for (const char* lib : {"lib", "local/lib"}) {
            std::error_code ec;
            for (fs::directory_iterator it(fs::path(installed) / lib, ec), end; !ec && it != end;
                 it.increment(ec))
                if (it->path().filename().string().rfind("python3", 0) == 0 && it->is_directory(ec))
                    folders.push_back(it->path());
        }
    return folders;
}

constexpr const char* kPackageFolders[] = {"site-packages", "dist-packages"};

// Waits for the fill lock another process may hold; nullopt when stopped or after the fill's
// own time limit (the holder hangs: this process then goes on without a cache).
std::optional<ExclusiveFileLock> waitForLock(const fs::path& lockFile, std::stop_token stop,
                                             std::string& problem) {
    const auto deadline = std::chrono::steady_clock::now() + kFillTimeout;
    while (true) {
        bool heldByOther = false;
        std::string error;
        if (auto lock = ExclusiveFileLock::tryAcquire(lockFile.string(), &error, &heldByOther))
            return lock;
        if (!heldByOther || stop.stop_requested() || std::chrono::steady_clock::now() > deadline) {
            problem =
                stop.stop_requested() ? "stopped while another process filled the cache" : error;
            return std::nullopt;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

// Whether `path` is a folder of its own, not a link to one (the cache's folders are bound into
// sandboxes and written by the fill: a link there would point both somewhere else).
bool isRealFolder(const fs::path& path) {
    std::error_code ec;
    return fs::symlink_status(path, ec).type() == fs::file_type::directory;
}

// Whether the installation ships bytecode for torch beside its sources (pip writes it at install
// unless told not to): stages then read that, and a cache would only hide what the fill did not
// import (Python consults either the prefix or the sources' __pycache__, never both).
bool installationShipsBytecode(const std::string& python) {
    for (const fs::path& lib : pythonLibFolders(python))
        for (const char* packages : kPackageFolders) {
            std::error_code ec;
            for (fs::directory_iterator it(lib / packages / "torch" / "__pycache__", ec), end;
                 !ec && it != end; it.increment(ec))
                if (it->path().filename().string().rfind("__init__.", 0) == 0 &&
                    it->path().extension() == ".pyc")
                    return true;
        }
    return false;
}

// Runs kwb_harness.bytecode_fill in the sandbox into `folder` (new and empty), its only writable
// folder besides a HOME of its own. Empty when it worked, else why not.
std::string fill(const fs::path& folder, const std::string& python, std::stop_token stop) {
    const fs::path home = fs::path(folder.string() + "-home");
    std::error_code ec;
    fs::create_directories(folder, ec);
    fs::create_directories(home, ec);
    SandboxPolicy policy;
    policy.writablePaths = {folder.string(), home.string()};
    policy.readOnlyPaths = {harnessDirectory()};
    for (const auto& installed : pythonInstallFolders(python))
        policy.readOnlyPaths.push_back(installed);
    policy.hiddenPaths = kwbOwnTrees();
    policy.limits.openFiles = 4096;
    policy.maxProcesses = 64;
    const std::string bootstrap = (fs::path(harnessDirectory()) / "kwb_stage.py").string();
    // No -B: writing bytecode is the point. -I keeps PYTHON* variables out, so the prefix comes
    // from KWB_BYTECODE_CACHE through the bootstrap, as in a stage.
    SandboxedCommand command = sandboxCommand(
        {python, "-I", "-u", bootstrap, "kwb_harness.bytecode_fill"}, home.string(), policy);
    command.spec.timeout = kFillTimeout;
    command.spec.stop = stop;
    command.spec.environmentOverrides["KWB_BYTECODE_CACHE"] = folder.string();
    command.spec.environmentOverrides["HOME"] = home.string();
    command.spec.environmentOverrides["CUDA_VISIBLE_DEVICES"] = "";
    command.spec.environmentOverrides["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1";
    const ProcessResult process = runProcess(command.spec);
    fs::remove_all(home, ec);
    if (process.succeeded())
        return "";
    return "filling the bytecode cache with " + python + " failed (" + process.statusText() + ")" +
           (process.err.text.empty() ? "" : ": " + lastLines(process.err.text, 400));
}

// Fills a fresh folder beside `folder` and puts it in its place: a refill never keeps a file of
// the folder it replaces (a .pyc whose recorded source time and size still match would be read,
// not rewritten, by the fill's own imports).
std::string refill(const fs::path& folder, const std::string& python,
                   const std::string& fingerprint, std::stop_token stop) {
    const std::string pid = std::to_string(::getpid());
    const fs::path fresh = folder.string() + ".fill." + pid;
    const fs::path old = folder.string() + ".old." + pid;
    std::error_code ec;
    fs::remove_all(fresh, ec);
    if (std::string problem = fill(fresh, python, stop); !problem.empty()) {
        fs::remove_all(fresh, ec);
        return problem;
    }
    std::ofstream(fresh / kMarkerName) << fingerprint;
    fs::remove_all(old, ec);
    if (fs::exists(fs::symlink_status(folder, ec)))
        fs::rename(folder, old, ec);
    fs::rename(fresh, folder, ec);
    const std::string problem = ec ? "cannot put the filled cache in place: " + ec.message() : "";
    fs::remove_all(old, ec);
    fs::remove_all(fresh, ec);
    return problem;
}

BytecodeCache lookUpOrFill(const std::string& cacheDirectory, const std::string& python,
                           std::stop_token stop) {
    const auto started = std::chrono::steady_clock::now();
    BytecodeCache cache;
    const fs::path root = fs::path(cacheDirectory) / "bytecode";
    const std::string key = sha256Hex(python).substr(0, 16);
    const fs::path folder = root / key;
    std::error_code ec;
    fs::create_directories(root, ec);
    if (!isRealFolder(root)) {
        cache.problem = root.string() + " is not a folder of its own";
        return cache;
    }
    auto lock = waitForLock(root / (key + ".lock"), stop, cache.problem);
    if (lock) {
        const std::string fingerprint = bytecodeFingerprint(python);
        if (isRealFolder(folder) &&
            readFileInside(folder, kMarkerName, fingerprint.size() + 1) == fingerprint) {
            cache.folder = folder.string();
        } else if (cache.problem = refill(folder, python, fingerprint, stop);
                   cache.problem.empty()) {
            cache.folder = folder.string();
        }
    }
    cache.fillSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return cache;
}

// One answer per process, cache folder and interpreter: a fill is looked at once, and a failed
// one is not tried again before every evaluation. Each has its own lock, so that a fill for one
// interpreter never holds up another's evaluations.
struct KnownCache {
    std::timed_mutex filling;
    std::optional<BytecodeCache> answer;
};

std::mutex knownMutex;
std::map<std::string, std::shared_ptr<KnownCache>> known;

std::shared_ptr<KnownCache> knownCacheFor(const std::string& key) {
    std::lock_guard guard(knownMutex);
    auto& slot = known[key];
    if (!slot)
        slot = std::make_shared<KnownCache>();
    return slot;
}

} // namespace

std::string bytecodeFingerprint(const std::string& python) {
    // The folders pip and apt change when a package is installed or removed. Not the harness's
    // sources: a checkout or version the last fill did not see costs only the compile of its own
    // modules (0.1 s), and several checkouts on one machine would otherwise fill the cache in turn.
    std::ostringstream text;
    text << "python " << python << '\n';
    for (const fs::path& lib : pythonLibFolders(python)) {
        text << lib.string() << ' ' << modificationTime(lib) << '\n';
        for (const char* packages : kPackageFolders)
            if (std::error_code ec; fs::is_directory(lib / packages, ec))
                text << packages << ' ' << modificationTime(lib / packages) << '\n';
    }
    return text.str();
}

BytecodeCachePolicy bytecodeCachePolicy() {
    const char* value = std::getenv("KWB_BYTECODE_CACHE_POLICY");
    const std::string policy = value ? value : "";
    if (policy == "always")
        return BytecodeCachePolicy::Always;
    if (policy == "off")
        return BytecodeCachePolicy::Off;
    return BytecodeCachePolicy::Auto;
}

BytecodeCache bytecodeCacheFor(const std::string& cacheDirectory, const std::string& pythonPath,
                               std::stop_token stop) {
    const BytecodeCachePolicy policy = bytecodeCachePolicy();
    if (pythonPath.empty() || cacheDirectory.empty() || policy == BytecodeCachePolicy::Off ||
        !sandboxIsolates())
        return {};
    // The path the sandbox can run: a venv's folder reached through a link (a checkout's .venv)
    // is bound at its real place.
    const std::string python = resolveFolderOf(pythonPath);
    const std::shared_ptr<KnownCache> slot = knownCacheFor(cacheDirectory + '\n' + python);
    while (!slot->filling.try_lock_for(std::chrono::milliseconds(100)))
        if (stop.stop_requested())
            return {{}, 0.0, "stopped while the bytecode cache was being filled"};
    std::unique_lock guard(slot->filling, std::adopt_lock);
    if (slot->answer) {
        BytecodeCache cache = *slot->answer;
        cache.fillSeconds = 0.0;
        return cache;
    }
    // Auto: where the installation has bytecode of its own, stages read that (no cache).
    BytecodeCache cache;
    if (policy == BytecodeCachePolicy::Always || !installationShipsBytecode(python))
        cache = lookUpOrFill(cacheDirectory, python, stop);
    if (!stop.stop_requested())
        slot->answer = cache;
    return cache;
}

void forgetBytecodeCache(const std::string& cacheDirectory) {
    {
        std::lock_guard guard(knownMutex);
        for (auto it = known.begin(); it != known.end();)
            it = it->first.rfind(cacheDirectory + '\n', 0) == 0 ? known.erase(it) : std::next(it);
    }
    std::error_code ec;
    const fs::path root = fs::path(cacheDirectory) / "bytecode";
    if (fs::exists(fs::symlink_status(root, ec)))
        fs::remove_all(root, ec);
}

} // namespace kwb
