"""A reference task that notes each construction of its Model and each forward pass in runs.txt
beside the task file: the tests of inspect read it to know whether the reference was built or run
again. Its input has 24 as one of its sizes (a shape literal the source checks look for)."""

# The module's own lines (after the imports its task needs: os, torch, torch.nn as nn).
NOTES = '''
_RUNS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runs.txt")


def _note(what):
    with open(_RUNS, "a") as f:
        f.write(what + "\\n")
'''

MODEL = '''
class Model(nn.Module):
    def __init__(self, factor):
        super().__init__()
        _note("built")
        self.scale = nn.Parameter(torch.ones(24))
        self.factor = factor

    def forward(self, x):
        _note("ran")
        return x * self.scale * self.factor
'''

INIT = '''
def get_init_inputs():
    return [2.0]
'''
