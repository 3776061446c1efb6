#pragma once

#include <string>

namespace kwb {

// Writes the JSON lines at `jsonlPath` as a parquet file at `parquetPath` with the task Python's
// pyarrow (veRL reads its datasets as parquet; kwb has no parquet writer of its own, and pyarrow
// lives where torch does). Each top-level key becomes a column with its type inferred from all
// rows; a column whose values cannot share one Arrow type (a field that is text in one row and
// an object in another) is stored as JSON text and named in the file's metadata under
// "kwb.json_columns". Returns an empty string on success, else why not (no pyarrow, a line that
// is not a JSON object, ...).
std::string writeParquetFromJsonLines(const std::string& jsonlPath, const std::string& parquetPath,
                                      const std::string& python);

} // namespace kwb
