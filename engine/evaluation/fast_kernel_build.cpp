#include "engine/evaluation/fast_kernel_build.h"

#include "engine/diagnostics/include_guard.h"
#include "engine/diagnostics/nvrtc_compiler.h"
#include "engine/evaluation/ptx_signature.h"
#include "engine/system/bounded_json.h"
#include "engine/system/content_hash.h"
#include "engine/workspace/contained_files.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kwb {
namespace {

// Kernel sources and headers are the agent's files, and the build folder is in its workspace:
// both are read and written through real folders only (contained_files.h), so a planted link
// neither brings a host file into NVRTC's diagnostics nor leads a module write elsewhere.
constexpr std::size_t kMaxSourceBytes = 16u << 20;
constexpr std::size_t kMaxModuleBytes = 256u << 20;

// A folder of files named relative to a root kwb trusts (the workspace, or the folder's parent
// when it lies elsewhere).
struct AnchoredFolder {
    fs::path root;
    std::string relative;
    std::string file(const std::string& name) const { return relative + "/" + name; }
};

AnchoredFolder anchoredIn(const fs::path& workspace, const fs::path& folder) {
    AnchoredPath anchored = anchoredPath(workspace, folder);
    std::error_code ec;
    fs::create_directories(anchored.root, ec); // the workspace, or kwb's own folders elsewhere
    return {std::move(anchored.root), std::move(anchored.relative)};
}

std::string readFile(const AnchoredFolder& folder, const std::string& name,
                     std::size_t maxBytes = kMaxSourceBytes) {
    return readFileInside(folder.root, folder.file(name), maxBytes).value_or("");
}

bool writeFile(const AnchoredFolder& folder, const std::string& name, const std::string& bytes) {
    return writeFileInside(folder.root, folder.file(name), bytes);
}

std::vector<std::string> filesWithExtensions(const AnchoredFolder& folder,
                                             const std::set<std::string>& extensions) {
    std::vector<std::string> found;
    for (const std::string& name : regularFilesInside(folder.root, folder.relative))
        if (extensions.count(fs::path(name).extension().string()))
            found.push_back(name);
    std::sort(found.begin(), found.end());
    return found;
}

// Headers can change what a .cu compiles to, so they are part of every file's cache key.
std::string headersFingerprint(const AnchoredFolder& kernels) {
    std::string all;
    for (const auto& header : filesWithExtensions(kernels, {".cuh", ".h", ".hpp", ".inl"}))
        all += header + "\n" + sha256Hex(readFile(kernels, header)) + "\n";
    return sha256Hex(all);
}

json manifestFor(const std::string& relativeSource, const std::string& arch,
                 const std::string& stem, const std::string& ptx,
                 std::vector<std::string>& kernelList) {
    json kernels = json::array();
    std::set<std::string> names;
    for (const PtxEntry& entry : parsePtxEntries(ptx)) {
        // C++ kernels are reached by their plain name; a second overload or template instance
        // with the same name keeps its mangled symbol so that neither is ambiguous.
        std::string name = kernelBaseName(entry.symbol);
        if (!names.insert(name).second)
            name = entry.symbol;
        json params = json::array();
        for (const PtxParameter& p : entry.parameters) {
            json param = {{"type", p.type}};
            if (p.type == "b8" && p.sizeBytes > 1)
                param["size"] = p.sizeBytes;
            params.push_back(param);
        }
        kernels.push_back({{"name", name},
                           {"symbol", entry.symbol},
                           {"params", params},
                           {"max_threads_per_block", entry.maxThreadsPerBlock}});
        kernelList.push_back(fs::path(relativeSource).filename().string() + ": " + name);
    }
    return {{"version", 1},
            {"source", relativeSource},
            {"arch", arch},
            {"cubin", stem + ".cubin"},
            {"kernels", kernels}};
}

// NVRTC names the file as given; diagnostics should name it the way the user sees it.
void relabel(std::vector<Diagnostic>& diagnostics, const std::string& compiledAs,
             const std::string& relative) {
    for (Diagnostic& d : diagnostics)
        if (d.file == compiledAs || fs::path(d.file).filename() == fs::path(compiledAs).filename())
            d.file = relative;
}

} // namespace

bool usesFastKernels(const std::string& candidatePath) {
    static const std::regex importPattern(
        R"((^|\n)\s*(import\s+kwb_kernels\b|from\s+kwb_kernels\b))");
    const fs::path candidate(candidatePath);
    const std::string text =
        readFileInside(candidate.parent_path(), candidate.filename().string(), kMaxSourceBytes)
            .value_or("");
    return std::regex_search(text, importPattern);
}

FastKernelBuildResult buildFastKernels(const FastKernelBuildRequest& request) {
    const auto started = std::chrono::steady_clock::now();
    FastKernelBuildResult result;
    const fs::path workspace = fs::absolute(request.workspace).lexically_normal();
    const AnchoredFolder kernels{workspace, "kernels"};
    const fs::path output = request.outputDirectory;
    const AnchoredFolder outputFolder = anchoredIn(workspace, output);
    std::string problem;
    if (!makeFolderInside(outputFolder.root, outputFolder.relative, &problem)) {
        result.summary =
            "cannot create " + output.string() + (problem.empty() ? std::string() : ": " + problem);
        result.diagnostics.push_back({"", 0, 0, Severity::Error, result.summary});
        return result;
    }
    const std::vector<std::string> sources = filesWithExtensions(kernels, {".cu"});
    if (sources.empty()) {
        result.summary = "no kernels/*.cu to compile";
        result.diagnostics.push_back({"kernels", 0, 0, Severity::Error,
                                      "the fast path needs at least one kernels/*.cu file"});
        return result;
    }
    const std::string headers = headersFingerprint(kernels);
    const std::vector<std::string> options = {"--include-path=" + (workspace / "kernels").string(),
                                              "-DKWB_FAST_PATH=1"};
    std::set<std::string> stems;
    std::ostringstream log;
    bool allOk = true;
    for (const std::string& source : sources) {
        const std::string stem = fs::path(source).stem().string();
        const std::string relative = "kernels/" + source;
        stems.insert(stem);
        const std::string text = readFile(kernels, source);
        // NVRTC reads the includes itself, in kwb's process and with its rights.
        if (const auto problem =
                diagnostics::unsafeInclude(text, workspace / "kernels", workspace, relative)) {
            result.diagnostics.push_back(
                {problem->file, problem->line, 1, Severity::Error, problem->message});
            log << relative << ": not compiled: " << problem->message << "\n";
            allOk = false;
            continue;
        }
        std::string key =
            relative + "\n" + text + "\n" + headers + "\n" + request.arch + "\n" + nvrtcVersion();
        for (const auto& option : options)
            key += "\n" + option;
        const std::string hash = sha256Hex(key).substr(0, 32);
        const bool cacheUsed = !request.cacheDirectory.empty();
        const AnchoredFolder cached =
            anchoredIn(workspace, fs::path(request.cacheDirectory) / hash);

        std::string cubin, ptx, manifest;
        if (cacheUsed && isRegularFileInside(cached.root, cached.file("ok"))) {
            cubin = readFile(cached, "module.cubin", kMaxModuleBytes);
            ptx = readFile(cached, "module.ptx", kMaxModuleBytes);
            manifest = readFile(cached, "manifest.json", kMaxModuleBytes);
            ++result.filesCached;
            log << relative << ": cached (" << hash.substr(0, 12) << ")\n";
        } else {
            NvrtcRequest nvrtc;
            nvrtc.source = text;
            nvrtc.fileName = relative;
            nvrtc.arch = request.arch;
            nvrtc.extraOptions = options;
            const auto compileStarted = std::chrono::steady_clock::now();
            NvrtcResult compiled = compileWithNvrtc(nvrtc);
            // The compiler's own share of the stage, for the instant loop's budget.
            log << relative << ": NVRTC "
                << std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now() - compileStarted)
                       .count()
                << " ms\n";
            relabel(compiled.diagnostics, nvrtc.fileName, relative);
            for (Diagnostic& d : compiled.diagnostics)
                result.diagnostics.push_back(d);
            if (!compiled.log.empty())
                log << relative << ":\n" << compiled.log << "\n";
            if (!compiled.success || compiled.cubin.empty()) {
                allOk = false;
                if (compiled.success)
                    result.diagnostics.push_back({relative, 0, 0, Severity::Error,
                                                  "NVRTC produced no cubin for " + request.arch});
                continue;
            }
            ++result.filesCompiled;
            cubin = compiled.cubin;
            ptx = compiled.ptx;
            std::vector<std::string> unused;
            manifest = manifestFor(relative, request.arch, stem, ptx, unused).dump(1);
            if (cacheUsed && writeFile(cached, "module.cubin", cubin) &&
                writeFile(cached, "module.ptx", ptx) &&
                writeFile(cached, "manifest.json", manifest))
                writeFile(cached, "ok", hash);
        }
        std::vector<std::string> kernelList;
        json parsed = parseBoundedJson(manifest);
        if (parsed.is_discarded() || !parsed.contains("kernels")) {
            allOk = false;
            result.diagnostics.push_back({relative, 0, 0, Severity::Error,
                                          "internal: unreadable kernel manifest; clear the cache"});
            continue;
        }
        for (const auto& k : parsed["kernels"])
            result.kernels.push_back(source + ": " + k.value("name", std::string()));
        if (parsed["kernels"].empty())
            result.diagnostics.push_back(
                {relative, 0, 0, Severity::Warning, "defines no __global__ kernel"});
        if (!writeFile(outputFolder, stem + ".cubin", cubin) ||
            !writeFile(outputFolder, stem + ".ptx", ptx) ||
            !writeFile(outputFolder, stem + ".json", manifest)) {
            allOk = false;
            result.diagnostics.push_back(
                {relative, 0, 0, Severity::Error,
                 "cannot write the compiled module to " + output.string()});
        }
    }
    // Modules of deleted sources would otherwise stay loadable.
    for (const std::string& name : filesWithExtensions(outputFolder, {".cubin", ".ptx", ".json"}))
        if (!stems.count(fs::path(name).stem().string()))
            removeFileInside(outputFolder.root, outputFolder.file(name));
    result.ok = allOk;
    result.log = log.str();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    char timing[64];
    std::snprintf(timing, sizeof timing, "%.2f s", seconds);
    result.summary = "NVRTC " + request.arch + ": " + std::to_string(sources.size()) + " file" +
                     (sources.size() == 1 ? "" : "s") + " (" + std::to_string(result.filesCached) +
                     " cached), " + timing;
    if (!allOk) {
        for (const Diagnostic& d : result.diagnostics)
            if (d.severity == Severity::Error) {
                result.summary = formatDiagnostic(d);
                break;
            }
    }
    return result;
}

} // namespace kwb
