"""The judge's side of the sealed kernel records (no GPU: the lines are written here the way the
injection library writes them; tests/timeline/test_cupti_injection.cpp checks the library's
side against the same known answer)."""
import json
import os
import threading
import time
import unittest

from kwb_harness.integrity import kernel_census
from kwb_harness.integrity.kernel_records import Kernel, KernelRecords, seal
from kwb_harness.isolation.remote_timing import SealedCensus

VECTOR_KEY = bytes(range(32))
VECTOR_RECORD = '{"t":"kernel","name":"k"}'


def kernel_line(name, start, end, stream=7):
    return json.dumps({"t": "kernel", "name": name, "stream": stream, "start": start, "end": end},
                      separators=(",", ":"))


class Library:
    """Writes sealed lines into a KernelRecords' pipe as the injection library would: the key
    read from the seal pipe, lines numbered from 0."""

    def __init__(self, records: KernelRecords):
        write_fd, seal_fd = records.child_descriptors()
        self.fd = os.dup(write_fd)
        self.key = os.read(seal_fd, 32)
        self.sequence = 0
        records.start_reading()

    def send(self, record: str, sequence=None, key=None) -> None:
        number = self.sequence if sequence is None else sequence
        os.write(self.fd, seal(key or self.key, number, record).encode())
        self.sequence = number + 1

    def raw(self, data: bytes) -> None:
        os.write(self.fd, data)

    def close(self) -> None:
        os.close(self.fd)


class SealTest(unittest.TestCase):
    def test_known_answers_shared_with_the_library(self):
        self.assertEqual(seal(VECTOR_KEY, 0, VECTOR_RECORD),
                         "0 d76337cb30c83819e74a8124f64c40be4f60cc5fb913ab61bb9c83d17248d393 " + VECTOR_RECORD + "\n")
        self.assertEqual(seal(VECTOR_KEY, 7, VECTOR_RECORD),
                         "7 1b4e10f744d1b1a902222b79cdb74142d26fa191dd42d0103be04957293c4968 " + VECTOR_RECORD + "\n")


class RecordsTest(unittest.TestCase):
    def setUp(self):
        self.records = KernelRecords("/nonexistent/libkwb_cupti_inject.so")
        self.library = Library(self.records)

    def tearDown(self):
        self.library.close()

    def flushed(self, at):
        self.library.send(json.dumps({"t": "flushed", "at": at}))

    def test_honest_lines_arrive_in_order_and_windows_select_them(self):
        self.library.send(json.dumps({"t": "header", "pid": 1}))
        self.assertTrue(self.records.wait_for_header(5))
        self.library.send(kernel_line("a", 100, 150))
        self.library.send(json.dumps({"t": "memcpy", "stream": 7, "start": 160, "end": 170, "kind": "DtoD"}))
        self.library.send(kernel_line("b", 300, 350))
        self.flushed(400)
        self.assertEqual(self.records.wait_complete_past(400, 5), "complete")
        self.assertIsNone(self.records.tampered)
        self.assertEqual([k.name for k in self.records.between(90, 200)], ["a", "Memcpy DtoD"])
        self.assertEqual([k.name for k in self.records.between(200, 400)], ["b"])
        self.assertEqual(self.records.between(90, 200)[1].transfer, True)

    def test_records_on_cuptis_clock_are_placed_on_the_judges(self):
        # CUPTI's clock runs 1000 ns behind CLOCK_MONOTONIC here
        self.library.send(kernel_line("a", 100, 150))
        self.library.send(json.dumps({"t": "flushed", "at": 2000, "cupti": 1000}))
        self.assertEqual(self.records.wait_complete_past(2000, 5), "complete")
        self.assertEqual(self.records.clock_offset(), 1000)
        self.assertEqual([k.name for k in self.records.between(1090, 1200)], ["a"])
        self.assertEqual(self.records.between(90, 200), [])

    def assert_tampered(self, fragment):
        self.flushed(10)  # a later honest line is not believed either
        self.assertNotEqual(self.records.wait_complete_past(10, 2), "complete")
        self.assertIsNotNone(self.records.tampered)
        self.assertIn(fragment, self.records.tampered)

    def test_a_line_with_another_key_is_tampering(self):
        self.library.send(kernel_line("scale_kernel", 1, 2), key=b"x" * 32)
        self.assert_tampered("seal")

    def test_an_unsealed_line_is_tampering(self):
        self.library.raw(b'{"t":"kernel","name":"scale_kernel"}\n')
        self.assert_tampered("without a seal")

    def test_a_dropped_line_is_tampering(self):
        self.library.send(kernel_line("a", 1, 2))
        self.library.send(kernel_line("at::native::sigmoid_kernel", 3, 4), sequence=2)
        self.assert_tampered("line 1 is missing")

    def test_a_replayed_line_is_tampering(self):
        self.library.send(kernel_line("scale_kernel", 1, 2))
        self.library.send(kernel_line("scale_kernel", 1, 2), sequence=0)
        self.assert_tampered("missing")

    def test_an_endless_line_is_tampering(self):
        self.library.raw(b"7" * ((1 << 20) + 70000))
        self.assert_tampered("longer")

    def test_no_flush_past_the_window_is_a_timeout(self):
        self.flushed(100)
        started = time.monotonic()
        self.assertEqual(self.records.wait_complete_past(200, 0.3), "stopped")
        self.assertGreaterEqual(time.monotonic() - started, 0.25)
        self.assertIsNone(self.records.tampered)

    def test_a_sequence_number_of_thousands_of_digits_is_tampering(self):
        self.library.raw(b"9" * 5000 + b" 00 {}\n")
        self.assert_tampered("without a seal")

    def test_a_closed_pipe_ends_the_wait_at_once(self):
        self.library.close()
        self.library.fd = os.open(os.devnull, os.O_WRONLY)
        started = time.monotonic()
        # the test's own descriptor was the last writer: the reader sees the end of the pipe
        self.assertEqual(self.records.wait_complete_past(200, 5), "stopped")
        self.assertLess(time.monotonic() - started, 4)

    def test_launches_without_records_are_incomplete_until_the_records_come(self):
        self.library.send(kernel_line("a", 1, 2))
        self.library.send(json.dumps({"t": "flushed", "at": 100, "launches": 2}))
        wait_for_flush(self.records, 100)
        self.assertEqual(self.records.wait_complete_past(100, 0.3), "incomplete")
        self.assertEqual(self.records.missing, 1)
        # the second kernel was still running at that flush: its record comes with the next one
        self.library.send(kernel_line("b", 3, 4))
        self.library.send(json.dumps({"t": "flushed", "at": 120, "launches": 2}))
        self.assertEqual(self.records.wait_complete_past(100, 5), "complete")


def wait_for_flush(records, at, patience_s=10.0):
    """Until the reader has taken in the "flushed" line at ``at`` (a loaded machine can be slow to
    schedule its thread)."""
    deadline = time.monotonic() + patience_s
    while records.flushed_at < at and time.monotonic() < deadline:
        records.wait_complete_past(at, 0.05)


def k(name, start, duration, stream=7, transfer=False):
    return Kernel(name, stream, start, start + duration, transfer)


class FromRecordsTest(unittest.TestCase):
    own = {"scale_residual_kernel"}
    rescale = "void at::native::vectorized_elementwise_kernel<4, MulFunctor>"
    digest = "void at::native::reduce_kernel<512, 1>"

    def harness(self, calls=4):
        kernels = []
        for i in range(calls):
            kernels += [k(self.rescale, 10 * i, 3), k(self.digest, 10 * i + 4, 2), k("Memcpy DtoD", 10 * i + 7, 1,
                                                                                     transfer=True)]
        return kernels

    def test_harness_kernels_come_out_by_count_and_the_candidates_stay(self):
        calls = 3
        window = []
        for i in range(calls):
            window += [k(self.rescale, 100 * i, 3), k("void scale_residual_kernel(float*)", 100 * i + 5, 20),
                       k(self.digest, 100 * i + 30, 2)]
        census = kernel_census.from_records(window, calls, self.harness(), 4, self.own)
        self.assertEqual(census["source"], "sealed kernel records")
        self.assertEqual([e["name"] for e in census["kernels"]], ["void scale_residual_kernel(float*)"])
        self.assertAlmostEqual(census["custom_us"], 0.020)
        self.assertEqual(census["torch_us"], 0.0)
        self.assertEqual(census["timing_streams"], [7])
        self.assertEqual(kernel_census.flags_for(census, 0.021), [])

    def test_a_torch_fallback_with_a_harness_kernels_name_is_counted_at_its_longest(self):
        calls = 2
        window = []
        for i in range(calls):
            # the candidate's own multiply (long) and the harness's rescale (short), same name
            window += [k(self.rescale, 100 * i, 3), k(self.rescale, 100 * i + 10, 40),
                       k("void scale_residual_kernel(float*)", 100 * i + 60, 1), k(self.digest, 100 * i + 70, 2)]
        census = kernel_census.from_records(window, calls, self.harness(), 4, self.own)
        self.assertAlmostEqual(census["torch_us"], 0.040)
        codes = {f["code"] for f in kernel_census.flags_for(census, 0.05)}
        self.assertIn("torch_kernels_dominate", codes)

    def test_a_side_stream_kernel_is_seen(self):
        window = [k(self.rescale, 0, 3), k("void scale_residual_kernel(float*)", 5, 20, stream=13),
                  k(self.digest, 30, 2)]
        census = kernel_census.from_records(window, 1, self.harness(), 4, self.own)
        self.assertAlmostEqual(census["side_stream_us"], 0.020)
        self.assertIn("side_stream", {f["code"] for f in kernel_census.flags_for(census, 0.03)})

    def test_no_kernels_of_its_own_is_no_kernels_ran(self):
        window = [k(self.rescale, 0, 3), k(self.digest, 30, 2), k("Memcpy DtoD", 40, 1, transfer=True)]
        census = kernel_census.from_records(window, 1, self.harness(), 4, self.own)
        self.assertIn("no_kernels_ran", {f["code"] for f in kernel_census.flags_for(census, 0.01)})


class SealedCensusTest(unittest.TestCase):
    def setUp(self):
        self.records = KernelRecords("/nonexistent/libkwb_cupti_inject.so")
        self.library = Library(self.records)
        self.census = SealedCensus(self.records)
        self.census.harness = (0, 50, 4)
        for i, line in enumerate(FromRecordsTest().harness()):
            self.library.send(kernel_line(line.name, line.start, line.end))

    def tearDown(self):
        self.library.close()

    def test_a_census_needs_the_flush_past_the_last_window(self):
        now = time.monotonic_ns()
        self.census.windows.append((now, now + 1000, 1))
        self.library.send(kernel_line("void scale_residual_kernel(float*)", now + 10, now + 30))
        threading.Timer(0.2, lambda: self.library.send(json.dumps({"t": "flushed", "at": now + 2000}))).start()
        census = self.census.take({"scale_residual_kernel"})
        self.assertTrue(census["available"], census)
        self.assertNotIn("flag", census)
        self.assertEqual(census["kernels"][0]["origin"], "custom")

    def test_the_candidates_process_is_asked_to_flush_before_the_wait(self):
        census, library = self.census, self.library
        now = time.monotonic_ns()
        census.windows.append((now, now + 1000, 1))

        class Process:
            asked = []

            def ask(self, message):
                self.asked.append(message["op"])
                library.send(kernel_line("void scale_residual_kernel(float*)", now + 10, now + 30))
                library.send(json.dumps({"t": "flushed", "at": now + 2000}))
                return {}, None

        process = Process()
        result = census.take({"scale_residual_kernel"}, process)
        self.assertEqual(process.asked, ["flush"])
        self.assertTrue(result["available"], result)

    def test_a_refused_flush_is_a_strict_finding(self):
        from kwb_harness.errors import CANDIDATE_RUN, HarnessError

        now = time.monotonic_ns()
        self.census.windows.append((now, now + 1000, 1))

        class Process:
            def ask(self, message):
                raise HarnessError(CANDIDATE_RUN, "no such request")

        result = self.census.take(set(), Process())
        self.assertEqual(result["flag"]["code"], "kernel_records_stopped")
        self.assertIn("no such request", result["flag"]["reason"])

    def test_records_that_stop_are_a_strict_finding(self):
        now = time.monotonic_ns()
        self.census.windows.append((now, now + 1000, 1))
        self.census.flush_patience_s = 0.2
        census = self.census.take(set())
        self.assertFalse(census["available"])
        self.assertEqual(census["flag"]["code"], "kernel_records_stopped")
        self.assertEqual(census["flag"]["severity"], "strict")

    def test_launches_left_without_records_are_a_strict_finding(self):
        now = time.monotonic_ns()
        self.census.windows.append((now, now + 1000, 1))
        self.library.send(json.dumps({"t": "flushed", "at": now + 2000, "launches": 20}))
        wait_for_flush(self.records, now + 2000)
        self.census.flush_patience_s = 0.2
        census = self.census.take(set())
        self.assertEqual(census["flag"]["code"], "kernel_records_incomplete")
        self.assertIn("8 kernel launch", census["flag"]["reason"])

    def test_a_forged_line_is_a_strict_finding(self):
        now = time.monotonic_ns()
        self.census.windows.append((now, now + 1000, 1))
        self.library.raw(b"0 00 " + kernel_line("scale_residual_kernel", now, now + 5).encode() + b"\n")
        census = self.census.take(set())
        self.assertEqual(census["flag"]["code"], "kernel_records_tampered")

    def test_every_calibrated_call_rescales_its_inputs_as_a_timed_call_does(self):
        import types

        import torch

        from kwb_harness.isolation.remote_timing import CANDIDATE_SALT
        from kwb_harness.timing.input_pool import InputPool

        task = types.SimpleNamespace(get_inputs=lambda: [torch.rand(16)])
        candidates_pool = InputPool(task, 3, "cpu", None, 1 << 20, CANDIDATE_SALT)
        judges_pool = InputPool(task, 3, "cpu", None, 1 << 20, CANDIDATE_SALT)
        self.assertGreater(len(candidates_pool), 2)

        class Process:
            """The candidate's process before the import: counts the rescales per batch."""
            batches = []
            standin = False

            def ask(self, message):
                if message["op"] == "standin":
                    self.standin = True
                elif message["op"] == "harness_calls":
                    assert self.standin, "a harness batch without the stand-in"
                    rescaled = 0
                    for source in message["inputs"]:
                        before = candidates_pool._next % len(candidates_pool)
                        was = candidates_pool._sets[before][0].clone()
                        now = candidates_pool.next(source["factor"])[0]
                        rescaled += not torch.equal(was, now)
                    self.batches.append((len(message["inputs"]), rescaled, message["last"]))
                    self.standin = self.standin and not message["last"]
                return {}, None

        self.library.send(json.dumps({"t": "header"}))
        process = Process()
        self.census.calibrate(process, judges_pool, types.SimpleNamespace(seed=3), calls=6)
        settle, window = process.batches
        self.assertEqual(settle, (len(candidates_pool), 0, False))
        self.assertEqual(window, (6, 6, True))
        self.assertEqual(self.census.harness[2], 6)
        # The judge's copy of the pool went through the same calls.
        self.assertEqual(judges_pool._next, candidates_pool._next)


if __name__ == "__main__":
    unittest.main()
