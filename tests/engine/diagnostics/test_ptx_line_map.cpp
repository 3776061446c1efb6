// PTX lines mapped to their source lines and back, from the line table NVRTC's -lineinfo writes:
// a kernel compiled here (NVRTC needs no GPU) and hand-written PTX for the edge cases.
#include "engine/diagnostics/nvrtc_compiler.h"
#include "engine/diagnostics/ptx_line_map.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <sstream>

using namespace kwb;
using namespace kwb::diagnostics;

namespace {

// The 1-based number of the first PTX line that contains `text`.
int lineContaining(const std::string& ptx, const std::string& text) {
    std::istringstream in(ptx);
    int number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        if (line.find(text) != std::string::npos)
            return number;
    }
    return 0;
}

} // namespace

TEST(PtxLineMap, NvrtcsLineTableMapsInstructionsToTheirSourceLinesAndBack) {
    NvrtcRequest request;
    request.fileName = "kernels/square.cu";
    request.source = "__device__ float square(float x) { return x * x; }\n" // 1
                     "extern \"C\" __global__ void square_plus_one(float* y, const float* x,\n"
                     "                                            int n) {\n"
                     "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n" // 4
                     "    if (i < n)\n"                                     // 5
                     "        y[i] = square(x[i]) + 1.0f;\n"                // 6
                     "}\n";
    const NvrtcResult compiled = compileWithNvrtc(request);
    ASSERT_TRUE(compiled.success) << compiled.log;
    const PtxLineMap map = PtxLineMap::fromPtx(compiled.ptx);
    ASSERT_FALSE(map.empty());
    ASSERT_EQ(map.files().size(), 1u);
    // NVRTC writes the program's name made absolute against its working folder.
    const std::string named = map.files()[0];
    EXPECT_EQ(named.substr(named.size() - 17), "kernels/square.cu") << named;

    // The fused multiply-add (x * x + 1) comes from line 6; the thread index from line 4.
    const int fma = lineContaining(compiled.ptx, "fma.rn.f32");
    ASSERT_GT(fma, 0) << compiled.ptx;
    const auto fmaSource = map.sourceOf(fma);
    ASSERT_TRUE(fmaSource);
    EXPECT_EQ(fmaSource->file, named);
    EXPECT_EQ(fmaSource->line, 6);
    const int tid = lineContaining(compiled.ptx, "%tid.x");
    ASSERT_GT(tid, 0);
    EXPECT_EQ(map.sourceOf(tid)->line, 4);

    // Back: line 6's PTX includes the FMA and the store; the file is found by its full name or
    // its file name alone (the editor may know it by either).
    const std::vector<int> sixth = map.ptxLinesOf("kernels/square.cu", 6);
    EXPECT_NE(std::find(sixth.begin(), sixth.end(), fma), sixth.end());
    EXPECT_NE(std::find(sixth.begin(), sixth.end(), lineContaining(compiled.ptx, "st.global.f32")),
              sixth.end());
    EXPECT_EQ(map.ptxLinesOf("/home/me/ws/kernels/square.cu", 6), sixth);
    for (const int line : sixth)
        EXPECT_EQ(map.sourceOf(line)->line, 6) << line;
    EXPECT_TRUE(map.ptxLinesOf("other.cu", 6).empty());
    EXPECT_TRUE(map.ptxLinesOf("kernels/square.cu", 3).empty()) << "a line with no code";
    // The header and the module-scope directives belong to no source line.
    EXPECT_FALSE(map.sourceOf(1).has_value());
    EXPECT_FALSE(map.sourceOf(lineContaining(compiled.ptx, ".file")).has_value());
    EXPECT_FALSE(map.sourceOf(0).has_value());
    EXPECT_FALSE(map.sourceOf(1000000).has_value());
}

TEST(PtxLineMap, FunctionsEndTheirLocationsAndOddDirectivesAreTolerated) {
    const std::string ptx = ".version 9.0\n"        // 1
                            ".visible .entry a()\n" // 2
                            "{\n"                   // 3
                            "\t.loc\t1 10 3\n"      // 4
                            "\tmov.u32 %r1, 1;\n"   // 5
                            "$L__BB0_1:\n"          // 6
                            "\t.loc\t2 7 1, function_name $L__info_string0, inlined_at 1 11 5\n"
                            "\tadd.s32 %r1, %r1, 1;\n" // 8
                            "\t.loc\tx y\n"            // 9: unreadable
                            "\tret;\n"                 // 10
                            "}\n"                      // 11
                            ".global .u32 g;\n"        // 12
                            "\t.file\t1 \"/ws/kernels/a.cu\", 1700000000, 1234\n"
                            "\t.file\t2 \"/ws/kernels/inline.cuh\"\n";
    const PtxLineMap map = PtxLineMap::fromPtx(ptx);
    EXPECT_EQ(map.sourceOf(5)->line, 10);
    EXPECT_EQ(map.sourceOf(5)->file, "/ws/kernels/a.cu");
    EXPECT_EQ(map.sourceOf(6)->line, 10) << "a label belongs to the code before it";
    EXPECT_EQ(map.sourceOf(8)->file, "/ws/kernels/inline.cuh");
    EXPECT_EQ(map.sourceOf(8)->line, 7);
    EXPECT_FALSE(map.sourceOf(10).has_value()) << "after an unreadable .loc";
    EXPECT_FALSE(map.sourceOf(12).has_value()) << "module scope after the function";
    EXPECT_EQ(map.ptxLinesOf("a.cu", 10), (std::vector<int>{4, 5, 6}));
    EXPECT_EQ(map.files(),
              (std::vector<std::string>{"/ws/kernels/a.cu", "/ws/kernels/inline.cuh"}));
    EXPECT_TRUE(PtxLineMap::fromPtx("").empty());
    EXPECT_FALSE(PtxLineMap::fromPtx("\t.loc\t3 4 5\n\tret;\n").sourceOf(2).has_value())
        << "a .loc whose .file is missing";
}
