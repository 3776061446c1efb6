#include "engine/tasks/parquet_task_rows.h"

#include "engine/process/process_runner.h"
#include "engine/system/content_hash.h"

#include <filesystem>

namespace kwb {
namespace {

namespace fs = std::filesystem;

// Run by the task Python: exit 3 without pyarrow, 4 without a "code" column.
constexpr const char* kConvert = R"py(
import json, os, sys
try:
    import pyarrow.parquet as pq
except ImportError as error:
    print(f"no pyarrow: {error}", file=sys.stderr)
    sys.exit(3)
source, target = sys.argv[1], sys.argv[2]
table = pq.read_table(source)
if "code" not in table.column_names:
    print("no \"code\" column; the columns are: " + ", ".join(table.column_names), file=sys.stderr)
    sys.exit(4)
keep = [c for c in ("code", "ops", "data_source", "level") if c in table.column_names]
partial = target + ".part"
with open(partial, "w", encoding="utf-8") as out:
    for batch in table.select(keep).to_batches(max_chunksize=1024):
        for row in batch.to_pylist():
            out.write(json.dumps(row, default=str, ensure_ascii=False) + "\n")
os.replace(partial, target)
)py";

} // namespace

ParquetConversion convertParquetTaskRows(const std::string& parquetPath, const std::string& python,
                                         const std::string& cacheFolder) {
    ParquetConversion out;
    std::error_code ec;
    if (!fs::is_regular_file(parquetPath, ec)) {
        out.error = parquetPath + " is not a file";
        return out;
    }
    const std::string hash = sha256OfFile(parquetPath);
    if (hash.empty()) {
        out.error = "cannot read " + parquetPath;
        return out;
    }
    fs::create_directories(cacheFolder, ec);
    if (ec) {
        out.error = "cannot create " + cacheFolder + ": " + ec.message();
        return out;
    }
    out.jsonlPath = (fs::path(cacheFolder) / (hash + ".jsonl")).string();
    if (fs::is_regular_file(out.jsonlPath, ec)) {
        out.ok = true;
        return out;
    }
    ProcessSpec spec;
    spec.argv = {python, "-I", "-c", kConvert, fs::absolute(parquetPath).string(), out.jsonlPath};
    spec.timeout = std::chrono::minutes(10);
    const ProcessResult result = runProcess(spec);
    if (result.succeeded()) {
        out.ok = true;
        return out;
    }
    const std::string said = result.err.text.empty() ? result.statusText() : result.err.text;
    if (result.exitedNormally && result.exitCode == 3)
        out.error = "reading " + parquetPath + " needs pyarrow in the task Python (" + python +
                    "): pip install pyarrow, or convert the file to JSON lines";
    else if (result.exitedNormally && result.exitCode == 4)
        out.error = parquetPath + " holds no task rows: " + said;
    else
        out.error = "the task Python could not read " + parquetPath + ": " + said;
    while (!out.error.empty() && out.error.back() == '\n')
        out.error.pop_back();
    return out;
}

} // namespace kwb
