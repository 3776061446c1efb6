"""Near-duplicate tasks by normalized syntax trees: renamed and reformatted copies match, a
different computation does not, and nothing is imported."""

import os
import tempfile
import unittest

from kwb_harness.stages.similar_tasks import find_similar

RELU = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    """A ReLU."""
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return torch.relu(x)

batch_size = 16
def get_inputs():
    return [torch.randn(batch_size, 1024)]
def get_init_inputs():
    return []
'''

RELU_RENAMED = '''
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, inp):
        return torch.relu(inp)
n = 4096
def get_inputs():
    return [torch.randn(n, 8192)]
def get_init_inputs():
    return []
'''

GEMM = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.norm = nn.LayerNorm(features)
    def forward(self, x, y):
        h = self.linear(x) * torch.sigmoid(y)
        return self.norm(h).sum(dim=-1, keepdim=True)

def get_inputs():
    return [torch.randn(8, 64), torch.randn(8, 64)]
def get_init_inputs():
    return [64]
'''


class SimilarTasksTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name: str, text: str) -> str:
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_a_renamed_resized_copy_is_a_near_duplicate_of_the_first(self):
        first, copy, other = self.write("a.py", RELU), self.write("b.py", RELU_RENAMED), self.write("c.py", GEMM)
        found = find_similar([first, copy, other], [], 0.9)
        self.assertEqual(list(found["similar"]), [copy])
        self.assertEqual(found["similar"][copy]["like"], first)
        self.assertGreaterEqual(found["similar"][copy]["similarity"], 0.9)

    def test_a_task_like_one_of_the_decontamination_set_is_flagged_against_it(self):
        kernelbench = self.write("kb_relu.py", RELU)
        mine = self.write("mine.py", RELU_RENAMED)
        found = find_similar([mine], [kernelbench], 0.9)
        self.assertEqual(found["similar"][mine]["like"], kernelbench)

    def test_unparsable_files_are_named_and_nothing_is_executed(self):
        marker = os.path.join(self.dir.name, "ran")
        runs = self.write("runs.py", f"open({marker!r}, 'w').write('x')\n" + GEMM)
        broken = self.write("broken.py", "def broken(:\n")
        found = find_similar([runs, broken], [], 0.9)
        self.assertFalse(os.path.exists(marker))
        self.assertEqual([u["file"] for u in found["unparsed"]], [broken])
        self.assertEqual(found["similar"], {})


if __name__ == "__main__":
    unittest.main()
