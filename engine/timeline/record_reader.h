#pragma once

#include "engine/timeline/flat_json_object.h"
#include "engine/timeline/timeline_record.h"

#include <optional>
#include <string_view>

namespace kwb::timeline {

// Parses one line of a record file. A line that is not a JSON object with a known shape gives
// nullopt (the caller counts it as malformed); it never throws. An empty line gives nullopt too.
std::optional<TimelineRecord> parseRecordLine(std::string_view line);
// The same with a chosen JSON parser (tests compare the two).
std::optional<TimelineRecord> parseRecordLine(std::string_view line, FlatJsonParser parser);

} // namespace kwb::timeline
