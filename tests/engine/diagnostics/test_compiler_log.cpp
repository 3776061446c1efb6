#include "engine/diagnostics/compiler_log.h"
#include "tests/engine/diagnostics/diagnostics_test_data.h"

#include <gtest/gtest.h>

using namespace kwb;
using namespace kwb::diagnostics;

// Captured from NVRTC 13.0 for nvrtc_errors_source.cu (named kernels/bad.cu), whose line 4 starts
// with a tab: columns count the tab as one character.
TEST(CompilerLog, NvrtcErrorsWithColumnsFromTheCaretLine) {
    auto d = parseCompilerLog(test::diagnosticsText("nvrtc_errors.log"));
    ASSERT_EQ(d.size(), 4u);
    EXPECT_EQ(formatDiagnostic(d[0]),
              "kernels/bad.cu:3:12: error: identifier \"undefined_name\" is undefined");
    EXPECT_EQ(formatDiagnostic(d[1]), "kernels/bad.cu:5:5: error: expected a \";\"");
    EXPECT_EQ(d[2].line, 5);
    EXPECT_EQ(d[2].column, 31);
    EXPECT_EQ(d[3].severity, Severity::Warning);
    EXPECT_EQ(d[3].line, 4);
    EXPECT_EQ(d[3].column, 8); // "\tfloat y": the tab, "float ", then y
    EXPECT_EQ(d[3].message, "variable \"y\" was set but never used");
}

TEST(CompilerLog, ColumnsPointAtTheNamedTokenInTheSource) {
    const std::string source = test::diagnosticsText("nvrtc_errors_source.cu");
    std::vector<std::string> lines;
    std::size_t start = 0;
    for (std::size_t end; (end = source.find('\n', start)) != std::string::npos; start = end + 1)
        lines.push_back(source.substr(start, end - start));
    auto d = parseCompilerLog(test::diagnosticsText("nvrtc_errors.log"));
    ASSERT_GE(d.size(), 4u);
    EXPECT_EQ(lines[d[0].line - 1].substr(d[0].column - 1, 14), "undefined_name");
    EXPECT_EQ(lines[d[2].line - 1].substr(d[2].column - 1, 1), "z");
    EXPECT_EQ(lines[d[3].line - 1].substr(d[3].column - 1, 1), "y");
}

TEST(CompilerLog, NvccFrontEndErrors) {
    auto d = parseCompilerLog(test::diagnosticsText("nvcc_frontend_errors.log"));
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(formatDiagnostic(d[0]),
              "edg.cu:3:22: error: identifier \"missing_value\" is undefined");
}

TEST(CompilerLog, HostCompilerErrorsKeepTheirColumns) {
    auto d = parseCompilerLog(test::diagnosticsText("nvcc_host_compiler_errors.log"));
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].file, "/tmp/kwbexp/inc.cu");
    EXPECT_EQ(d[0].line, 2);
    EXPECT_EQ(d[0].column, 10);
    EXPECT_EQ(d[0].severity, Severity::Error);
    EXPECT_EQ(d[0].message, "missing_header.cuh: No such file or directory");
}

TEST(CompilerLog, ToolMessagesWithoutPositionAndInfoLinesSkipped) {
    auto d =
        parseCompilerLog("ptxas info    : Used 12 registers, used 1 barriers\n"
                         "ptxas warning : Registers are spilled to local memory in function 'k'\n"
                         "ptxas error   : Entry function 'k' uses too much shared data\n"
                         "nvcc fatal   : Unsupported gpu architecture 'sm_1'\n"
                         "1 error detected in the compilation of \"k.cu\".\n");
    ASSERT_EQ(d.size(), 3u);
    EXPECT_EQ(d[0].severity, Severity::Warning);
    EXPECT_EQ(d[0].message, "ptxas: Registers are spilled to local memory in function 'k'");
    EXPECT_EQ(d[1].severity, Severity::Error);
    EXPECT_EQ(d[2].message, "nvcc: Unsupported gpu architecture 'sm_1'");
    EXPECT_TRUE(d[2].file.empty());
}

TEST(CompilerLog, RenameMapsOnlyTheNamedFile) {
    std::vector<Diagnostic> d = {{"gelu.cu", 3, 1, Severity::Error, "a"},
                                 {"/usr/include/x.h", 9, 1, Severity::Error, "b"}};
    renameDiagnosticFile(d, "gelu.cu", "ws/kernels/gelu.cu");
    EXPECT_EQ(d[0].file, "ws/kernels/gelu.cu");
    EXPECT_EQ(d[1].file, "/usr/include/x.h");
}
