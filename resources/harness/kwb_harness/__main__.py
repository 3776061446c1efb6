"""Command line: ``python -m kwb_harness [STAGE] --request REQ.json --result RES.json``.

Without STAGE the request's "stage" field names it (the engine's way: the command line, which
every process in the sandbox can read, then does not say what the stage is) and the request
file is deleted once read.

Exit status: 0 when the result file was written (its "ok" tells success), 2 for a usage
error, 3 when the result could not be written.
"""

import argparse
import os
import sys

from .isolation import process_tree
from .result import write_result
from .stages.runner import execute
from .timing.phase_marks import finish_timeline


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kwb_harness")
    parser.add_argument("stage", nargs="?", default="", help="inspect | compile | verify | profile | baseline | screen | similar")
    parser.add_argument("--request", required=True, help="request JSON file")
    parser.add_argument("--result", required=True, help="where to write the result JSON")
    parser.add_argument("--no-capture", action="store_true", help="do not capture fds 1/2 into the log")
    args = parser.parse_args(argv)

    # What the candidate's code starts (an extension loaded by the compile stage, a daemon of the
    # candidate's process) stays below this process and is ended before the result is written.
    process_tree.become_subreaper()
    result = execute(args.stage, os.path.abspath(args.request), capture=not args.no_capture,
                     consume_request=not args.stage)
    process_tree.end_descendants()
    try:
        write_result(args.result, result)
    except BaseException as exc:
        print(f"kwb_harness: cannot write result {args.result}: {exc}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    code = main()
    # os._exit skips atexit, where a CUPTI injection library would write its last records.
    finish_timeline()
    sys.stdout.flush()
    sys.stderr.flush()
    # Skips interpreter teardown: after a CUDA fault or with inductor's worker pool alive,
    # destructors can crash or hang, turning a written, valid result into a failed run.
    os._exit(code)
