#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kwb {

// Every evaluation of a workspace gets a scratch folder of its own inside that workspace's runs
// folder (<cache>/runs/ws-<hash>/<run id>), and under a warm worker the runs folder is the stage
// processes' HOME: candidate code may write anything there. What it leaves must not outlive the
// evaluations that could use it. Locks (flock, dropped by the kernel however a process ends) say
// what is in use: an evaluation holds its scratch folder exclusively and its workspace's runs
// folder shared; a claim that finds the runs folder free holds it exclusively for a moment and
// tidies it.

// <cache>/runs/ws-<hash>: the runs folder of one workspace and candidate path. The runs of one
// workspace share it (a warm worker's server may write the parent of every scratch folder it
// serves), and a candidate in it must not reach another workspace's requests and results.
std::filesystem::path workspaceRunsFolder(const std::filesystem::path& cacheDirectory,
                                          const std::string& workspace,
                                          const std::string& candidatePath);

// A new scratch folder's name: <clock>-<random>. isScratchFolderName recognises these (and a
// claim's "-N" when the name was taken): a tidy beside other evaluations removes nothing else.
std::string newScratchFolderName();
bool isScratchFolderName(std::string_view name);

// What a tidy or a sweep removed.
struct ScratchTidy {
    bool alone = false;               // no other evaluation of the workspace held its runs folder
    std::vector<std::string> removed; // names, relative to the folder tidied
    std::uint64_t bytesFreed = 0;
    bool cachesCleared = false; // the kept caches were over their budget and were emptied
    bool complete = true;       // false: something could not be removed (it stays for next time)
};

// The entries of a workspace's runs folder kept from one evaluation to the next: the builds of
// a candidate's load_inline calls, the temporary folder of warm-worker stages (torch.compile's
// precompiled headers), and the caches a tool keeps under HOME (~/.cache, ~/.triton, ~/.nv).
bool isKeptScratchCache(std::string_view name);

// The kept caches together may hold at most this much before a tidy empties them.
struct ScratchCacheBudget {
    std::uint64_t bytes = 1ULL << 30;
    std::uint64_t entries = 100000; // empty files take no blocks, and every tidy walks them
};

// One evaluation's scratch folder, held while the object lives and removed when it goes.
class ScratchFolder {
public:
    // Creates <workspaceRuns>/<runId> and takes its locks; nullopt with `error` saying why.
    // When no other evaluation holds the runs folder, it is tidied first: every entry but the
    // kept caches is removed, and the kept caches are emptied when over `budget`. Otherwise only
    // the scratch folders of evaluations that ended (or died) go: the others' HOME is in use.
    // What was removed is reported in `tidy`.
    static std::optional<ScratchFolder> claim(const std::filesystem::path& workspaceRuns,
                                              const std::string& runId,
                                              const ScratchCacheBudget& budget, ScratchTidy* tidy,
                                              std::string* error);

    ScratchFolder(ScratchFolder&& other) noexcept;
    ScratchFolder& operator=(ScratchFolder&& other) noexcept;
    ScratchFolder(const ScratchFolder&) = delete;
    ScratchFolder& operator=(const ScratchFolder&) = delete;
    ~ScratchFolder();

    const std::string& path() const { return path_; }

private:
    ScratchFolder() = default;
    void release();

    int parentFd_ = -1; // the workspace's runs folder, locked shared
    int folderFd_ = -1; // this evaluation's folder, locked exclusively
    std::string name_;
    std::string path_;
};

// Removes from <cache>/runs the runs folders of workspaces that none has used for `idleFor` and
// no evaluation holds (a rollout leaves one per episode workspace, a test suite one per
// temporary workspace).
ScratchTidy removeIdleWorkspaceRuns(const std::filesystem::path& runsRoot,
                                    std::chrono::seconds idleFor);

// The budget and idle time in effect: KWB_RUNS_CACHE_MIB (default 1024) and KWB_RUNS_IDLE_HOURS
// (default 72), read from the environment.
ScratchCacheBudget keptScratchCacheBudget();
std::chrono::seconds workspaceRunsIdleTime();

} // namespace kwb
