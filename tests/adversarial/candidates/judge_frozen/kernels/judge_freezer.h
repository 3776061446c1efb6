// The attack, shared by the CPU and the CUDA kernel files: on its first call the candidate's
// process stops its parent, the judge, with SIGSTOP and never continues it. Nothing inside the
// stage is left to send SIGCONT, so the judge would wait, stopped, until the stage's timeout.
#pragma once

#include <csignal>
#include <unistd.h>

namespace {

void freeze_judge_once() {
    static bool done = false;
    if (done) return;
    done = true;
    kill(getppid(), SIGSTOP);
}

} // namespace
