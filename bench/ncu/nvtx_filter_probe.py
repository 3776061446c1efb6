"""Which kernels Nsight Compute's NVTX filter selects when the range of interest has ranges
nested inside it, as the harness's profile stage marks its phases: "warmup candidate", then
"candidate" around each timed round with "iteration N" inside. Each phase launches a kernel of
its own shape, so the profiled grid sizes tell the phases apart. Run under ncu with a filter:
    ncu --nvtx --nvtx-include 'candidate/' python3 nvtx_filter_probe.py
"""
import torch

x = torch.randn(1 << 20, device="cuda")
setup = torch.zeros(1 << 16, device="cuda") + 1  # outside every range
torch.cuda.nvtx.range_push("warmup candidate")
w = x[: 1 << 18] * 2.0
torch.cuda.nvtx.range_pop()
torch.cuda.nvtx.range_push("candidate")
y = x[: 1 << 19] * 3.0  # directly in "candidate"
for i in range(2):
    torch.cuda.nvtx.range_push(f"iteration {i}")
    z = x * 4.0  # in "candidate" > "iteration i"
    torch.cuda.nvtx.range_pop()
torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print("probe done")
