#include "engine/system/pyarrow_script.h"

#include "engine/process/process_runner.h"

namespace kwb {
namespace {

constexpr const char* kPreamble = R"py(
import json, os, sys
try:
    import pyarrow as pa
    import pyarrow.parquet as pq
except ImportError as error:
    print(f"no pyarrow: {error}", file=sys.stderr)
    sys.exit(3)
)py";

} // namespace

PyarrowScriptOutcome runPyarrowScript(const std::string& python, const std::string& body,
                                      const std::vector<std::string>& arguments) {
    ProcessSpec spec;
    spec.argv = {python, "-I", "-c", std::string(kPreamble) + body};
    spec.argv.insert(spec.argv.end(), arguments.begin(), arguments.end());
    spec.timeout = std::chrono::minutes(10);
    const ProcessResult result = runProcess(spec);
    PyarrowScriptOutcome out;
    out.ok = result.succeeded();
    out.exitCode = result.exitedNormally ? result.exitCode : -1;
    out.noPyarrow = out.exitCode == 3;
    out.said = result.err.text.empty() ? result.statusText() : result.err.text;
    while (!out.said.empty() && out.said.back() == '\n')
        out.said.pop_back();
    return out;
}

} // namespace kwb
