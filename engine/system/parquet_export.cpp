#include "engine/system/parquet_export.h"

#include "engine/system/pyarrow_script.h"

#include <filesystem>

namespace kwb {
namespace {
namespace fs = std::filesystem;

// After runPyarrowScript's preamble: exit 4 for a line that is not a JSON object.
constexpr const char* kWrite = R"py(
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
def writable(kind):
    # Parquet has no struct without fields: an object that is empty in every row ({}) has no
    # Arrow column type Parquet can hold, however deep it sits.
    if pa.types.is_struct(kind):
        return kind.num_fields > 0 and all(writable(kind.field(i).type) for i in range(kind.num_fields))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return writable(kind.value_type)
    return True
names = []
for row in rows:
    names.extend(k for k in row if k not in names)
columns, as_json = [], []
for name in names:
    values = [row.get(name) for row in rows]
    try:
        column = pa.array(values)
        if not writable(column.type):
            raise TypeError(f"column {name} holds only empty objects")
        columns.append(column)
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
    const std::string target = fs::absolute(parquetPath).string();
    const PyarrowScriptOutcome run =
        runPyarrowScript(python, kWrite, {fs::absolute(jsonlPath).string(), target});
    if (run.ok)
        return {};
    // A write cut short leaves its partial file; nothing reads it.
    std::error_code ignored;
    fs::remove(target + ".part", ignored);
    if (run.noPyarrow)
        return "writing parquet needs pyarrow in the task Python (" + python +
               "): pip install pyarrow, or export JSON lines";
    return "the task Python could not write " + parquetPath + ": " + run.said;
}

} // namespace kwb
