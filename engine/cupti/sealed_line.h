#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kwb::cupti {

// Kernel records that pass through the process they describe: the judge's kernel census reads
// the candidate's kernels from the injection library in the candidate's own process, where
// candidate code could write lines of its own into the same pipe. Each line is therefore sealed
// with a key that only the judge and the library hold (it reaches the library through a pipe it
// reads and closes at CUDA initialisation, before any candidate code is imported), and numbered,
// so a line added, changed, dropped or replayed shows.
//
// A sealed line: "<seq> <hex HMAC-SHA256(key, "<seq> " + record)> <record>\n", where the record
// is one kwb-cupti/1 line without its newline. The harness's reader
// (kwb_harness/integrity/kernel_records.py) is the other half of this contract.
inline constexpr std::size_t kSealKeyBytes = 32;

// `record` may end in '\n' (dropped). An empty key yields an empty string.
std::string sealLine(std::string_view key, std::uint64_t sequence, std::string_view record);

// The line the library writes after each flush: every record of work that completed before
// `monotonicNs` (CLOCK_MONOTONIC, the clock the records' timestamps use) has been written, and
// `launches` kernel launches had been made by then. `cuptiNs` is CUPTI's clock at that moment.
std::string formatFlushed(std::uint64_t monotonicNs, std::uint64_t cuptiNs, std::uint64_t launches);

} // namespace kwb::cupti
