#include "engine/service/service_endpoint.h"

#include "engine/system/content_hash.h"
#include "engine/system/resource_paths.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace kwb {
namespace {

bool decidesEvaluations(const std::string& name) {
    static const char* const kNames[] = {
        "PATH",          "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "HOME",      "XDG_CACHE_HOME",
        "XDG_DATA_HOME", "VIRTUAL_ENV",     "PYTHONPATH",           "CUDA_HOME", "TORCH_HOME"};
    if (name.rfind("KWB_", 0) == 0)
        return true;
    return std::find_if(std::begin(kNames), std::end(kNames),
                        [&](const char* n) { return name == n; }) != std::end(kNames);
}

std::string executableIdentity() {
    const std::string path = currentExecutablePath();
    struct stat st {};
    if (path.empty() || ::stat(path.c_str(), &st) != 0)
        return path;
    // A rebuilt kwb is another program: its daemon must not answer for the new one.
    return path + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec);
}

} // namespace

std::string serviceFingerprint(const std::string& python) {
    std::vector<std::string> entries;
    for (char** e = environ; e && *e; ++e) {
        const std::string entry = *e;
        const std::string name = entry.substr(0, entry.find('='));
        if (decidesEvaluations(name))
            entries.push_back(entry);
    }
    std::sort(entries.begin(), entries.end());
    std::string material = "kwb-serve/1\n" + executableIdentity() + "\npython=" + python + "\n";
    for (const std::string& entry : entries)
        material += entry + "\n";
    return sha256Hex(material).substr(0, 16);
}

ServiceEndpoint serviceEndpoint(const std::string& fingerprint) {
    const char* runtime = std::getenv("XDG_RUNTIME_DIR");
    ServiceEndpoint e;
    e.directory = runtime && *runtime && runtime[0] == '/'
                      ? std::string(runtime) + "/kernel-workbench"
                      : "/tmp/kernel-workbench-" + std::to_string(::getuid());
    const std::string stem = e.directory + "/serve-" + fingerprint;
    e.socketPath = stem + ".sock";
    e.lockPath = stem + ".lock";
    e.logPath = stem + ".log";
    return e;
}

std::string prepareEndpointDirectory(const ServiceEndpoint& endpoint) {
    const std::string& dir = endpoint.directory;
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        return "cannot create " + dir + ": " + std::strerror(errno);
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0)
        return "cannot inspect " + dir + ": " + std::strerror(errno);
    if (!S_ISDIR(st.st_mode))
        return dir + " is not a folder (a link or a file is in its place)";
    if (st.st_uid != ::getuid())
        return dir + " belongs to another user";
    if ((st.st_mode & 077) != 0)
        return dir + " is open to other users; it must be mode 0700 (chmod 700 " + dir + ")";
    return {};
}

} // namespace kwb
