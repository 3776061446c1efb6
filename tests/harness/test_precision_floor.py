"""The precision floor: float32 outputs held to float32's precision against a float64 reference."""
import types
import unittest
from unittest import mock

import torch

from kwb_harness.integrity import output_check, precision_floor
from kwb_harness.integrity.precision_floor import PrecisionFloor


class ScaleSigmoid(torch.nn.Module):
    """sigmoid(x * scale + y), the shape of bundled task 07."""

    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.randn(64))

    def forward(self, x, y):
        return torch.sigmoid(x * self.scale + y)


class HalfInside(torch.nn.Module):
    """A reference that itself computes in float16: its own float32 run is far from float64."""

    def forward(self, x):
        return torch.cumsum(x.half(), dim=1).to(x.dtype)


class FloatOnly(torch.nn.Module):
    def forward(self, x):
        if x.dtype != torch.float32:
            raise TypeError("float32 only")
        return x * 2


def lookup_table_sigmoid(z):
    table = torch.sigmoid((torch.arange(258, dtype=torch.float32) + 0.5) / 16.0 - 8.0)
    index = ((z + 8.0) * 16.0).clamp(0, 255).long()
    return table[index]


class PrecisionFloorTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.model = ScaleSigmoid().eval()
        self.inputs = [torch.randn(256, 64), torch.randn(256, 64)]
        with torch.no_grad():
            self.expected = self.model(*self.inputs)
            self.z = self.inputs[0] * self.model.scale + self.inputs[1]

    def floor(self, model=None):
        return PrecisionFloor(model or self.model, "cpu")

    def test_honest_float32_arithmetic_in_another_form_passes(self):
        # 1 / (1 + exp(-z)) and tanh's form: other roundings, the same precision.
        for output in (1.0 / (1.0 + torch.exp(-self.z)), 0.5 * (torch.tanh(0.5 * self.z) + 1.0)):
            self.assertIsNone(self.floor().flag_for(output, self.expected, self.inputs))

    def test_a_lookup_table_within_the_loose_tolerance_is_a_downgrade(self):
        output = lookup_table_sigmoid(self.z)
        self.assertLess(float((output - self.expected).abs().max()), 1e-2)  # CUDA Agent's check passes
        flag = self.floor().flag_for(output, self.expected, self.inputs)
        self.assertIsNotNone(flag)
        self.assertEqual((flag["code"], flag["severity"]), ("precision_downgrade", "strict"))
        self.assertIn("output 0 (float32)", flag["reason"])

    def test_fast_math_tanh_is_a_warning_where_the_build_imposes_fast_math(self):
        # tanh.approx.f32, what tanhf becomes under --use_fast_math: 2^-11 relative error.
        model = torch.nn.Tanh()
        x = torch.randn(256, 64) * 2
        with torch.no_grad():
            expected = model(x)
        approx = expected * (1 - 2.0 ** -11)
        flag = PrecisionFloor(model, "cpu", fast_math=True).flag_for(approx, expected, [x])
        self.assertIsNotNone(flag)
        self.assertEqual((flag["code"], flag["severity"]), ("precision_reduced", "warning"))
        self.assertIn("tanh.approx", flag["reason"])
        # Built without fast math (the CPU build), the same error is a downgrade.
        flag = PrecisionFloor(model, "cpu", fast_math=False).flag_for(approx, expected, [x])
        self.assertEqual((flag["code"], flag["severity"]), ("precision_downgrade", "strict"))
        # The device decides by default: every CUDA build is a fast-math build.
        self.assertFalse(PrecisionFloor(model, "cpu")._fast_math)
        self.assertTrue(PrecisionFloor(model, "cuda")._fast_math)

    def test_a_table_stays_a_downgrade_with_fast_math(self):
        output = lookup_table_sigmoid(self.z)
        flag = PrecisionFloor(self.model, "cpu", fast_math=True).flag_for(output, self.expected, self.inputs)
        self.assertEqual((flag["code"], flag["severity"]), ("precision_downgrade", "strict"))

    def test_a_fast_math_warning_does_not_end_the_timed_checks(self):
        req = types.SimpleNamespace(device="cpu", workspace="", atol=1e-2, rtol=1e-2, dtype_tolerances={})
        check = output_check.TimedOutputCheck(self.model, req)
        check.floor = PrecisionFloor(self.model, "cpu", fast_math=True)
        check.check(self.expected * (1 + 2.0 ** -11), self.inputs, precise=True)
        self.assertEqual(check.precision_warning["code"], "precision_reduced")
        self.assertIsNone(check.flag)
        check.check(lookup_table_sigmoid(self.z), self.inputs, precise=True)
        self.assertEqual(check.flag["code"], "precision_downgrade")
        self.assertEqual(check.precision_warning["code"], "precision_reduced")

    def test_sixteen_bit_arithmetic_is_a_downgrade(self):
        for dtype in (torch.float16, torch.bfloat16):
            output = torch.sigmoid(self.z.to(dtype)).float()
            self.assertIsNotNone(self.floor().flag_for(output, self.expected, self.inputs), dtype)

    def test_a_reference_as_imprecise_as_the_candidate_allows_it(self):
        model = HalfInside()
        x = torch.rand(8, 512)
        with torch.no_grad():
            expected = model(x)
        output = torch.cumsum(x.bfloat16().half(), dim=1).float()  # as far off as the reference
        floor = PrecisionFloor(model, "cpu")
        self.assertIsNone(floor.flag_for(output, expected, [x]))
        self.assertIn("float16 inside itself", floor.unavailable)

    def test_a_task_that_cannot_run_in_float64_is_not_checked(self):
        model = FloatOnly()
        x = torch.randn(16)
        floor = PrecisionFloor(model, "cpu")
        self.assertIsNone(floor.flag_for((x * 2).half().float() + 0.01, x * 2, [x]))
        self.assertIn("float32 only", floor.unavailable)

    def test_inputs_too_large_for_a_float64_copy_are_not_measured(self):
        with mock.patch.object(precision_floor, "_MAX_PRECISE_BYTES", 1000):
            floor = self.floor()
            self.assertIsNone(floor.flag_for(lookup_table_sigmoid(self.z), self.expected, self.inputs))
        self.assertIn("too large", floor.unavailable)

    def test_outputs_too_large_for_a_float64_copy_are_not_measured(self):
        # Small inputs can make a large output (an outer product): its float64 answer counts.
        class Outer(torch.nn.Module):
            def forward(self, x, y):
                return x[:, None] * y[None, :]

        x, y = torch.randn(40), torch.randn(40)
        expected = Outer()(x, y)
        with mock.patch.object(precision_floor, "_MAX_PRECISE_BYTES", 4 * 40 * 8 + 100):
            floor = PrecisionFloor(Outer(), "cpu")
            self.assertIsNone(floor.flag_for(expected.half().float(), expected, [x, y]))
        self.assertIn("outputs are too large", floor.unavailable)

    def test_a_failure_in_the_judges_own_measurement_is_no_verdict(self):
        floor = self.floor()
        with mock.patch.object(precision_floor, "_errors", side_effect=RuntimeError("device mismatch")):
            self.assertIsNone(floor.flag_for(lookup_table_sigmoid(self.z), self.expected, self.inputs))
        # Out of memory for the float64 run skips that check only; the next one measures.
        with mock.patch.object(ScaleSigmoid, "forward", side_effect=torch.OutOfMemoryError("short")):
            fresh = self.floor()
            self.assertIsNone(fresh.flag_for(lookup_table_sigmoid(self.z), self.expected, self.inputs))
        self.assertEqual((fresh.skipped, fresh.unavailable), (1, ""))
        self.assertEqual(fresh.unmeasured_flag()["code"], "precision_unmeasured")  # a warning, said
        self.assertIsNotNone(fresh.flag_for(lookup_table_sigmoid(self.z), self.expected, self.inputs))
        self.assertEqual(fresh.evidence(), {"measured": 1, "skipped": 1, "unavailable": ""})
        self.assertIsNone(fresh.unmeasured_flag())

    def test_a_librarys_allocation_failure_skips_one_check_only(self):
        floor = self.floor()
        output = lookup_table_sigmoid(self.z)
        failure = RuntimeError("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`")
        with mock.patch.object(floor, "_precise_model", mock.Mock(side_effect=failure)):
            self.assertIsNone(floor.flag_for(output, self.expected, self.inputs))
        self.assertEqual(floor.evidence(), {"measured": 0, "skipped": 1, "unavailable": ""})
        # The next check measures again.
        self.assertEqual(floor.flag_for(output, self.expected, self.inputs)["code"], "precision_downgrade")

    def test_timed_calls_are_held_to_the_floor_when_the_judge_picks_them(self):
        req = types.SimpleNamespace(device="cpu", workspace="", atol=1e-2, rtol=1e-2, dtype_tolerances={})
        check = output_check.TimedOutputCheck(self.model, req)
        table = lookup_table_sigmoid(self.z)
        for _ in range(5):  # any number of calls in, it is the pick that decides
            check.check(table, self.inputs)
        self.assertIsNone(check.flag)
        check.check(table, self.inputs, precise=True)
        self.assertEqual(check.flag["code"], "precision_downgrade")

    def test_outputs_of_other_dtypes_are_left_to_their_own_tolerance(self):
        output = lookup_table_sigmoid(self.z).double()
        self.assertIsNone(self.floor().flag_for(output, self.expected.double(), self.inputs))

    def test_the_reference_model_is_not_changed(self):
        self.floor().flag_for(lookup_table_sigmoid(self.z), self.expected, self.inputs)
        self.assertEqual(self.model.scale.dtype, torch.float32)


if __name__ == "__main__":
    unittest.main()
