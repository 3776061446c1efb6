"""The fast-path runtime without a GPU: manifests, argument conversion and launch checks."""
import ctypes
import json
import os
import tempfile
import unittest

import torch

import kwb_kernels
from kwb_kernels import manifest, params
from kwb_kernels.launcher import KernelModule


def write_module(directory, stem, kernels, cubin=b"\x7fELF-not-really"):
    with open(os.path.join(directory, stem + ".json"), "w", encoding="utf-8") as handle:
        json.dump({"version": 1, "source": f"kernels/{stem}.cu", "arch": "sm_90",
                   "cubin": stem + ".cubin", "kernels": kernels}, handle)
    with open(os.path.join(directory, stem + ".cubin"), "wb") as handle:
        handle.write(cubin)


SAXPY = {"name": "saxpy", "symbol": "saxpy",
         "params": [{"type": "u64"}, {"type": "u64"}, {"type": "f32"}, {"type": "s32"}]}


class ConvertTest(unittest.TestCase):
    def test_scalars_take_the_declared_width(self):
        self.assertIsInstance(params.convert(3, {"type": "s32"}, "a", 0), ctypes.c_int32)
        self.assertEqual(params.convert(-1, {"type": "s64"}, "a", 0).value, -1)
        self.assertAlmostEqual(params.convert(2, {"type": "f32"}, "a", 0).value, 2.0)
        self.assertEqual(params.convert(True, {"type": "u8"}, "a", 0).value, 1)
        half = params.convert(1.0, {"type": "f16"}, "a", 0)
        self.assertEqual(half.value, 0x3C00)

    def test_refuses_what_c_would_not_take(self):
        with self.assertRaisesRegex(TypeError, "floats are not truncated"):
            params.convert(1.5, {"type": "s32"}, "kernel k, argument 2", 0)
        with self.assertRaisesRegex(TypeError, "does not fit a s32"):
            params.convert(1 << 40, {"type": "s32"}, "k", 0)
        with self.assertRaisesRegex(TypeError, "tensor was given for a f32"):
            params.convert(torch.zeros(1), {"type": "f32"}, "k", 0)
        with self.assertRaisesRegex(TypeError, "kernels need CUDA tensors"):
            params.convert(torch.zeros(1), {"type": "u64"}, "k", 0)
        with self.assertRaisesRegex(TypeError, "null pointer"):
            params.convert(None, {"type": "s32"}, "k", 0)

    def test_null_pointer_and_struct_by_value(self):
        self.assertEqual(params.convert(None, {"type": "u64"}, "k", 0).value, 0)
        struct = params.convert(b"\x01" * 12, {"type": "b8", "size": 12}, "k", 0)
        self.assertEqual(bytes(struct), b"\x01" * 12)
        with self.assertRaisesRegex(TypeError, "12 bytes"):
            params.convert(b"\x01" * 8, {"type": "b8", "size": 12}, "k", 0)

    def test_pack_checks_the_count_and_points_at_each_value(self):
        with self.assertRaisesRegex(TypeError, "takes 2 argument"):
            params.pack({"name": "k", "params": [{"type": "s32"}, {"type": "s32"}]}, (1,), 0)
        pointers, holders = params.pack({"name": "k", "params": [{"type": "s32"}, {"type": "f64"}]},
                                        (7, 0.5), 0)
        self.assertEqual(ctypes.cast(pointers[0], ctypes.POINTER(ctypes.c_int32)).contents.value, 7)
        self.assertEqual(ctypes.cast(pointers[1], ctypes.POINTER(ctypes.c_double)).contents.value, 0.5)
        self.assertEqual(len(holders), 2)

    def test_dims(self):
        self.assertEqual(params.dims(5, "grid"), (5, 1, 1))
        self.assertEqual(params.dims((2, 3), "grid"), (2, 3, 1))
        for bad in ((), (1, 2, 3, 4), 0, (1.0,), "4"):
            with self.assertRaises((TypeError, ValueError)):
                params.dims(bad, "grid")


class ModuleTest(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.mkdtemp()
        kwb_kernels.configure(self.directory)

    def tearDown(self):
        kwb_kernels.configure(None)

    def test_missing_module_says_to_compile(self):
        with self.assertRaisesRegex(manifest.ManifestError, "compile the workspace first"):
            kwb_kernels.load("absent")

    def test_malformed_manifests_are_refused(self):
        with open(os.path.join(self.directory, "bad.json"), "w") as handle:
            handle.write("{not json")
        with self.assertRaisesRegex(manifest.ManifestError, "cannot read"):
            kwb_kernels.load("bad")
        write_module(self.directory, "odd", [{"name": "k", "symbol": "k", "params": [{"type": "u128"}]}])
        with self.assertRaisesRegex(manifest.ManifestError, "unknown parameter"):
            kwb_kernels.load("odd")
        with self.assertRaisesRegex(ValueError, "not a kernel file name"):
            kwb_kernels.load("../escape")

    def test_kernels_are_attributes_with_signatures(self):
        write_module(self.directory, "axpy", [SAXPY])
        module = kwb_kernels.load("axpy.cu")
        self.assertIsInstance(module, KernelModule)
        self.assertEqual(module.kernels(), ["saxpy"])
        self.assertEqual(module.saxpy.params, ["u64", "u64", "f32", "s32"])
        self.assertEqual(module.arch, "sm_90")
        with self.assertRaisesRegex(AttributeError, "has no kernel 'missing'.*saxpy"):
            module.missing

    def test_launch_checks_the_block_before_touching_the_gpu(self):
        write_module(self.directory, "axpy", [SAXPY])
        kernel = kwb_kernels.load("axpy").saxpy
        with self.assertRaisesRegex(ValueError, "more than 1024 threads"):
            kernel(grid=1, block=(32, 64), args=(None, None, 1.0, 4))
        with self.assertRaisesRegex(ValueError, "shared_mem"):
            kernel(grid=1, block=32, args=(None, None, 1.0, 4), shared_mem=-1)

    @unittest.skipIf(torch.cuda.is_available(), "checks the no-GPU message")
    def test_launch_without_a_gpu_is_a_clear_error(self):
        write_module(self.directory, "axpy", [SAXPY])
        with self.assertRaisesRegex(RuntimeError, "need a CUDA GPU"):
            kwb_kernels.load("axpy").saxpy(grid=1, block=32, args=(None, None, 1.0, 4))

    def test_a_recompiled_module_is_reloaded(self):
        write_module(self.directory, "axpy", [SAXPY])
        first = kwb_kernels.load("axpy")
        os.utime(os.path.join(self.directory, "axpy.json"), ns=(1, 1))
        self.assertIsNot(kwb_kernels.load("axpy"), first)


if __name__ == "__main__":
    unittest.main()
