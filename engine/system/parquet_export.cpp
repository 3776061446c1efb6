#include "engine/system/parquet_export.h"

#include "engine/process/process_runner.h"

#include <filesystem>

namespace kwb {
namespace {
namespace fs = std::filesystem;

// Run by the task Python: exit 3 without pyarrow, 4 for a line that is not a JSON object.
constexpr const char* kWrite = R"py(
import json, os, sys
try:
    import pyarrow as pa
    import pyarrow.parquet as pq
except ImportError as error:
    print(f"no pyarrow: {error}", file=sys.stderr)
    sys.exit(3)
source, target = sys.argv[1], sys.argv[2]
rows = []
with open(source, encoding="utf-8") as lines:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if not isinstance(row, dict):
            print(f"line {number} is not a JSON object", file=sys.stderr)
            sys.exit(4)
        rows.append(row)
names = []
for row in rows:
    names.extend(k for k in row if k not in names)
columns, as_json = [], []
for name in names:
    values = [row.get(name) for row in rows]
    try:
        columns.append(pa.array(values))
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
        columns.append(pa.array([None if v is None else json.dumps(v, ensure_ascii=False) for v in values],
                                type=pa.string()))
        as_json.append(name)
table = pa.Table.from_arrays(columns, names=names) if names else pa.table({})
table = table.replace_schema_metadata({"kwb.json_columns": json.dumps(as_json)})
partial = target + ".part"
pq.write_table(table, partial)
os.replace(partial, target)
)py";
} // namespace

std::string writeParquetFromJsonLines(const std::string& jsonlPath, const std::string& parquetPath,
                                      const std::string& python) {
    ProcessSpec spec;
    spec.argv = {python,
                 "-I",
                 "-c",
                 kWrite,
                 fs::absolute(jsonlPath).string(),
                 fs::absolute(parquetPath).string()};
    spec.timeout = std::chrono::minutes(10);
    const ProcessResult result = runProcess(spec);
    if (result.succeeded())
        return {};
    std::string said = result.err.text.empty() ? result.statusText() : result.err.text;
    while (!said.empty() && said.back() == '\n')
        said.pop_back();
    if (result.exitedNormally && result.exitCode == 3)
        return "writing parquet needs pyarrow in the task Python (" + python +
               "): pip install pyarrow, or export JSON lines";
    return "the task Python could not write " + parquetPath + ": " + said;
}

} // namespace kwb
