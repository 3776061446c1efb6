"""The warm evaluation worker: ``python -m kwb_harness.fork_server``.

A stage run as its own process pays for starting Python and importing torch (2-4 s) before it
does anything. This server pays that once: it imports torch and the harness, then forks one
child per stage request. Each child is exactly the process a cold stage would be (fresh CUDA
context, the candidate imported after the trusted state was captured, every guard in place);
it just starts from a warm interpreter. The server itself never initialises CUDA, because a
CUDA context does not survive fork, and never imports candidate code, so nothing a candidate
does can outlive its child.

The server also keeps the task's CPU-side inputs (``get_inputs()`` under each seed) in its own
memory. Children inherit them copy-on-write and only move them to the device; generating large
random inputs on the CPU was the biggest cost left in a warm stage.

Protocol, one JSON object per line. The server writes ``{"ready": true, ...}`` once. Each
request ``{"id", "stage", "request", "result", "log", "timeout_s", "log_limit_bytes",
"max_descendants"}`` gets one reply ``{"id", "status": "exited" | "signaled" | "timeout" |
"limit", "code", "signal", "limit", "seconds", "warm_s"}``. End of input stops the server.
"""

import json
import os
import resource
import signal
import sys
import time

_MAX_CACHED_INPUT_BYTES = 8 << 30


def _reply(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _warm_inputs(request_path: str, stage: str) -> None:
    """Generates (on the CPU, in this process) the inputs the stage will ask for."""
    from . import input_pool, models, profile, verify
    from .request import load_json, parse
    from .task_loader import load_reference

    req = parse(load_json(request_path), stage)
    if stage not in ("verify", "profile", "inspect"):
        return
    task = load_reference(req.reference, req.workspace)
    if not models.warmable(task):
        return
    seeds = [req.seed]
    if stage == "verify":
        seeds = verify.check_seeds(req)
    elif stage == "profile":
        first = models.cpu_inputs(task, req.seed, req.workspace)
        per_set = max(1, input_pool.set_bytes(first))
        for salt in profile.pool_salts(req):
            seeds += input_pool.InputPool.seeds(req.seed, salt, per_set, profile.pool_budget(req.device))
    for seed in seeds:
        if models.cached_input_bytes() > _MAX_CACHED_INPUT_BYTES:
            break
        models.cpu_inputs(task, seed, req.workspace)


def _child(message: dict) -> None:
    """Runs in the forked child: becomes a normal stage process and never returns."""
    code = 3
    try:
        os.setsid()  # its own process group: a timeout kills everything it started
        # Having left the server's group, it would outlive a killed server; the kernel ends it.
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:
            os._exit(3)
        log = os.open(message["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.close(devnull)
        # A flood of output must not fill the disk; past the limit writes fail instead of
        # killing the process (SIGXFSZ ignored), and the capture keeps the tail in memory.
        limit = int(message.get("log_limit_bytes", 64 << 20))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        # Only the soft limit: the result file is written after lifting it again.
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        sys.stdout = os.fdopen(1, "w", buffering=1)
        sys.stderr = os.fdopen(2, "w", buffering=1)
        # The command line a cold stage has (`python -m kwb_harness STAGE ...`): nothing the
        # candidate can read about its process should tell a warm stage from a cold one.
        sys.argv = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "__main__.py"), message["stage"],
                    "--request", message["request"], "--result", message["result"]]
        # The result file is small; it may be written past the log's size limit.
        from .result import write_result
        from .runner import execute

        result = execute(message["stage"], message["request"], capture=True)
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        write_result(message["result"], result)
        code = 0
    except BaseException as exc:  # noqa: BLE001 - the child must always end in _exit
        try:
            os.write(2, f"kwb_harness fork child: {type(exc).__name__}: {exc}\n".encode())
        except OSError:
            pass
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        os._exit(code)


def _descendants(root: int) -> list:
    """Pids below ``root`` (children, grandchildren, ...), from /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # The command name may contain spaces and parentheses; fields follow the last ')'.
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, frontier = [], [root]
    while frontier:
        below = children.get(frontier.pop(), [])
        found += below
        frontier += below
    return found


def _kill_tree(pid: int) -> None:
    victims = _descendants(pid)
    for target in [pid] + victims:
        try:
            os.kill(target, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def _wait(pid: int, timeout_s: float, max_descendants: int = 0) -> dict:
    """Waits for a stage child. Like the engine's process runner it kills the child's whole
    tree on timeout or when it holds more than ``max_descendants`` processes (RLIMIT_NPROC does
    not hold for root, and a fork bomb must not take the machine)."""
    started = time.monotonic()
    delay = 0.001
    next_census = started
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            if os.WIFSIGNALED(status):
                return {"status": "signaled", "signal": os.WTERMSIG(status)}
            return {"status": "exited", "code": os.WEXITSTATUS(status)}
        now = time.monotonic()
        if now - started > timeout_s:
            _kill_tree(pid)
            os.waitpid(pid, 0)
            return {"status": "timeout"}
        if max_descendants and now >= next_census:
            next_census = now + 0.05
            if len(_descendants(pid)) + 1 > max_descendants:
                _kill_tree(pid)
                os.waitpid(pid, 0)
                return {"status": "limit", "limit": f"process limit ({max_descendants})"}
        time.sleep(delay)
        delay = min(delay * 2, 0.01)


def _serve_one(message: dict) -> dict:
    reply = {"id": message.get("id")}
    warm_started = time.perf_counter()
    try:
        _warm_inputs(message["request"], message["stage"])
    except Exception as exc:  # noqa: BLE001 - the child meets the same problem and reports it
        reply["warm_error"] = f"{type(exc).__name__}: {exc}"
    reply["warm_s"] = time.perf_counter() - warm_started
    import torch

    if torch.cuda.is_initialized():
        # Never expected; a forked child could not use CUDA any more, so stop serving.
        reply.update(status="exited", code=3, fatal="the fork server initialised CUDA")
        return reply
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        _child(message)
    reply.update(_wait(pid, float(message.get("timeout_s", 600)), int(message.get("max_descendants", 0))))
    reply["seconds"] = time.perf_counter() - started
    return reply


def main() -> int:
    started = time.perf_counter()
    # torch.cuda.is_available() must not create driver state here; the NVML check does not.
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    import torch  # noqa: F401 - the point of the server

    from . import inspect_task, models, profile, verify  # noqa: F401 - warm the stage modules

    _reply({"ready": True, "pid": os.getpid(), "torch": torch.__version__,
            "import_s": time.perf_counter() - started})
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
            for key in ("stage", "request", "result", "log"):
                if not isinstance(message.get(key), str):
                    raise ValueError(f"missing field '{key}'")
        except ValueError as exc:
            _reply({"id": None, "status": "bad_request", "error": str(exc)})
            continue
        reply = _serve_one(message)
        _reply(reply)
        if reply.get("fatal"):
            return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
