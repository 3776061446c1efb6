"""GPU clocks and temperature through NVML, read before and after the timed loop.

A GPU that throttles (power or heat) or changes clocks in the middle of a run makes the
variants timed late look slower. NVML is loaded with ctypes from the driver's
libnvidia-ml.so.1, so nothing needs installing; where it is missing the readings are
reported as unavailable.
"""

import ctypes

_NVML_CLOCK_SM = 1
_NVML_CLOCK_MEM = 2
_NVML_TEMPERATURE_GPU = 0
# Throttle reasons that mean "slowed down", as opposed to idle or an application clock cap.
_SLOWDOWN_REASONS = {
    0x4: "SW power cap", 0x8: "HW slowdown", 0x20: "SW thermal slowdown",
    0x40: "HW thermal slowdown", 0x80: "HW power brake",
}


class GpuMonitor:
    def __init__(self, device_index: int = 0):
        self._nvml = None
        self._handle = None
        self.error = ""
        try:
            nvml = ctypes.CDLL("libnvidia-ml.so.1")
            if nvml.nvmlInit_v2() != 0:
                raise OSError("nvmlInit failed")
            handle = ctypes.c_void_p()
            # NVML's order is PCI order, like CUDA's unless CUDA_DEVICE_ORDER says otherwise;
            # the UUID pins the same device either way.
            uuid = self._cuda_uuid(device_index)
            if uuid:
                status = nvml.nvmlDeviceGetHandleByUUID(uuid.encode(), ctypes.byref(handle))
            else:
                status = nvml.nvmlDeviceGetHandleByIndex_v2(device_index, ctypes.byref(handle))
            if status != 0:
                raise OSError(f"no NVML handle (status {status})")
            self._nvml, self._handle = nvml, handle
        except (OSError, AttributeError) as exc:
            self.error = f"NVML unavailable: {exc}"

    @staticmethod
    def _cuda_uuid(index: int) -> str:
        try:
            import torch

            uuid = str(torch.cuda.get_device_properties(index).uuid)
            return uuid if uuid.startswith("GPU-") else "GPU-" + uuid
        except Exception:
            return ""

    def read(self) -> dict:
        if self._nvml is None:
            return {"available": False, "reason": self.error}
        value = ctypes.c_uint()
        reading = {"available": True}
        for key, call, arg in (("sm_clock_mhz", "nvmlDeviceGetClockInfo", _NVML_CLOCK_SM),
                               ("memory_clock_mhz", "nvmlDeviceGetClockInfo", _NVML_CLOCK_MEM),
                               ("temperature_c", "nvmlDeviceGetTemperature", _NVML_TEMPERATURE_GPU)):
            if getattr(self._nvml, call)(self._handle, arg, ctypes.byref(value)) == 0:
                reading[key] = int(value.value)
        reasons = ctypes.c_ulonglong()
        if self._nvml.nvmlDeviceGetCurrentClocksThrottleReasons(self._handle, ctypes.byref(reasons)) == 0:
            reading["slowdown"] = [text for bit, text in _SLOWDOWN_REASONS.items() if reasons.value & bit]
        return reading


def drift_flag(before: dict, after: dict) -> dict | None:
    if not before.get("available") or not after.get("available"):
        return None
    problems = []
    b, a = before.get("sm_clock_mhz"), after.get("sm_clock_mhz")
    if b and a and abs(a - b) / b > 0.05:
        problems.append(f"SM clock {b} -> {a} MHz")
    tb, ta = before.get("temperature_c"), after.get("temperature_c")
    if tb is not None and ta is not None and ta - tb >= 10:
        problems.append(f"temperature {tb} -> {ta} C")
    slow = sorted(set(before.get("slowdown", [])) | set(after.get("slowdown", [])))
    if slow:
        problems.append("slowdown: " + ", ".join(slow))
    if not problems:
        return None
    return {"code": "gpu_state_changed", "severity": "warning",
            "reason": "the GPU changed during timing (" + "; ".join(problems) + "); timings may not compare"}
