#pragma once

#include <string>
#include <vector>

namespace kwb {

// What a short pyarrow script run by the task Python came to.
struct PyarrowScriptOutcome {
    bool ok = false;
    bool noPyarrow = false; // the task Python cannot import pyarrow
    int exitCode = -1;      // the script's own exit code (-1: it did not exit normally)
    std::string said;       // its stderr (or how it ended), without trailing newlines
};

// Runs `body` in the task Python (isolated mode, `sys.argv[1:]` = `arguments`) after a preamble
// that imports json, os, sys, pyarrow as pa and pyarrow.parquet as pq, and exits 3 when pyarrow
// is missing. kwb reads and writes parquet through it: there is no parquet library in Debian's
// C++ stack that kwb already depends on, and pyarrow lives where torch does. Ten minutes at most.
PyarrowScriptOutcome runPyarrowScript(const std::string& python, const std::string& body,
                                      const std::vector<std::string>& arguments);

} // namespace kwb
