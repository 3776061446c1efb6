#include "engine/process/landlock.h"

#include <sys/syscall.h>
#include <unistd.h>

namespace kwb {
namespace {

// landlock_create_ruleset has this number on every architecture (it came after the syscall
// tables were unified); headers older than the kernel may lack SYS_landlock_create_ruleset.
constexpr long kCreateRuleset = 444;
constexpr unsigned kCreateRulesetVersion = 1U << 0;

} // namespace

int landlockAbi() {
    static const int abi = [] {
        const long version = syscall(kCreateRuleset, nullptr, 0, kCreateRulesetVersion);
        return version > 0 ? static_cast<int>(version) : 0;
    }();
    return abi;
}

} // namespace kwb
