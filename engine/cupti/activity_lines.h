#pragma once

#include <cstdint>
#include <cupti_activity.h>
#include <string>

namespace kwb::cupti {

// The record format, "kwb-cupti/1": one compact JSON object per line, discriminated by "t".
// The engine's reader (engine/timeline/record_reader.cpp) is the other half of this contract.
//   header   {"t":"header","format":"kwb-cupti/1","pid":..,"cupti_api":..,"cupti_headers":..}
//   kernel   dev ctx stream start end grid block regs ssmem dsmem lmem corr name
//   memcpy   dev ctx stream start end bytes kind corr
//   memset   dev ctx stream start end bytes corr
//   sync     ctx stream start end type corr      (stream -1: a context-wide synchronisation)
//   marker   id flag ("start"|"end"|"instant") ts tid name domain
//   device   id name cc_major cc_minor
//   context  ctx dev
//   dropped  cupti | unknown | write_failures   (deltas since the last dropped record)
//   error    msg
//   end      records write_failures
inline constexpr const char* kRecordFormat = "kwb-cupti/1";

// The line for one CUPTI activity record, or an empty string for a kind this format does not
// carry (the caller counts those as unknown).
std::string formatActivity(const CUpti_Activity* record);

std::string formatHeader(std::uint64_t pid, std::uint32_t cuptiApiVersion);
std::string formatDropped(std::uint64_t cuptiDropped, std::uint64_t unknownKinds,
                          std::uint64_t writeFailures);
std::string formatError(const std::string& message);
std::string formatEnd(std::uint64_t records, std::uint64_t writeFailures);

const char* copyKindName(std::uint8_t copyKind);
const char* synchronizationTypeName(std::uint32_t type);

} // namespace kwb::cupti
