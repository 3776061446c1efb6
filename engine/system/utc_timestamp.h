#pragma once

#include <string>

namespace kwb {

// The current time as ISO 8601 UTC ("2026-11-30T06:05:07Z"), as every on-disk record writes it.
std::string utcTimestamp();

} // namespace kwb
