#pragma once

#include <stop_token>
#include <string>

namespace kwb {

// Compiled bytecode for an interpreter's installation, kept by the engine for stages to read.
//
// Stages never write bytecode (a candidate must not leave any for a later stage), so on a host
// whose site-packages hold no .pyc (a container image installed with PYTHONDONTWRITEBYTECODE)
// every stage process compiled torch from source: 2.6 s for `import torch` on an H100 host, about
// 6 s with the modules a stage needs on first use. The engine fills a cache once per interpreter
// with kwb_harness.bytecode_fill, a process that never sees candidate code and may write only the
// cache; stages get it read-only (kwb_stage.py makes it sys.pycache_prefix for the installation's
// and the harness's folders, never for a folder the candidate writes).
struct BytecodeCache {
    std::string folder;       // what stages read (KWB_BYTECODE_CACHE); empty: none
    double fillSeconds = 0.0; // time this call spent filling or waiting for another fill
    std::string problem;      // why there is none, when a fill was tried and failed
};

// KWB_BYTECODE_CACHE_POLICY: "auto" (the default) uses a cache only where the installation ships
// no bytecode for torch (Python reads either the cache or the sources' __pycache__, never both, so
// elsewhere a cache would hide what the fill did not import); "always" uses one everywhere (the
// test suites, to run the path the GPU hosts take); "off" never.
enum class BytecodeCachePolicy { Auto, Always, Off };
BytecodeCachePolicy bytecodeCachePolicy();

// The cache for `python` below `cacheDirectory`/bytecode, filled first (into a fresh folder put in
// place of the old one) when this interpreter's installation changed since the last fill. A fill
// runs once per machine and interpreter: other processes wait for it (a lock), later calls in
// this process only look the answer up (a stop ends the wait). Only where stages are isolated
// (bubblewrap): without it a candidate could write the cache like any other file of the user.
BytecodeCache bytecodeCacheFor(const std::string& cacheDirectory, const std::string& python,
                               std::stop_token stop = {});

// Removes the caches below `cacheDirectory` and what this process knows of them. The evaluator
// calls it after stages ran without isolation: their candidate could write the cache like any
// other file of the user, and only a fill from nothing is trusted again.
void forgetBytecodeCache(const std::string& cacheDirectory);

// What decides whether a fill is current: the interpreter's path and the modification times of
// its installation's package folders. Exposed for tests.
std::string bytecodeFingerprint(const std::string& python);

} // namespace kwb
