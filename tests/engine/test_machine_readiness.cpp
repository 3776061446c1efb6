// The welcome page's list: what the machine has, what each missing piece turns off, and how to
// get it, from a system report.
#include "engine/system/machine_readiness.h"

#include <gtest/gtest.h>

using namespace kwb;

namespace {

SystemReport bareMachine() {
    SystemReport report;
    report.gpus.status = "No GPU: NVIDIA driver not found";
    report.cudaToolkitVersion = "13.0.88";
    report.nvrtcVersion = "not found";
    report.python.error = "python3: not found";
    return report;
}

const ReadinessItem& item(const std::vector<ReadinessItem>& items, const std::string& name) {
    for (const ReadinessItem& i : items)
        if (i.name.find(name) != std::string::npos)
            return i;
    throw std::runtime_error("no item " + name);
}

} // namespace

TEST(MachineReadiness, aBareMachineHasNothingAndEachItemSaysWhatItTurnsOffAndHowToGetIt) {
    const auto items = machineReadiness(bareMachine());
    ASSERT_EQ(items.size(), 6u);
    for (const ReadinessItem& i : items) {
        EXPECT_FALSE(i.present) << i.name;
        EXPECT_FALSE(i.withoutIt.empty()) << i.name;
        EXPECT_FALSE(i.howToGetIt.empty()) << i.name;
        EXPECT_FALSE(i.found.empty()) << i.name;
    }
    EXPECT_NE(item(items, "GPU").found.find("No GPU"), std::string::npos);
    EXPECT_NE(item(items, "GPU").withoutIt.find("CPU"), std::string::npos);
    EXPECT_NE(item(items, "NVRTC").howToGetIt.find("KWB_NVRTC_LIBRARY"), std::string::npos);
    EXPECT_NE(item(items, "Python").howToGetIt.find("tools/setup.sh"), std::string::npos);
    EXPECT_NE(item(items, "ninja").withoutIt.find("CUDA Agent's layout"), std::string::npos);
    EXPECT_NE(item(items, "ninja").howToGetIt.find("pip install ninja"), std::string::npos);
    EXPECT_NE(item(items, "bubblewrap").found.find("not found"), std::string::npos);
    EXPECT_NE(item(items, "bubblewrap").withoutIt.find("sandbox_weak"), std::string::npos);
}

TEST(MachineReadiness, whatIsThereIsNamedWithWhereItWasFound) {
    SystemReport report = bareMachine();
    report.nvrtcLoaded = true;
    report.nvrtcVersion = "13.0";
    report.python.runs = true;
    report.python.hasTorch = true;
    report.python.hasTorchCompile = true;
    report.python.torchVersion = "2.11.0";
    report.python.pythonVersion = "3.11.2";
    report.python.path = "/venv/bin/python3";
    report.bubblewrap = "/usr/bin/bwrap";
    report.bubblewrapWorks = true;
    report.ninja = "/venv/bin/ninja";
    report.nvrtcLibrary = "/usr/local/cuda/lib64/libnvrtc.so.13";
    const auto items = machineReadiness(report);
    EXPECT_TRUE(item(items, "ninja").present);
    EXPECT_NE(item(items, "ninja").found.find("/venv/bin/ninja"), std::string::npos);
    EXPECT_NE(item(items, "NVRTC").found.find("libnvrtc.so.13"), std::string::npos);
    EXPECT_FALSE(item(items, "GPU").present);
    EXPECT_TRUE(item(items, "NVRTC").present);
    EXPECT_NE(item(items, "NVRTC").found.find("NVRTC 13.0"), std::string::npos);
    EXPECT_TRUE(item(items, "Python").present);
    EXPECT_NE(item(items, "Python").found.find("/venv/bin/python3"), std::string::npos);
    EXPECT_TRUE(item(items, "torch.compile").present);
    EXPECT_TRUE(item(items, "bubblewrap").present);
    EXPECT_NE(item(items, "bubblewrap").found.find("/usr/bin/bwrap"), std::string::npos);

    // A bubblewrap that cannot make namespaces is not a sandbox.
    report.bubblewrapWorks = false;
    const auto blocked = machineReadiness(report);
    EXPECT_FALSE(item(blocked, "bubblewrap").present);
    EXPECT_NE(item(blocked, "bubblewrap").found.find("cannot create namespaces"),
              std::string::npos);
}
