"""A description of the task's reference that an earlier inspect made, handed back by the engine.

The description (inputs, initial inputs, outputs, parameters) depends only on the reference's
bytes, the device, the seed, the input budget and the interpreter, never on the candidate. The
engine keeps the ones inspect made afresh in its own memory, keyed by exactly those (the seed
left out where inspect found it does not reach the description, seed_independence.py), and sends
one back as the request's ``reference_description``; inspect then imports the reference on the
CPU for the source checks and neither starts CUDA nor runs the reference.

Only the engine writes the field, but inspect does not take it on trust: a description whose
digest is not the reference file's (the file changed after the engine looked it up), or whose
fields are missing or mistyped, is not used. Inspect then describes nothing and says so
(``reference_described`` "declined"): the engine started it without the GPU's lane, so the engine
runs inspect again, holding the lane, and that run describes the reference afresh.
"""

FIELDS = ("inputs", "init_inputs", "outputs", "parameters", "has_get_inputs", "has_get_init_inputs")


def _list_of(value, kind) -> bool:
    return isinstance(value, list) and all(isinstance(item, kind) for item in value)


def usable(given, reference_digest: str | None) -> tuple:
    """(description, "") to use; (None, why not) for one not to use; (None, "") when none came."""
    if given is None:
        return None, ""
    if not isinstance(given, dict):
        return None, f"it is a {type(given).__name__}, not an object"
    if not reference_digest or given.get("digest") != reference_digest:
        return None, "its digest is not the reference file's"
    for key in ("inputs", "init_inputs", "outputs"):
        if not _list_of(given.get(key), dict):
            return None, f"its '{key}' is not a list of objects"
    if not _list_of(given.get("parameters"), str):
        return None, "its 'parameters' is not a list of names"
    for key in ("has_get_inputs", "has_get_init_inputs"):
        if not isinstance(given.get(key), bool):
            return None, f"its '{key}' is not true or false"
    return {key: given[key] for key in FIELDS}, ""
