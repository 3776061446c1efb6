#!/usr/bin/env python3
"""Prints, per task of an eval_bundled.py JSON file, what the judge's evidence said on the GPU:
the candidate's CUDA-event median against the kernel census's GPU time per call (the
timing_missed_work rule compares the two), the judge's clock (unexplained against allowed) and
the judge's own costs per call (timer, output digest), read from the profile stage's log.

    python3 bench/census_vs_events.py results.json [label]
"""
import json
import re
import sys


def profile_log(record):
    for stage in record.get("stages", []):
        if stage.get("name") == "profile":
            return stage.get("log") or stage.get("output") or ""
    return ""


def main():
    records = json.load(open(sys.argv[1]))
    label = sys.argv[2] if len(sys.argv) > 2 else ""
    print(f"| run | task | reward | flags | events median ms | census busy ms/call | streams | "
          f"judge's clock unexplained / allowed ms | timer ms/call | digest ms/call |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for entry in records:
        r = entry["first"]
        integrity = r.get("integrity", {})
        kernels = integrity.get("kernels", {}) if isinstance(integrity.get("kernels"), dict) else {}
        compute = sum(kernels.get(k, 0.0) for k in ("custom_us", "library_us", "torch_us", "other_us"))
        streams = len({s for k in kernels.get("kernels", []) for s in k.get("streams", [])}) or 1
        external = integrity.get("external_timing", {})
        calibration = re.search(r"judge's clock, per call: timer ([\d.]+) ms, output digest ([\d.]+) ms",
                                profile_log(r))
        flags = ", ".join(f"{f.get('severity', '?')[0]}:{f.get('code')}" for f in r.get("flags", []))
        median = r.get("timings", {}).get("candidate", {}).get("median_ms")
        print(f"| {label} | {entry['task']} | {r.get('reward')} | {flags} | "
              f"{median if median is None else round(median, 4)} | {compute / 1e3 / streams:.4f} | {streams} | "
              f"{external.get('unexplained_ms', float('nan')):.2f} / {external.get('allowed_ms', float('nan')):.2f} | "
              f"{calibration.group(1) if calibration else '?'} | {calibration.group(2) if calibration else '?'} |")


if __name__ == "__main__":
    main()
