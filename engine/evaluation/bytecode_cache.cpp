#include "engine/evaluation/bytecode_cache.h"

#include "engine/process/sandbox.h"
#include "engine/system/content_hash.h"
#include "engine/system/exclusive_file_lock.h"
#include "engine/system/python_environment.h"
#include "engine/system/resource_paths.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

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

// The folders pip and apt change when a package is installed or removed: lib/python3.X itself
// and its site-packages / dist-packages, under each folder of the installation.
void describeInstallation(std::ostringstream& text, const fs::path& prefix) {
    std::error_code ec;
    for (const char* lib : {"lib", "local/lib"}) {
        for (fs::directory_iterator it(prefix / lib, ec), end; !ec && it != end; it.increment(ec)) {
            const std::string name = it->path().filename().string();
            if (name.rfind("python3", 0) != 0 || !it->is_directory(ec))
                continue;
            text << it->path().string() << ' ' << modificationTime(it->path()) << '\n';
            for (const char* packages : {"site-packages", "dist-packages"})
                if (fs::is_directory(it->path() / packages, ec))
                    text << packages << ' ' << modificationTime(it->path() / packages) << '\n';
        }
        ec.clear();
    }
}

std::string readText(const fs::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string tail(const std::string& text, std::size_t chars) {
    return text.size() <= chars ? text : "..." + text.substr(text.size() - chars);
}

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

// Runs kwb_harness.bytecode_fill in the sandbox, with the cache as its only writable folder
// besides a HOME of its own. Empty when it worked, else why not.
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
           (process.err.text.empty() ? "" : ": " + tail(process.err.text, 400));
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
    auto lock = waitForLock(root / (key + ".lock"), stop, cache.problem);
    if (lock) {
        const std::string fingerprint = bytecodeFingerprint(python);
        const fs::path marker = folder / kMarkerName;
        if (readText(marker) == fingerprint) {
            cache.folder = folder.string();
        } else if (cache.problem = fill(folder, python, stop); cache.problem.empty()) {
            std::ofstream(marker) << fingerprint;
            cache.folder = folder.string();
        }
    }
    cache.fillSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return cache;
}

} // namespace

std::string bytecodeFingerprint(const std::string& python) {
    std::ostringstream text;
    text << "python " << python << '\n';
    for (const auto& installed : pythonInstallFolders(python))
        describeInstallation(text, installed);
    // Not the harness's sources: a checkout or version the last fill did not see costs only the
    // compile of its own modules (0.1 s), and several checkouts on one machine would otherwise
    // fill the cache in turn.
    return text.str();
}

BytecodeCache bytecodeCacheFor(const std::string& cacheDirectory, const std::string& pythonPath,
                               std::stop_token stop) {
    if (pythonPath.empty() || cacheDirectory.empty() || !sandboxIsolates())
        return {};
    // The path the sandbox can run: a venv's folder reached through a link (a checkout's .venv)
    // is bound at its real place.
    const std::string python = resolveFolderOf(pythonPath);
    // One answer per process and interpreter: a fill is looked at once, and a failed one is not
    // tried again before every evaluation.
    static std::mutex mutex;
    static std::map<std::string, BytecodeCache> known;
    std::lock_guard guard(mutex);
    const std::string key = cacheDirectory + '\n' + python;
    if (const auto found = known.find(key); found != known.end()) {
        BytecodeCache cache = found->second;
        cache.fillSeconds = 0.0;
        return cache;
    }
    BytecodeCache cache = lookUpOrFill(cacheDirectory, python, stop);
    if (!stop.stop_requested())
        known[key] = cache;
    return cache;
}

} // namespace kwb
