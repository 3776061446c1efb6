"""The task's CPU-side inputs a stage will ask for, generated before the stage runs.

The warm worker's server (fork_server.py) calls this before it forks a stage child: the inputs
stay in the server's memory (models.cpu_inputs caches them), the child inherits them
copy-on-write and only moves them to the device. Only the task's get_inputs() runs here, never
candidate code, and only for tasks that cannot create their inputs on the GPU.
"""

_MAX_CACHED_INPUT_BYTES = 8 << 30


def warm_inputs(data: dict, stage: str) -> None:
    """Generates (on the CPU, in this process) the inputs the stage will ask for."""
    from .. import models, values
    from ..request import parse
    from ..task_loader import load_reference
    from ..timing.input_pool import InputPool
    from . import profile, verify

    if stage not in ("verify", "profile", "inspect"):
        return
    req = parse(data, stage)
    task = load_reference(req.reference, req.workspace)
    if not models.warmable(task):
        return
    seeds = [req.seed]
    if stage == "verify":
        seeds = verify.check_seeds(req)
    elif stage == "profile":
        first = models.cpu_inputs(task, req.seed, req.workspace)
        per_set = max(1, values.set_bytes(first))
        for salt in profile.pool_salts(req):
            seeds += InputPool.seeds(req.seed, salt, per_set, profile.pool_budget(req.device))
    for seed in seeds:
        if models.cached_input_bytes() > _MAX_CACHED_INPUT_BYTES:
            break
        models.cpu_inputs(task, seed, req.workspace)
