#include "engine/tasks/parquet_task_rows.h"

#include "engine/system/content_hash.h"
#include "engine/system/pyarrow_script.h"

#include <filesystem>

namespace kwb {
namespace {

namespace fs = std::filesystem;

// After runPyarrowScript's preamble: exit 4 without a "code" column.
constexpr const char* kConvert = R"py(
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
    const PyarrowScriptOutcome run =
        runPyarrowScript(python, kConvert, {fs::absolute(parquetPath).string(), out.jsonlPath});
    if (run.ok) {
        out.ok = true;
        return out;
    }
    std::error_code ignored;
    fs::remove(out.jsonlPath + ".part", ignored);
    if (run.noPyarrow)
        out.error = "reading " + parquetPath + " needs pyarrow in the task Python (" + python +
                    "): pip install pyarrow, or convert the file to JSON lines";
    else if (run.exitCode == 4)
        out.error = parquetPath + " holds no task rows: " + run.said;
    else
        out.error = "the task Python could not read " + parquetPath + ": " + run.said;
    return out;
}

} // namespace kwb
