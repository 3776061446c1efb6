"""Inspect says whether its description of a reference depends on the seed (seed_independence.py):
constant shapes do not; shapes drawn from Python's, numpy's or torch's generator do, and so does
every draw the meta device cannot prove (a device named, a value read); the check neither changes
the description nor builds or runs the reference again (CPU)."""
import contextlib
import io
import os
import random
import shutil
import tempfile
import textwrap
import unittest
from unittest import mock

from kwb_harness import PROTOCOL_VERSION
from kwb_harness.request import parse
from kwb_harness.stages import inspect_task, seed_independence

import noting_task

# The reference notes every Model built and every forward run (noting_task.py).
HEADER = """import os
import random
import numpy
import torch
import torch.nn as nn
""" + noting_task.NOTES
MODEL = noting_task.MODEL
INIT = noting_task.INIT


def task(get_inputs: str, model: str = MODEL, init: str = INIT) -> str:
    return HEADER + model + "\n" + textwrap.dedent(get_inputs) + init


CONSTANT = task('''
    def get_inputs():
        return [torch.randn(4, 24)]
''')

INDEPENDENT = {
    "constant shapes": CONSTANT,
    "integer targets drawn on the default device": task('''
        def get_inputs():
            return [torch.randn(4, 24) + torch.randint(0, 3, (4, 1))]
    '''),
}

DEPENDENT = {
    # random.randint(2, 3) can come out the same for two seeds: drawing from the generator
    # is what says "depends", not the luck of the comparison.
    "rows from random.randint": task('''
        def get_inputs():
            return [torch.randn(random.randint(2, 3), 24)]
    '''),
    "rows from torch.randint": task('''
        def get_inputs():
            return [torch.randn(int(torch.randint(2, 9, (1,)).item()), 24)]
    '''),
    "rows from torch.randint on a named device": task('''
        def get_inputs():
            return [torch.randn(int(torch.randint(2, 9, (1,), device="cpu").item()), 24)]
    '''),
    "rows from numpy": task('''
        def get_inputs():
            return [torch.randn(int(numpy.random.randint(2, 9)), 24)]
    '''),
    "a scalar input from random.random": task('''
        def get_inputs():
            return [torch.randn(4, 24) * random.random()]
    '''),
    "an initial input from torch.rand": task('''
        def get_inputs():
            return [torch.randn(4, 24)]
    ''', init='''
def get_init_inputs():
    return [float(torch.rand(1).item()) + 2.0]
'''),
    # Might be constant, but the meta device cannot tell: these say "depends".
    "inputs created with device=": task('''
        def get_inputs():
            return [torch.ones(4, 24, device="cpu")]
    '''),
    "inputs that raise on the meta device": task('''
        def get_inputs():
            x = torch.randn(4, 24)
            if x.device.type == "meta":
                raise RuntimeError("not on meta")
            return [x]
    '''),
    "inputs made from numpy": task('''
        def get_inputs():
            return [torch.from_numpy(numpy.ones((4, 24), dtype=numpy.float32))]
    '''),
    "layers chosen by random in the constructor": task('''
        def get_inputs():
            return [torch.randn(4, 24)]
    ''', model=MODEL.replace('self.factor = factor',
                             'self.factor = factor\n'
                             '        self.extra = nn.ModuleList(nn.Linear(24, 24) for _ in range(random.randint(1, 2)))')),
    "a forward that draws from random": task('''
        def get_inputs():
            return [torch.randn(4, 24)]
    ''', model=MODEL.replace('return x * self.scale * self.factor',
                             'return (x * self.scale * self.factor)[: random.randint(3, 4)]')),
}


class SeedIndependenceTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="kwb-seed-independence-")
        self.reference = os.path.join(self.root, "model.py")
        self.runs = os.path.join(self.root, "runs.txt")

    def tearDown(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def inspect(self, text: str, seed: int = 7) -> dict:
        with open(self.reference, "w") as f:
            f.write(text)
        if os.path.exists(self.runs):
            os.unlink(self.runs)
        data = {"version": PROTOCOL_VERSION, "stage": "inspect", "workspace": self.root,
                "reference": self.reference, "candidate": "", "device": "cpu", "seed": seed,
                "input_budget_bytes": 1 << 30, "cache_dir": os.path.join(self.root, "cache")}
        result = {}
        with contextlib.redirect_stdout(io.StringIO()):
            inspect_task.run(parse(data, "inspect"), result)
        self.assertEqual(result["reference_described"], "run")
        return result

    def reference_runs(self) -> list:
        with open(self.runs) as f:
            return f.read().split()

    def test_constant_shapes_are_independent_of_the_seed(self):
        for name, text in INDEPENDENT.items():
            with self.subTest(name):
                result = self.inspect(text)
                self.assertIs(result["description_seed_independent"], True)
                # The check built and ran nothing: the reference ran once, for the description.
                self.assertEqual(self.reference_runs(), ["built", "ran"])

    def test_shapes_or_values_the_seed_may_reach_depend_on_it(self):
        for name, text in DEPENDENT.items():
            with self.subTest(name):
                result = self.inspect(text)
                self.assertIs(result["description_seed_independent"], False)
                self.assertEqual(self.reference_runs(), ["built", "ran"])

    def test_the_check_leaves_the_description_as_it_was(self):
        # A get_inputs that counts its calls would describe a third call if the check drew first.
        counting = task('''
            _calls = [0]

            def get_inputs():
                _calls[0] += 1
                return [torch.randn(4, 24 * _calls[0])]
        ''', model=MODEL.replace("torch.ones(24)", "torch.ones(48)"))
        for name, text in {**INDEPENDENT, **DEPENDENT, "counting its calls": counting}.items():
            with self.subTest(name):
                checked = self.inspect(text)
                with mock.patch.object(seed_independence, "inputs_independent", return_value=False), \
                        mock.patch.object(seed_independence, "GeneratorWatch"):
                    unchecked = self.inspect(text)
                for field in inspect_task.known_description.FIELDS:
                    self.assertEqual(checked[field], unchecked[field], field)
        # The budget's sizing and the real draw are its two calls; the check's is the third.
        self.assertEqual(checked["inputs"][0]["shape"], [4, 48])
        self.assertIs(checked["description_seed_independent"], False)

    def test_the_second_draw_is_seeded_as_the_real_one_with_another_seed(self):
        # Initial inputs with s, inputs with s + 1 (models.py), at an s that is neither of the
        # real draw's seeds; each function sees the generator as that seeding left it.
        seen = []
        fake = mock.Mock(get_init_inputs=lambda: seen.append(random.getstate()) or [],
                         get_inputs=lambda: seen.append(random.getstate()) or [])
        self.assertTrue(seed_independence.inputs_independent(fake, 7, [], []))
        other = seed_independence.other_seed(7)
        self.assertFalse({other, other + 1} & {7, 8})
        self.assertEqual(seen, [random.Random(other).getstate(), random.Random(other + 1).getstate()])


if __name__ == "__main__":
    unittest.main()
