#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kwb::diagnostics {

// A place in a source file that PTX's debug line table names.
struct SourcePlace {
    std::string file; // as the compiler was given it (NVRTC: the program's name)
    int line = 0;     // 1-based
};

// Which source line each PTX line comes from, read from the `.file` and `.loc` directives that
// `-lineinfo` puts in the PTX: an instruction belongs to the last `.loc` before it (a label, a
// brace or a comment between them belongs to it too). Both directions are answered: a PTX
// line's source line, and the PTX lines of a source line (for "show me this line's code").
class PtxLineMap {
public:
    static PtxLineMap fromPtx(const std::string& ptx);

    bool empty() const { return byPtxLine_.empty(); }
    // The source place of a 1-based PTX line; nullopt for lines before the first `.loc`, in a
    // directive block outside a function, or whose `.loc` names no `.file`.
    std::optional<SourcePlace> sourceOf(int ptxLine) const;
    // The 1-based PTX lines whose code comes from `line` of the file named `file` (matched as
    // the PTX names it, or by its file name alone when the PTX holds a path), in order.
    std::vector<int> ptxLinesOf(const std::string& file, int line) const;
    // The files the line table names, in `.file` index order.
    std::vector<std::string> files() const;

private:
    struct Entry {
        int fileIndex = 0; // 0: none
        int line = 0;
    };
    bool fileMatches(int fileIndex, const std::string& file) const;

    std::vector<Entry> byPtxLine_;                   // index: PTX line - 1
    std::vector<std::pair<int, std::string>> files_; // .file index, name
};

} // namespace kwb::diagnostics
