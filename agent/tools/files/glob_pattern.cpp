#include "agent/tools/files/glob_pattern.h"

#include <utility>

namespace kwb::agent {
namespace {

using Step = GlobPattern::Step;
using Kind = GlobPattern::Step::Kind;

Step simple(Kind kind, char literal = 0) {
    Step step;
    step.kind = kind;
    step.literal = literal;
    return step;
}

// "(?:.*/)?": zero or more whole folders. A fork either skips the loop or enters it; the loop
// reads any characters and leaves only right after a '/'.
void addOptionalFolders(std::vector<Step>& steps) {
    Step fork = simple(Kind::Fork);
    fork.targets = {steps.size() + 1, steps.size() + 2};
    steps.push_back(std::move(fork));
    steps.push_back(simple(Kind::FolderLoop));
}

// Parses a class body ("a-z_", "!0-9"); false when a range runs backwards, as "[z-a]".
bool parseClass(std::string_view body, Step& step) {
    step.kind = Kind::Class;
    if (!body.empty() && (body[0] == '!' || body[0] == '^')) {
        step.negated = true;
        body.remove_prefix(1);
    }
    for (std::size_t j = 0; j < body.size(); ++j) {
        const auto low = static_cast<unsigned char>(body[j]);
        if (j + 2 < body.size() && body[j + 1] == '-') {
            const auto high = static_cast<unsigned char>(body[j + 2]);
            if (high < low)
                return false;
            for (unsigned c = low; c <= high; ++c)
                step.members.set(c);
            j += 2;
        } else {
            step.members.set(low);
        }
    }
    return true;
}

struct OpenBrace {
    std::size_t fork = 0;
    std::vector<std::size_t> jumps; // the Jump at the end of each alternative but the last
};

std::string compile(std::string_view glob, std::vector<Step>& steps) {
    std::vector<OpenBrace> braces;
    for (std::size_t i = 0; i < glob.size(); ++i) {
        const char c = glob[i];
        if (c == '*') {
            if (i + 1 < glob.size() && glob[i + 1] == '*') {
                const bool wholeFolder = (i == 0 || glob[i - 1] == '/');
                i += 1;
                if (wholeFolder && i + 1 < glob.size() && glob[i + 1] == '/') {
                    addOptionalFolders(steps);
                    i += 1;
                } else {
                    steps.push_back(simple(Kind::AnyRun));
                }
            } else {
                steps.push_back(simple(Kind::Star));
            }
        } else if (c == '?') {
            steps.push_back(simple(Kind::AnyOne));
        } else if (c == '[') {
            // The first character after '[' is a member even when it is ']', as in fnmatch.
            const std::size_t close = glob.find(']', i + 2);
            if (close == std::string_view::npos) {
                steps.push_back(simple(Kind::Literal, c));
                continue;
            }
            Step step;
            if (!parseClass(glob.substr(i + 1, close - i - 1), step))
                return "invalid glob pattern: the range in \"" +
                       std::string(glob.substr(i, close - i + 1)) + "\" runs backwards";
            steps.push_back(std::move(step));
            i = close;
        } else if (c == '{') {
            Step fork = simple(Kind::Fork);
            fork.targets = {steps.size() + 1};
            braces.push_back({steps.size(), {}});
            steps.push_back(std::move(fork));
        } else if (c == ',' && !braces.empty()) {
            braces.back().jumps.push_back(steps.size());
            steps.push_back(simple(Kind::Jump));
            steps[braces.back().fork].targets.push_back(steps.size());
        } else if (c == '}' && !braces.empty()) {
            for (const std::size_t jump : braces.back().jumps)
                steps[jump].targets = {steps.size()};
            braces.pop_back();
        } else {
            steps.push_back(simple(Kind::Literal, c));
        }
    }
    if (!braces.empty())
        return "unbalanced '{' in the pattern";
    steps.push_back(simple(Kind::Accept));
    return {};
}

// The set of live steps, each at most once, in the order reached.
class StateSet {
public:
    explicit StateSet(const std::vector<Step>& steps) : steps_(steps), marked_(steps.size(), 0) {}

    // Adds `start` and everything it reaches without reading a character. Iterative, so a long
    // chain of forks and stars needs no stack.
    void add(std::size_t start) {
        pending_.push_back(start);
        while (!pending_.empty()) {
            const std::size_t i = pending_.back();
            pending_.pop_back();
            if (i >= steps_.size() || marked_[i])
                continue;
            marked_[i] = 1;
            live_.push_back(i);
            const Step& step = steps_[i];
            switch (step.kind) {
            case Kind::Fork:
            case Kind::Jump:
                for (auto t = step.targets.rbegin(); t != step.targets.rend(); ++t)
                    pending_.push_back(*t);
                break;
            case Kind::Star:
            case Kind::AnyRun:
                pending_.push_back(i + 1); // the run may be empty
                break;
            default:
                break;
            }
        }
    }

    void clear() {
        for (const std::size_t i : live_)
            marked_[i] = 0;
        live_.clear();
    }

    const std::vector<std::size_t>& live() const { return live_; }

private:
    const std::vector<Step>& steps_;
    std::vector<char> marked_;
    std::vector<std::size_t> live_;
    std::vector<std::size_t> pending_;
};

} // namespace

GlobPattern::GlobPattern(std::string_view pattern, bool anyFolderWithoutSlash) {
    if (pattern.size() > kMaxPatternChars) {
        error_ = "the glob pattern is " + std::to_string(pattern.size()) +
                 " characters long; the limit is " + std::to_string(kMaxPatternChars);
        return;
    }
    while (pattern.rfind("./", 0) == 0)
        pattern.remove_prefix(2);
    if (anyFolderWithoutSlash && pattern.find('/') == std::string_view::npos)
        addOptionalFolders(steps_);
    error_ = compile(pattern, steps_);
    if (!error_.empty())
        steps_.clear();
}

bool GlobPattern::matches(std::string_view relativePath) const {
    if (!valid())
        return false;
    StateSet first(steps_);
    StateSet second(steps_);
    StateSet* current = &first;
    StateSet* next = &second;
    current->add(0);
    for (const char ch : relativePath) {
        const auto c = static_cast<unsigned char>(ch);
        next->clear();
        for (const std::size_t i : current->live()) {
            const Step& step = steps_[i];
            switch (step.kind) {
            case Kind::Literal:
                if (ch == step.literal)
                    next->add(i + 1);
                break;
            case Kind::AnyOne:
                if (ch != '/')
                    next->add(i + 1);
                break;
            case Kind::Class:
                if (ch != '/' && step.members.test(c) != step.negated)
                    next->add(i + 1);
                break;
            case Kind::Star:
                if (ch != '/')
                    next->add(i);
                break;
            case Kind::AnyRun:
                next->add(i);
                break;
            case Kind::FolderLoop:
                next->add(i);
                if (ch == '/')
                    next->add(i + 1);
                break;
            default:
                break;
            }
        }
        std::swap(current, next);
        if (current->live().empty())
            return false;
    }
    for (const std::size_t i : current->live())
        if (steps_[i].kind == Kind::Accept)
            return true;
    return false;
}

} // namespace kwb::agent
