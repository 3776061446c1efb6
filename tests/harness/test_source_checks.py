"""Static checks on candidate sources: each pattern is found, honest code is not flagged."""
import os
import tempfile
import types
import unittest

from kwb_harness.integrity.source_checks import check_sources

FP32_INPUTS = [{"type": "tensor", "shape": [4096, 2048], "dtype": "float32"}]
TASK = types.SimpleNamespace(batch_size=4096, dim=2048, eps=1e-5)

HEADER = "import torch\nimport torch.nn as nn\nimport cuda_extension\n\n"
HONEST = HEADER + (
    "class ModelNew(nn.Module):\n"
    "    def __init__(self, dim):\n"
    "        super().__init__()\n"
    "        self.scale = nn.Parameter(torch.randn(dim))\n"
    "        half = dim // 2  # a variable named half is not a dtype\n"
    "    def forward(self, x, y):\n"
    "        assert x.shape == y.shape\n"
    "        return cuda_extension.fused(x.contiguous(), y, self.scale)\n")


class SourceChecksTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.dir, "kernels"))

    def check(self, python, cuda=None):
        with open(os.path.join(self.dir, "model_new.py"), "w") as f:
            f.write(python)
        if cuda is not None:
            with open(os.path.join(self.dir, "kernels", "k.cu"), "w") as f:
                f.write(cuda)
        flags = check_sources(os.path.join(self.dir, "model_new.py"), self.dir, TASK, FP32_INPUTS)
        return {f["code"]: f["severity"] for f in flags}

    def test_sources_in_build_kwb_and_pycache_folders_are_read_but_build_outputs_are_not(self):
        # What builds and imports leave behind is no finding...
        self.write("build/cpu/build.ninja", "rule cxx\n  command = c++ -D__half\n")
        self.write("build/cpu/binding.o", b"\x7fELF\0\0", binary=True)
        self.write("build/cpu/cuda_extension.so", b"\x7fELF\0\0", binary=True)
        self.write("kernels/__pycache__/k.cpython-311.pyc", b"\x0d\x0d\0\0", binary=True)
        self.assertEqual(self.check(HONEST, "__global__ void k(const float* x) {}\n"), {})
        # ...but a header planted among them, or a module in a __pycache__ folder, is code.
        self.write("build/fast_math.h", "#include <cuda_fp16.h>\n__device__ __half h(float v);\n")
        self.assertEqual(self.check(HONEST)["precision_downgrade"], "strict")
        os.remove(os.path.join(self.dir, "build", "fast_math.h"))
        self.write("kernels/__pycache__/helper.py", "import threading\n")
        self.assertIn("kernels/__pycache__/helper.py", str(check_sources(
            os.path.join(self.dir, "model_new.py"), self.dir, TASK, FP32_INPUTS)))

    def test_the_fast_paths_build_outputs_are_not_read_but_an_include_of_one_is_strict(self):
        # The fast path's NVRTC build leaves a module (binary), its PTX and a manifest per kernel.
        self.write("build/kwb_kernels/gelu.cubin", b"\x7fELF\0\0", binary=True)
        self.write("build/kwb_kernels/gelu.ptx", ".version 8.8\n.target sm_90\ncvt.rn.f16.f32 %h1, %f1;\n")
        self.write("build/kwb_kernels/gelu.json", '{"kernels": ["gelu"]}\n')
        self.assertEqual(self.check(HONEST, "__global__ void k(const float* x) {}\n"), {})
        # The same names one folder deeper are no build output.
        self.write("build/kwb_kernels/sub/gelu.cubin", b"\x7fELF\0\0", binary=True)
        self.assertEqual(self.check(HONEST)["opaque_file"], "strict")
        os.remove(os.path.join(self.dir, "build", "kwb_kernels", "sub", "gelu.cubin"))
        # Text put where the engine's outputs go is not read, so a kernel including it is strict.
        flags = self.check(HONEST, '#include "../build/kwb_kernels/half_math.ptx"\n__global__ void k(const float* x) {}\n')
        self.assertEqual(flags.get("unchecked_include"), "strict")

    def test_counters_and_timeline_outputs_are_not_read_but_an_include_of_one_is_strict(self):
        # `kwb eval --counters` and `--timeline` leave ncu's binary report, its CSV pages (kernel
        # names such as at::native:: among them) and the timeline's records in build/.
        self.write("build/counters/2026-12-05T21-00-00Z/counters.ncu-rep", b"\0NCU\x01", binary=True)
        self.write("build/counters/2026-12-05T21-00-00Z/details.csv",
                   '"ID","Kernel Name"\n"0","void at::native::vectorized_elementwise_kernel"\n')
        self.write("build/counters/2026-12-05T21-00-00Z/raw.csv", "x" * (3 << 20))
        self.write("build/timelines/2026-12-05T21-00-00Z-profile.kwbtl.jsonl", '{"kind": "kernel"}\n' * 200000)
        self.assertEqual(self.check(HONEST, "__global__ void k(const float* x) {}\n"), {})
        # Other files there are read, as everywhere.
        self.write("build/counters/2026-12-05T21-00-00Z/helper.py", "import threading\n")
        self.assertIn("build/counters/2026-12-05T21-00-00Z/helper.py", str(check_sources(
            os.path.join(self.dir, "model_new.py"), self.dir, TASK, FP32_INPUTS)))
        os.remove(os.path.join(self.dir, "build", "counters", "2026-12-05T21-00-00Z", "helper.py"))
        flags = self.check(HONEST, '#include "../build/counters/2026-12-05T21-00-00Z/details.csv"\n'
                                   '__global__ void k(const float* x) {}\n')
        self.assertEqual(flags.get("unchecked_include"), "strict")

    def test_an_include_into_the_version_control_folder_is_strict(self):
        flags = self.check(HONEST, '#include "../.git/fp16.h"\n__global__ void k(const float* x) {}\n')
        self.assertEqual(flags.get("unchecked_include"), "strict")

    def test_honest_candidate_has_no_findings(self):
        kernel = "// __half in a comment is fine\n__global__ void k(const float* x) { int half = 1; }\n"
        self.assertEqual(self.check(HONEST, kernel), {})

    def test_patterns(self):
        cases = {
            "try:\n    import cuda_extension\nexcept ImportError:\n    cuda_extension = None\n": ("try_except_fallback", "warning"),
            HONEST.replace("return cuda_extension", "try:\n            return cuda_extension") + "        except Exception:\n            return x\n": ("try_except_fallback", "strict"),
            HEADER + "from model import Model\nclass ModelNew(Model):\n    pass\n": ("reference_model_used", "strict"),
            HEADER + "import threading\n": ("threading", "strict"),
            HEADER + "torch.sigmoid = lambda t: t\n": ("monkey_patching", "strict"),
            HEADER + "setattr(torch, 'relu', None)\n": ("monkey_patching", "strict"),
            HEADER + "def f(x):\n    return x.half()\n": ("precision_downgrade", "strict"),
            HEADER + "torch.backends.cuda.matmul.allow_tf32 = True\n": ("precision_downgrade", "strict"),
            HEADER + "from torch.utils._python_dispatch import _disable_current_modes\n": ("guard_evasion", "strict"),
            HEADER + "f = torch.compile(lambda x: x)\n": ("torch_compile_used", "strict"),
            HEADER + "s = torch.cuda.Stream()\n": ("stream_creation", "warning"),
            HEADER + "def f(x):\n    return x.reshape(4096, -1)\n": ("hardcoded_shape", "warning"),
            HEADER + "def f(x, c):\n    return c[x.data_ptr()]\n": ("input_identity_used", "warning"),
        }
        for source, (code, severity) in cases.items():
            with self.subTest(code=code, source=source[-60:]):
                self.assertEqual(self.check(source).get(code), severity)

    def test_cuda_sources(self):
        self.assertEqual(self.check(HONEST, "#include <cuda_fp16.h>\n__global__ void k(__half* x) {}\n")
                         .get("precision_downgrade"), "strict")
        self.assertEqual(self.check(HONEST, "#include <thread>\nvoid f() { std::thread t; }\n")
                         .get("threading"), "strict")
        self.assertEqual(self.check(HONEST, "void f() { cudaStream_t s; cudaStreamCreate(&s); }\n")
                         .get("stream_creation"), "warning")

    def test_threads_however_their_scope_is_spelled(self):
        # An outside round's torch fallback ran on `std :: thread` joined inside the call.
        for source in ("#include <future>\nvoid f() { std :: thread w([&] { g(); }); w.join(); }\n",
                       "void f() { std\n  ::\n  async(g); }\n",
                       "using namespace std;\nvoid f() { thread w([&] { g(); }); w.join(); }\n",
                       "using std::thread;\nvoid f() { thread w(g, 1); w.join(); }\n",
                       "using namespace std;\nvector<thread> pool;\n",
                       "using namespace std;\nvoid f() { auto r = async(launch::async, g); }\n",
                       # A review found these spellings unseen: the global scope, an alias of
                       # std, a braced temporary, a thread made from a qualified call.
                       "using namespace ::std;\nvoid f() { thread w(g); w.join(); }\n",
                       "namespace s = std;\nvoid f() { s::thread w(g); w.join(); }\n",
                       "namespace s = ::std;\nusing namespace s;\nvoid f() { thread w(g); w.join(); }\n",
                       "using namespace std;\nvoid f() { auto w = thread{g}; w.join(); }\n",
                       "using namespace std;\nvoid f() { thread(std::move(g)).join(); }\n"):
            self.assertEqual(self.check(HONEST, source).get("threading"), "strict", source)
        # Names that only start with thread, messages that mention it, and std's sub-namespaces
        # brought in are not threads (each was a strict false finding).
        for source in ("using namespace std;\nfloat thread_sum(float* a, int n);\n"
                       "void f(float* a) { thread_sum(a, 8); }\n",
                       "using namespace std;\nvoid f(int n) { TORCH_CHECK(n <= 1024, \"thread count (\", n, \")\"); }\n",
                       "using namespace std::chrono;\nstruct thread { int x; };\nvoid f() { thread t{1}; }\n"):
            self.assertIsNone(self.check(HONEST, source).get("threading"), source)
        # A kernel's variable called thread is not a thread, with or without `using namespace std`.
        honest = ("using namespace std;\n__global__ void k(float* x) {\n"
                  "    int thread = threadIdx.x;\n    x[thread] = max(x[thread], 0.0f);\n}\n")
        self.assertIsNone(self.check(HONEST, honest).get("threading"))
        self.assertIsNone(self.check(HONEST, "auto s = at :: cuda :: getCurrentCUDAStream();\n").get("torch_fallback"))
        self.assertEqual(self.check(HONEST, "auto r = at :: cpu :: add(x, y);\n").get("torch_fallback"), "strict")

    def test_processes_and_system_calls_by_any_door(self):
        # Helpers made with clone() outlived the judge's stop (an outside round, 2026-12-05).
        for source in ("void f() { clone(burn, stack, CLONE_VM | SIGCHLD, nullptr); }\n",
                       "void f() { ::vfork(); }\n", "void f() { posix_spawnp(&p, \"sh\", 0, 0, a, e); }\n",
                       "void f() { execve(\"/usr/bin/sleep\", a, e); }\n", "void f() { std::system(\"x\"); }\n",
                       "void f() { FILE* p = popen(\"x\", \"r\"); }\n"):
            self.assertEqual(self.check(HONEST, source).get("threading"), "strict", source)
        for source in ("void* f() { return dlsym(RTLD_DEFAULT, \"clo\" \"ne\"); }\n",
                       "void* f() { return dlopen(\"libc.so.6\", RTLD_NOW); }\n"):
            self.assertEqual(self.check(HONEST, source).get("dynamic_code"), "strict", source)
        # Tensors' copies and PTX are neither.
        honest = ("at::Tensor f(const at::Tensor& x) { auto y = x.clone(); auto z = at::clone(x);\n"
                  "  auto w = torch::clone(y); auto v = x->clone(); return y + z; }\n"
                  "__device__ float g(float a) { float r; asm(\"ex2.approx.f32 %0, %1;\" : \"=f\"(r) : \"f\"(a)); return r; }\n")
        findings = self.check(HONEST, honest)
        self.assertIsNone(findings.get("threading"))
        self.assertIsNone(findings.get("dynamic_code"))

    def test_call_names_inside_literals_are_text_not_calls(self):
        # Messages and PTX in strings name no call (a GPU review, 2026-12-05).
        honest = ('void f(int major) {\n'
                  '  TORCH_CHECK(major >= 9, "unsupported system (sm_", major, "0)");\n'
                  '  printf("popen(%d) execv( clone( dlopen fork(", major);\n'
                  '  const char* ptx = R"ptx(call system(x); std::thread t(g);)ptx";\n'
                  "  char quote = '\"'; char paren = '(';\n"
                  '}\n')
        findings = self.check(HONEST, honest)
        self.assertIsNone(findings.get("threading"), findings)
        self.assertIsNone(findings.get("dynamic_code"), findings)
        # A character literal holding a quote opens no string that could hide a real call.
        hidden = "void f() { char q = '\"'; system(\"sleep 9\"); char r = '\"'; }\n"
        self.assertEqual(self.check(HONEST, hidden).get("threading"), "strict")
        # A real call after a raw string is still found, on its own line.
        after_raw = 'const char* s = R"(\n"\n)";\nvoid* g() { return dlopen("libcuda.so.1", 0); }\n'
        self.assertEqual(self.check(HONEST, after_raw).get("dynamic_code"), "strict")

    def test_torch_kernels_called_past_the_dispatcher(self):
        for source in ("#include <ATen/CPUFunctions.h>\n", '#include "ATen/CUDAFunctions.h"\n',
                       "#include <ATen/ops/sigmoid_native.h>\n", "#include <ATen/ops/add_cuda_dispatch.h>\n",
                       "#include <ATen/RedispatchFunctions.h>\n",
                       "auto r = at::native::sigmoid(x);\n", "auto r = at::cpu::add(x, y);\n"):
            self.assertEqual(self.check(HONEST, source).get("torch_fallback"), "strict", source)
        honest = ("#include <ATen/Functions.h>\n#include <ATen/cuda/CUDAContext.h>\n"
                  "auto s = at::cuda::getCurrentCUDAStream();\nauto t = at::empty_like(x);\n")
        self.assertIsNone(self.check(HONEST, honest).get("torch_fallback"))

    def test_reduced_precision_without_a_type_name(self):
        spellings = [
            "typedef float narrow_t __attribute__((mode(HF)));\n",
            "typedef float narrow_t __attribute__((__mode__(__BF__)));\n",
            "std::float16_t v;\n",
            "auto v = 1.5f16;\n",
            'asm("cvt.rn.f16.f32 %0, %1;" : "=h"(b) : "f"(v));\n',
            'asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(b) : "f"(v), "f"(w));\n',
        ]
        for source in spellings:
            self.assertEqual(self.check(HONEST, "__device__ void f(float v) {\n" + source + "}\n")
                             .get("precision_downgrade"), "strict", source)
        honest = ('asm("add.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));\n'
                  "int mode(int HFx);\nfloat f16_scale = 2.0f;\nint model_id;\n")
        self.assertIsNone(self.check(HONEST, "__device__ void f() {\n" + honest + "}\n").get("precision_downgrade"))


    def write(self, relative, content, binary=False):
        path = os.path.join(self.dir, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb" if binary else "w") as f:
            f.write(content)
        return path

    def test_every_workspace_file_is_read_whatever_its_folder_or_name(self):
        # A helper module in a sub-folder, a header with an unusual extension, a file without one.
        self.write("helpers/deep/fallback.py", "import threading\n")
        self.write("kernels/sub/impl.inl", "#include <thread>\n")
        self.write("kernels/noext", "__half x;\n")
        found = self.check(HONEST)
        self.assertEqual(found.get("threading"), "strict")
        self.assertEqual(found.get("precision_downgrade"), "strict")

    def test_protected_build_and_cache_folders_are_not_the_candidates(self):
        self.write("utils/harness.py", "import threading\n")
        self.write("binding_extra.h", "#include <thread>\n")
        self.write("model.py", "import threading\n")
        self.write("build/cpu/cuda_extension.so", b"\x7fELF\0\0", binary=True)
        self.write("kernels/__pycache__/k.cpython-311.pyc", b"\0\0", binary=True)
        self.assertEqual(self.check(HONEST), {})

    def test_binary_files_and_links_out_of_the_workspace_are_strict(self):
        self.write("kernels/prebuilt.so", b"\x7fELF\0\1", binary=True)
        os.symlink("/etc", os.path.join(self.dir, "kernels", "etc"))
        found = self.check(HONEST)
        self.assertEqual(found.get("opaque_file"), "strict")
        self.assertEqual(found.get("link_outside_workspace"), "strict")

    def test_prose_counts_as_code_only_when_a_source_names_it(self):
        self.write("NOTES.md", "Try std::thread and __half later.\n")
        self.assertEqual(self.check(HONEST), {})
        loader = HONEST + "SOURCE = open('NOTES.md').read()\n"
        found = self.check(loader)
        self.assertEqual(found.get("threading"), "strict")

    def test_code_the_checks_cannot_read_is_strict(self):
        for source in (HEADER + "import marshal\n", HEADER + "exec(open('k').read())\n",
                       HEADER + "torch.ops.load_library('x.so')\n", HEADER + "import ctypes\n",
                       HEADER + "m = __import__('nu' + 'mpy')\n",
                       # A module found by a name built at run time (a pair's sibling, unnamed).
                       HEADER + "import pkgutil\nm = pkgutil.resolve_name('_'.join(['', 'lowp']))\n"):
            self.assertEqual(self.check(source).get("dynamic_code"), "strict", source)

    def test_cuda_sources_in_python_strings_are_read_like_cu_files(self):
        """A KernelBench candidate hands its CUDA code to load_inline as a string: the precision,
        fallback and thread checks read it where it is, with the file's line numbers."""
        inline = HEADER + (
            "from torch.utils.cpp_extension import load_inline\n"
            'cuda_src = """\n'
            "#include <cuda_fp16.h>\n"
            "__global__ void k(const float* x, float* y) {\n"
            "    __half h = __float2half(x[0]);\n"
            "    y[0] = __half2float(h);\n"
            "}\n"
            '"""\n')
        flags = [f for f in self.flags_of(inline) if f["code"] == "precision_downgrade"]
        self.assertEqual(len(flags), 1, flags)
        self.assertEqual(flags[0]["severity"], "strict")
        self.assertIn("model_new.py:9:", flags[0]["reason"])  # the line of the __half
        threaded = HEADER + "cpp_src = '#include <torch/extension.h>\\nvoid f() { std::thread t([]{}); }'\n"
        self.assertEqual(self.check(threaded).get("threading"), "strict")
        fallback = HEADER + "cpp_src = 'torch::Tensor f(torch::Tensor x) { return at::native::relu(x); }'\n"
        self.assertEqual(self.check(fallback).get("torch_fallback"), "strict")
        # Honest strings, and honest kernels in strings, stay clean (block sizes are no shapes).
        honest = HONEST + ("SRC = '__global__ void k(float* y) { y[threadIdx.x] = 2048.0f * 4096; }'\n"
                           "NAME = 'half of the work'\n")
        self.assertEqual(self.check(honest), {})

    def test_a_header_alone_computes_nothing_in_half(self):
        # Honest kernels include cuda_fp16.h by habit; only the 16-bit types and conversions count.
        kernel = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n__global__ void k(float* y) { y[0] = 1.0f; }\n"
        self.assertEqual(self.check(HONEST, kernel), {})
        self.assertEqual(self.check(HONEST, kernel + "__device__ float g(float v) { return __half2float(__float2half(v)); }\n")
                         .get("precision_downgrade"), "strict")

    def test_a_pair_checks_its_own_file_and_what_it_names(self):
        # A KernelBench pair shares its folder with its reference and other samples: their code and
        # data are not the candidate's. A file the candidate names is, and so is one that file names.
        def write(name, text):
            path = os.path.join(self.dir, name)
            with open(path, "w" if isinstance(text, str) else "wb") as f:
                f.write(text)
            return path
        write("reference.py", HEADER + "def get_inputs():\n    return [torch.randn(4096, 2048)]\n")
        write("sample_2.py", HEADER + "f = torch.compile(lambda x: x)\n")
        write("weights.bin", b"\0\1\2")
        candidate = write("sample_1.py", HONEST)
        def pair_flags():
            return {f["code"]: f["severity"]
                    for f in check_sources(candidate, self.dir, TASK, FP32_INPUTS, named_only=True)}
        self.assertEqual(pair_flags(), {})
        # The same folder read as a workspace holds all of it.
        whole = {f["code"] for f in check_sources(candidate, self.dir, TASK, FP32_INPUTS)}
        self.assertTrue({"torch_compile_used", "opaque_file", "hardcoded_shape"} <= whole, whole)
        # Named by load's sources, and the header that source includes.
        write("helper.cuh", "__device__ __half h;\n")
        write("op.cu", '#include "helper.cuh"\n__global__ void k(float* y) {}\n')
        candidate = write("sample_1.py", HONEST + "from torch.utils.cpp_extension import load\n"
                                                  "ext = load('op', sources=['op.cu'])\n")
        self.assertEqual(pair_flags().get("precision_downgrade"), "strict")
        # An imported sibling module, and an opaque file read by name.
        candidate = write("sample_1.py", HONEST + "import sample_2\nW = open('weights.bin', 'rb').read()\n")
        self.assertEqual(pair_flags().get("torch_compile_used"), "strict")
        self.assertEqual(pair_flags().get("opaque_file"), "strict")

    def flags_of(self, python):
        with open(os.path.join(self.dir, "model_new.py"), "w") as f:
            f.write(python)
        return check_sources(os.path.join(self.dir, "model_new.py"), self.dir, TASK, FP32_INPUTS)


if __name__ == "__main__":
    unittest.main()
