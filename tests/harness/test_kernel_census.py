"""Flags from a kernel census (synthetic records: the census itself needs a GPU)."""
import unittest

from kwb_harness.integrity.kernel_census import classify, flags_for


def census(kernels, side_stream_us=0.0, declared=("scale_residual_vec4_kernel",)):
    totals = {"custom": 0.0, "library": 0.0, "torch": 0.0, "other": 0.0}
    for k in kernels:
        totals[k["origin"]] = totals.get(k["origin"], 0.0) + k["total_us"]
    return {"available": True, "kernels": kernels, "custom_us": totals["custom"], "library_us": totals["library"],
            "torch_us": totals["torch"], "other_us": totals["other"], "transfer_us": 0.0,
            "side_stream_us": side_stream_us, "timing_streams": [7], "declared_kernels": list(declared)}


def kernel(name, origin, us, stream=7):
    return {"name": name, "origin": origin, "calls": 1, "total_us": us, "streams": [stream]}


class ClassifyTest(unittest.TestCase):
    def test_origins(self):
        own = {"scale_residual_vec4_kernel"}
        self.assertEqual(classify("void scale_residual_vec4_kernel(float4 const*)", own), "custom")
        self.assertEqual(classify("void at::native::vectorized_elementwise_kernel<4>(int)", own), "torch")
        self.assertEqual(classify("triton_poi_fused_add_0", own), "torch")
        self.assertEqual(classify("sm90_xmma_gemm_f32f32_tn", own), "library")
        self.assertEqual(classify("Memcpy DtoD (Device -> Device)", own), "transfer")
        self.assertEqual(classify("my_other_kernel", own), "other")


class FlagsTest(unittest.TestCase):
    def codes(self, c, event_ms=None):
        return {f["code"]: f["severity"] for f in flags_for(c, event_ms)}

    def test_honest_custom_kernel_is_not_flagged(self):
        c = census([kernel("scale_residual_vec4_kernel", "custom", 25.0)])
        self.assertEqual(self.codes(c, 0.039), {})

    def test_torch_kernels_dominating_is_strict(self):
        c = census([kernel("at::native::sigmoid", "torch", 40.0), kernel("scale_residual_vec4_kernel", "custom", 1.0)])
        self.assertEqual(self.codes(c, 0.05).get("torch_kernels_dominate"), "strict")

    def test_no_kernels_is_strict(self):
        self.assertEqual(self.codes(census([]), 0.01).get("no_kernels_ran"), "strict")

    def test_side_stream_is_strict_even_when_events_look_plausible(self):
        c = census([kernel("scale_residual_vec4_kernel", "custom", 25.1, stream=13)], side_stream_us=25.1)
        self.assertEqual(self.codes(c, 0.03).get("side_stream"), "strict")

    def test_events_shorter_than_the_kernels_are_missed_work(self):
        c = census([kernel("scale_residual_vec4_kernel", "custom", 100.0)])
        self.assertEqual(self.codes(c, 0.02).get("timing_missed_work"), "strict")
        self.assertNotIn("timing_missed_work", self.codes(c, 0.1))

    def test_library_only_is_a_warning(self):
        c = census([kernel("sm90_xmma_gemm", "library", 30.0)])
        self.assertEqual(self.codes(c, 0.05), {"library_only": "warning"})


if __name__ == "__main__":
    unittest.main()
