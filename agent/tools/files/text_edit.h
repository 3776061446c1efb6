#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kwb::agent {

// One exact-text replacement, as Edit and MultiEdit take it. An exact match (no fuzzy search)
// keeps an edit from landing somewhere the model did not look; the uniqueness rule keeps it
// from landing in the wrong one of several places.
struct TextEdit {
    std::string oldString;
    std::string newString;
    bool replaceAll = false;
};

struct EditOutcome {
    std::string error; // empty on success; names `label` (the file)
    std::size_t replacements = 0;
    std::size_t firstChangedLine = 0; // 1-based, in the edited text
};

EditOutcome applyTextEdit(std::string& text, const TextEdit& edit, std::string_view label);

} // namespace kwb::agent
