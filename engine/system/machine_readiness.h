#pragma once

#include "engine/system/system_report.h"

#include <string>
#include <vector>

namespace kwb {

// One thing the workbench uses from the machine, for the welcome page and `kwb doctor`: whether
// it is here, what was found, what is off without it, and how to get it.
struct ReadinessItem {
    std::string name; // "NVIDIA GPU and driver"
    bool present = false;
    std::string found;      // what was found, or why it was not
    std::string withoutIt;  // what the workbench cannot do without it
    std::string howToGetIt; // the install step
};

// The GPU and driver, NVRTC, a Python with torch, torch.compile in it, ninja for extension
// builds, and a usable bubblewrap, in that order, as the report found them.
std::vector<ReadinessItem> machineReadiness(const SystemReport& report);

} // namespace kwb
