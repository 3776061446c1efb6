#include "engine/system/utc_timestamp.h"

#include <chrono>
#include <ctime>

namespace kwb {

std::string utcTimestamp() {
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    gmtime_r(&now, &utc); // not std::gmtime: evaluations run on several threads at once
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return buffer;
}

} // namespace kwb
