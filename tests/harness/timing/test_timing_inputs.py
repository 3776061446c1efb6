"""Input pools, alternate shapes, the namespace guard and trusted clocks (CPU, needs torch)."""
import types
import unittest

import torch

from kwb_harness.integrity import alternate_shape
from kwb_harness.integrity.namespace_guard import NamespaceSnapshot, flags
from kwb_harness.task_loader import ReferenceTask
from kwb_harness.timing.input_pool import InputPool
from kwb_harness.timing.trusted import TrustedClock, tampering_flag


def make_task():
    module = types.SimpleNamespace(batch_size=16, dim=8)

    def get_inputs():
        return [torch.randn(module.batch_size, module.dim), torch.arange(4)]

    def get_init_inputs():
        return [module.dim]

    return ReferenceTask(module, torch.nn.Identity, get_inputs, get_init_inputs)


class InputPoolTest(unittest.TestCase):
    def test_reused_sets_keep_buffers_but_change_content(self):
        pool = InputPool(make_task(), 1, "cpu", "", budget_bytes=1 << 20, salt=7)
        count = len(pool)
        first = [pool.next() for _ in range(count)]
        snapshots = [[t.clone() for t in s] for s in first]
        again = pool.next()
        self.assertIs(again, first[0])
        self.assertFalse(torch.equal(again[0], snapshots[0][0]), "floats are rescaled on reuse")
        self.assertTrue(torch.equal(again[1], snapshots[0][1]), "integer inputs stay valid")
        self.assertFalse(torch.equal(first[0][0], first[1][0]), "sets differ from each other")

    def test_a_reused_set_is_no_multiple_of_what_it_held(self):
        # sigmoid(x * s + y) after a uniform rescale is sigmoid(F * z): a candidate read F off
        # one element and answered from a copy of z. Each element must change by its own amount.
        module = types.SimpleNamespace()
        task = ReferenceTask(module, torch.nn.Identity, lambda: [torch.randn(300, 50)], lambda: [])
        pool = InputPool(task, 1, "cpu", "", budget_bytes=1, salt=3)
        first = pool.next()[0].clone()
        for _ in range(len(pool)):
            again = pool.next()[0]
        ratio = again / first
        self.assertGreater(float(ratio.max() - ratio.min()), 0.01)
        self.assertTrue(bool(((ratio > 0.7) & (ratio < 1.0)).all()), "signs and ranges are kept")

    def test_the_judges_copy_follows_the_candidates_pool(self):
        pools = [InputPool(make_task(), 5, "cpu", "", budget_bytes=1 << 20, salt=11) for _ in range(2)]
        for _ in range(3 * len(pools[0])):
            factor = pools[0].draw_factor()
            mine, copy = pools[0].next(factor), pools[1].next(factor)
        self.assertTrue(all(torch.equal(a, b) for a, b in zip(mine, copy)))

    def test_strided_inputs_change_by_element_too_and_the_copy_follows(self):
        module = types.SimpleNamespace()
        task = ReferenceTask(module, torch.nn.Identity, lambda: [torch.randn(400, 300).t()], lambda: [])
        pools = [InputPool(task, 1, "cpu", "", budget_bytes=1, salt=3) for _ in range(2)]
        first = pools[0].next()[0].clone()
        pools[1].next()
        for _ in range(len(pools[0])):
            again, copy = pools[0].next(0.8)[0], pools[1].next(0.8)[0]
        self.assertFalse(again.is_contiguous())
        self.assertTrue(torch.equal(again, copy))
        ratio = again / first
        self.assertGreater(float(ratio.max() - ratio.min()), 0.01)

    def test_tensors_of_a_set_change_by_different_amounts_on_every_reuse(self):
        # One pattern laid alike on x and y left x * s + y a multiple of its last value, the
        # multiplier learnt from a few thousand elements (a review, 2026-12-05).
        module = types.SimpleNamespace()
        task = ReferenceTask(module, torch.nn.Identity,
                             lambda: [torch.randn(70000) + 3.0, torch.randn(70000) + 3.0], lambda: [])
        pool = InputPool(task, 1, "cpu", "", budget_bytes=1, salt=3)
        count = len(pool)
        x0, y0 = [t.clone() for t in pool.next()]
        for _ in range(count):
            x1, y1 = [t.clone() for t in pool.next()]
        for _ in range(count):
            x2, _ = pool.next()
        self.assertGreater(float((x1 / x0 - y1 / y0).abs().max()), 0.01)
        self.assertGreater(float((x2 / x1 - x1 / x0).abs().max()), 0.01, "the next reuse is laid differently")

    def test_structure_an_honest_kernel_may_rely_on_is_kept(self):
        def inputs():
            a = torch.randn(64, 64)
            return [(a + a.t()) / 2, torch.sort(torch.randn(8, 100), dim=-1).values,
                    torch.full((5, 5), 2.0), torch.randn(64, 64)]

        pool = InputPool(ReferenceTask(types.SimpleNamespace(), torch.nn.Identity, inputs, lambda: []),
                         1, "cpu", "", budget_bytes=1, salt=3)
        symmetric, ordered, constant, free = [t.clone() for t in pool.next()]
        for _ in range(2 * len(pool)):
            again = pool.next()
        self.assertTrue(torch.equal(again[0], again[0].t()), "a symmetric matrix stays symmetric")
        ratio = again[0] / symmetric
        self.assertGreater(float(ratio.max() - ratio.min()), 0.01, "and is no multiple of its last value")
        self.assertTrue(bool((again[1][:, 1:] >= again[1][:, :-1]).all()), "sorted rows stay sorted")
        self.assertEqual(len(torch.unique(again[2])), 1, "a constant stays one value")
        self.assertFalse(torch.equal(again[3], again[3].t()))

class AlternateShapeTest(unittest.TestCase):
    def test_batch_is_resized_and_restored(self):
        task = make_task()
        self.assertEqual(alternate_shape.options(task)[0], ["batch_size"])
        with alternate_shape.resized(task, ["batch_size"]) as description:
            self.assertEqual(task.get_inputs()[0].shape[0], 9)
            self.assertIn("16 -> 9", description)
        self.assertEqual(task.module.batch_size, 16)


class GuardsTest(unittest.TestCase):
    def test_a_function_whose_code_is_swapped_and_a_watched_instance_are_found(self):
        import json

        from kwb_harness.integrity.namespace_guard import watch_instance
        from kwb_harness.timing.trusted import TrustedClock

        clock = TrustedClock()
        watch_instance(clock)
        snapshot = NamespaceSnapshot()
        original_code, original_counter = json.dumps.__code__, clock.perf_counter
        try:
            # The same function object, running other code: identity alone would miss it.
            json.dumps.__code__ = (lambda obj, **kwargs: "{}").__code__
            clock.perf_counter = lambda: original_counter() * 0.8
            reason = flags(snapshot)[0]["reason"]
            self.assertIn("json.dumps (its code replaced)", reason)
            self.assertIn("TrustedClock.perf_counter", reason)
        finally:
            json.dumps.__code__ = original_code
            clock.perf_counter = original_counter
        self.assertEqual(flags(snapshot), [])

    def test_rebinding_and_settings_are_found_and_torch_own_wrappers_are_not(self):
        snapshot = NamespaceSnapshot()
        import torch._dynamo  # noqa: F401  (rewraps torch.manual_seed itself)
        self.assertEqual(flags(snapshot), [])
        original = torch.nn.functional.relu
        threads = torch.get_num_threads()
        try:
            torch.nn.functional.relu = lambda x: x
            torch.set_num_threads(max(1, threads - 1) if threads > 1 else 2)
            codes = {f["code"] for f in flags(snapshot)}
            self.assertEqual(codes, {"monkey_patching", "torch_settings_changed"})
        finally:
            torch.nn.functional.relu = original
            torch.set_num_threads(threads)

    def test_rebound_harness_methods_and_process_hooks_are_found(self):
        import gc
        import sys

        from kwb_harness.isolation import candidate_host

        snapshot = NamespaceSnapshot()
        self.assertEqual(flags(snapshot), [])
        original = candidate_host._Host.fetch
        try:
            candidate_host._Host.fetch = lambda self, message: ({}, None)
            found = flags(snapshot)
            self.assertEqual([f["code"] for f in found], ["monkey_patching"])
            self.assertIn("candidate_host._Host.fetch", found[0]["reason"])
        finally:
            candidate_host._Host.fetch = original
        self.assertEqual(flags(snapshot), [])

        def callback(phase, info):
            pass

        def tracer(frame, event, arg):
            return None

        for install, remove, name in ((lambda: gc.callbacks.append(callback), lambda: gc.callbacks.remove(callback),
                                       "gc.callbacks"),
                                      (lambda: sys.setprofile(tracer), lambda: sys.setprofile(None), "sys.setprofile")):
            install()
            try:
                found = flags(snapshot)
            finally:
                remove()
            self.assertEqual([f["code"] for f in found], ["monkey_patching"], name)
            self.assertIn(name, found[0]["reason"])
        self.assertEqual(flags(snapshot), [])

    def test_trusted_clock_survives_patching_and_reports_it(self):
        import time

        clock = TrustedClock()
        original = time.perf_counter
        try:
            time.perf_counter = lambda: 0.0
            self.assertGreater(clock.perf_counter(), 0.0)
            self.assertIn("time.perf_counter", tampering_flag(clock)["reason"])
        finally:
            time.perf_counter = original
        self.assertIsNone(tampering_flag(clock))


if __name__ == "__main__":
    unittest.main()
