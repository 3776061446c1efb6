#include "engine/evaluation/static_checks.h"

#include <fstream>
#include <regex>
#include <sstream>

namespace kwb {
namespace {
std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}
} // namespace

std::string StaticCheckReport::summary() const {
    if (!fatal.empty())
        return fatal;
    if (flags.empty())
        return "no findings";
    return std::to_string(flags.size()) + " finding(s)";
}

StaticCheckReport runStaticChecks(const std::string& referencePath,
                                  const std::string& candidatePath, bool workspaceMode) {
    StaticCheckReport report;
    const std::string candidate = readFile(candidatePath);
    static const std::regex modelNewClass(R"((^|\n)class\s+ModelNew\s*[\(:])");
    if (!std::regex_search(candidate, modelNewClass)) {
        report.fatal = "the candidate defines no `class ModelNew`";
        return report;
    }
    static const std::regex usesExtension(
        R"(\bimport\s+cuda_extension\b|\bload_inline\s*\(|\bcpp_extension\s*\.\s*load\s*\(|)"
        R"(\bimport\s+kwb_kernels\b|\bfrom\s+kwb_kernels\b)");
    if (!std::regex_search(candidate, usesExtension))
        report.flags.push_back({"no_custom_extension", FlagSeverity::Warning,
                                workspaceMode
                                    ? "model_new.py imports neither cuda_extension nor kwb_kernels"
                                    : "the candidate builds no extension (no load_inline)"});
    (void)referencePath;
    return report;
}

} // namespace kwb
