#pragma once

#include <string>

namespace kwb {

struct ParquetConversion {
    bool ok = false;
    std::string jsonlPath; // the rows as JSON lines, which loadTaskSet reads
    std::string error;     // why not: no pyarrow in the task Python, no "code" column, ...
};

// A parquet file of task rows (CUDA-Agent-Ops-6K ships as parquet) as JSON lines, converted by
// the task Python's pyarrow: kwb has no parquet reader of its own, and pyarrow lives where
// torch does. The result goes to `cacheFolder/<SHA-256 of the parquet file>.jsonl` and is reused
// while the file is unchanged. Only the columns a task row needs are kept (code, ops,
// data_source, level).
ParquetConversion convertParquetTaskRows(const std::string& parquetPath, const std::string& python,
                                         const std::string& cacheFolder);

} // namespace kwb
