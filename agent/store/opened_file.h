#pragma once

#include <string>

namespace kwb::agent {

// What a file handed to the workbench holds (the command line, a file manager's "Open With",
// a drop on the window, File > Open…), told from its name and first bytes so each kind goes to
// the pane that shows it.
enum class OpenedFileKind {
    Task,      // a KernelBench-style model.py (any .py file)
    Workspace, // a folder with model.py and model_new.py
    Trace,     // kwb-cupti record lines or Chrome trace-event JSON
    Episodes,  // episodes exported by `kwb episodes export` (JSONL, "format":"kwb.episode")
    Unknown,
};

struct OpenedFile {
    OpenedFileKind kind = OpenedFileKind::Unknown;
    std::string why; // for Unknown: what the file is not, in words
};

OpenedFile classifyOpenedFile(const std::string& path);

} // namespace kwb::agent
