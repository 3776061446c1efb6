"""Does the sealed kernel census cost the candidate more than it costs the judge's baselines?

The same honest bundled solutions are evaluated with the census off and on, alternating, so that
the machine's drift lands on both. Prints, per evaluation, the reward, the speed-ups and the three
medians; then, per task and mode, the median of each. A fair census moves eager and candidate
alike. Usage (GPU host): python3 bench/sealed_census_fairness.py --kwb build/gpu-host/app/cli/kwb
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from eval_bundled import REPO, flags, run_eval  # noqa: E402


def median_ms(record, variant):
    t = record.get("timings", {}).get(variant, {})
    return t.get("median_ms") if t.get("available") else None


def ms(value):
    return "%.4f" % value if value is not None else "n/a"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kwb", required=True)
    parser.add_argument("--tasks", default="01_gelu,07_scale_residual_add")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--iterations", default="40")
    parser.add_argument("--out")
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="kwb-fairness-")
    rows = []
    print("| task | census | reward | eager ms | compile ms | candidate ms | vs eager | flags |")
    print("|---|---|---|---|---|---|---|---|")
    for task_id in args.tasks.split(","):
        ws = os.path.join(root, task_id)
        subprocess.run([args.kwb, "workspace", "init", os.path.join(REPO, "resources", "tasks", task_id + ".py"),
                        ws, "--with-solution"], check=True, capture_output=True)
        run_eval(args.kwb, ws, ["--no-profile"])  # builds the extension once, untimed
        for repeat in range(args.repeats):
            for census in ("off", "sealed"):
                os.environ["KWB_KERNEL_CENSUS"] = census
                record = run_eval(args.kwb, ws, ["--iterations", args.iterations, "--refresh-baselines"])
                eager, compiled, candidate = (median_ms(record, v) for v in ("eager", "compile", "candidate"))
                ratio = eager / candidate if eager and candidate else float("nan")
                rows.append({"task": task_id, "census": census, "repeat": repeat, "reward": record.get("reward"),
                             "eager_ms": eager, "compile_ms": compiled, "candidate_ms": candidate,
                             "census_source": record.get("integrity", {}).get("kernels", {}).get("source"),
                             "flags": flags(record)})
                print("| %s | %s | %s | %s | %s | %s | %.2fx | %s |" % (
                    task_id, census, record.get("reward"), ms(eager), ms(compiled), ms(candidate), ratio, flags(record)),
                    flush=True)
    print()
    print("| task | census | eager median ms | candidate median ms | vs eager |")
    print("|---|---|---|---|---|")
    for task_id in args.tasks.split(","):
        for census in ("off", "sealed"):
            picked = [r for r in rows if r["task"] == task_id and r["census"] == census and r["candidate_ms"]]
            if not picked:
                continue
            eager = statistics.median(r["eager_ms"] for r in picked)
            candidate = statistics.median(r["candidate_ms"] for r in picked)
            print("| %s | %s | %.4f | %.4f | %.2fx |" % (task_id, census, eager, candidate, eager / candidate))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
