"""The commitment a batch's reply makes to its outputs (CPU, needs torch)."""
import unittest

import torch

from kwb_harness.errors import HarnessError
from kwb_harness.integrity import output_digest


class OutputDigestTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(3)
        self.key = output_digest.new_key()

    def test_the_same_bytes_give_the_same_digest_whatever_the_layout(self):
        x = torch.randn(64, 33)
        self.assertEqual(output_digest.digest(x, self.key), output_digest.digest(x.clone(), self.key))
        # A transposed copy holds other bytes in memory, but the same values in the same order
        # once contiguous: that is what the wire sends.
        self.assertEqual(output_digest.digest(x.t().contiguous().t(), self.key),
                         output_digest.digest(x, self.key))

    def test_the_reduction_order_does_not_matter(self):
        x = torch.randn(1 << 16)
        one_thread = torch.get_num_threads()
        first = output_digest.digest(x, self.key)
        torch.set_num_threads(1)
        try:
            self.assertEqual(output_digest.digest(x, self.key), first)
        finally:
            torch.set_num_threads(one_thread)

    def test_one_changed_bit_anywhere_changes_the_digest(self):
        x = torch.randn(1000, 7)  # 28 000 bytes: a tail outside the 64-bit words
        reference = output_digest.digest(x, self.key)
        raw = x.view(-1).view(torch.int32)
        for position in (0, 1, 3499, 6999):
            changed = raw.clone()
            changed[position] ^= 1  # the lowest mantissa bit, well inside any tolerance
            self.assertNotEqual(output_digest.digest(changed.view(torch.float32).view(1000, 7), self.key),
                                reference, position)

    def test_outputs_larger_than_one_pass_are_covered_to_the_end(self):
        words = (1 << 22) + 5  # the scratch buffers hold 1 << 22 words
        x = torch.randn(words * 2)
        reference = output_digest.digest(x, self.key)
        self.assertEqual(output_digest.digest(x.clone(), self.key), reference)
        changed = x.clone()
        changed.view(torch.int32)[-3] ^= 1
        self.assertNotEqual(output_digest.digest(changed, self.key), reference)

    def test_shape_dtype_key_and_structure_are_committed(self):
        x = torch.arange(12, dtype=torch.float32)
        base = output_digest.digest(x, self.key)
        self.assertNotEqual(output_digest.digest(x.view(3, 4), self.key), base)
        self.assertNotEqual(output_digest.digest(x.view(torch.int32), self.key), base)
        self.assertNotEqual(output_digest.digest(x, self.key + 2), base)
        self.assertNotEqual(output_digest.digest((x, x), self.key), output_digest.digest((x,), self.key))
        self.assertNotEqual(output_digest.digest([x, 1], self.key), output_digest.digest([x, 2], self.key))

    def test_odd_tensors_are_digested(self):
        for value in (torch.zeros(0), torch.tensor(2.5), torch.ones(5, dtype=torch.bool),
                      torch.randn(9, dtype=torch.complex64), torch.randn(10)[3:], torch.randn(7).half()):
            text = output_digest.digest(value, self.key)
            self.assertEqual(len(text), 32)
            self.assertEqual(text, output_digest.digest(value.clone(), self.key))

    def test_fetched_outputs_are_checked_against_the_reply(self):
        outputs = [torch.randn(8), torch.randn(8), torch.randn(8)]
        reply = {"digests": [output_digest.digest(o, self.key) for o in outputs]}
        digests = output_digest.checked_digests(reply, 3)
        self.assertIsNone(output_digest.first_changed([outputs[0], outputs[2]], [0, 2], digests, self.key))
        repaired = outputs[2].clone()
        repaired[5] += 1
        self.assertEqual(output_digest.first_changed([outputs[0], repaired], [0, 2], digests, self.key), 2)

    def test_a_reply_without_one_digest_per_call_is_refused(self):
        for reply in ({}, {"digests": ["0" * 32]}, {"digests": [1, 2]}, {"digests": ["short", "0" * 32]}):
            self.assertIsNone(output_digest.checked_digests(reply, 2), reply)
            with self.assertRaises(HarnessError):
                output_digest.committed_digests(reply, 2)


if __name__ == "__main__":
    unittest.main()
