#include "agent/tools/files/text_edit.h"

#include "agent/tools/files/line_view.h"

#include <vector>

namespace kwb::agent {

EditOutcome applyTextEdit(std::string& text, const TextEdit& edit, std::string_view label) {
    EditOutcome outcome;
    const std::string file(label);
    if (edit.oldString.empty()) {
        outcome.error = "'old_string' is empty; use Write to create a file or replace all of it";
        return outcome;
    }
    if (edit.oldString == edit.newString) {
        outcome.error = "'old_string' and 'new_string' are the same; there is nothing to change";
        return outcome;
    }
    std::vector<std::size_t> matches;
    for (std::size_t at = text.find(edit.oldString); at != std::string::npos;
         at = text.find(edit.oldString, at + edit.oldString.size()))
        matches.push_back(at);
    if (matches.empty()) {
        outcome.error = "'old_string' not found in " + file +
                        " (it must match exactly, including whitespace and indentation; Read "
                        "the file to see its current text)";
        return outcome;
    }
    if (matches.size() > 1 && !edit.replaceAll) {
        std::string lines;
        for (std::size_t i = 0; i < matches.size() && i < 10; ++i)
            lines += (i ? ", " : "") + std::to_string(lineNumberAt(text, matches[i]));
        if (matches.size() > 10)
            lines += ", ...";
        outcome.error = "'old_string' matches " + std::to_string(matches.size()) + " times in " +
                        file + " (lines " + lines +
                        "); include more surrounding text to make it unique, or set replace_all "
                        "to true";
        return outcome;
    }
    std::string edited;
    edited.reserve(text.size());
    std::size_t from = 0;
    for (std::size_t at : matches) {
        edited.append(text, from, at - from);
        if (outcome.replacements == 0)
            outcome.firstChangedLine = lineNumberAt(edited, edited.size());
        edited += edit.newString;
        from = at + edit.oldString.size();
        ++outcome.replacements;
    }
    edited.append(text, from, std::string::npos);
    text = std::move(edited);
    return outcome;
}

} // namespace kwb::agent
