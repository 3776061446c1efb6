// The compilers read #includes with kwb's rights, outside the sandbox: a kernel may include only
// headers of its workspace (no absolute path, no '..' out of it, no link, no macro) and the
// toolkit's, and a refused include is reported before any compiler runs.
#include "engine/diagnostics/include_guard.h"
#include "engine/diagnostics/kernel_check.h"
#include "engine/diagnostics/scratch_directory.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace kwb;
using namespace kwb::diagnostics;
namespace fs = std::filesystem;

namespace {

class IncludeGuard : public ::testing::Test {
protected:
    void SetUp() override {
        fs::create_directories(ws() / "kernels" / "detail");
        write("kernels/common.cuh", "#pragma once\n#include \"detail/math.cuh\"\n");
        write("kernels/detail/math.cuh", "#pragma once\n#include <cuda_fp16.h>\n");
        write("secret.txt", "root:x:0:0\n");
    }

    fs::path ws() const { return fs::path(scratch_.path()) / "ws"; }

    void write(const std::string& relative, const std::string& text) {
        std::ofstream(ws() / relative) << text;
    }

    std::optional<IncludeProblem> check(const std::string& source) {
        return unsafeInclude(source, ws() / "kernels", ws(), "kernels/k.cu");
    }

    ScratchDirectory scratch_{"kwb-include-guard-"};
};

} // namespace

TEST_F(IncludeGuard, HeadersOfTheWorkspaceAndTheToolkitAreAllowed) {
    EXPECT_FALSE(check("#include \"common.cuh\"\n#include <cstdint>\n#include <cuda_runtime.h>\n"
                       "#include \"../kernels/detail/math.cuh\"\n  #  include \"missing.cuh\"\n"));
    // Commented out, or inside a string, it is not an include.
    EXPECT_FALSE(check("// #include \"/etc/passwd\"\n/* #include </etc/shadow>\n*/\n"
                       "const char* s = \"#include </etc/passwd>\";\n"));
}

TEST_F(IncludeGuard, AbsolutePathsClimbingOutLinksAndMacrosAreRefused) {
    const auto absolute = check("int a;\n#include \"/etc/passwd\"\n");
    ASSERT_TRUE(absolute);
    EXPECT_EQ(absolute->line, 2);
    EXPECT_NE(absolute->message.find("absolute path"), std::string::npos);
    EXPECT_TRUE(check("#include </root/.ssh/id_rsa>\n"));
    EXPECT_TRUE(check("#include \"../../../../../../etc/passwd\"\n"));
    EXPECT_TRUE(check("#include <../../../etc/passwd>\n"));
    const auto macro = check("#define SECRET \"/etc/passwd\"\n#include SECRET\n");
    ASSERT_TRUE(macro);
    EXPECT_NE(macro->message.find("computed"), std::string::npos);
    fs::create_symlink("/etc/hostname", ws() / "kernels" / "host.cuh");
    const auto link = check("#include \"host.cuh\"\n");
    ASSERT_TRUE(link);
    EXPECT_NE(link->message.find("link"), std::string::npos);
}

TEST_F(IncludeGuard, AHeaderIsCheckedLikeTheSourceAndNamedInTheProblem) {
    write("kernels/detail/math.cuh", "#pragma once\n\n#include \"/etc/passwd\"\n");
    const auto nested = check("#include \"common.cuh\"\n");
    ASSERT_TRUE(nested);
    EXPECT_EQ(nested->file, "kernels/detail/math.cuh");
    EXPECT_EQ(nested->line, 3);
}

TEST_F(IncludeGuard, TheKernelCheckRefusesBeforeTheCompilerReadsTheFile) {
    KernelCheckRequest request;
    request.path = (ws() / "kernels" / "k.cu").string();
    request.text = "#include \"../secret.txt\"\n__global__ void k() {}\n#include \"/etc/passwd\"\n";
    request.arch = "sm_90";
    const KernelCheckResult r = checkKernelSource(request);
    EXPECT_FALSE(r.success);
    ASSERT_EQ(r.diagnostics.size(), 1u);
    EXPECT_EQ(r.diagnostics[0].line, 3);
    EXPECT_NE(r.diagnostics[0].message.find("absolute path"), std::string::npos);
    EXPECT_EQ(r.log.find("root:"), std::string::npos);
    EXPECT_EQ(includeRootFor(request.path), ws().lexically_normal());
}
