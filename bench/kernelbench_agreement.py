#!/usr/bin/env python3
"""kwb's `kernelbench` and `rl` profiles against KernelBench's method on the same GPU, pair by
pair: verdicts, speed-ups and evaluations per GPU-minute (issue 16's evidence).

    bench/kernelbench_agreement.py --kwb build/gpu-host/app/cli/kwb --out DIR [--jobs 8]
        [--only NAME,NAME] [--stability NAME --repeats 20] [--phases prebuild,warm,measure,stability]

Phases (each appends to DIR/agreement.jsonl, the table is printed at the end):
- prebuild: every candidate's load_inline extension is built, JOBS at a time, into the folder
  kwb's pair mode builds it in ($KWB_CACHE_DIR/pairs/<hash of the candidate path>), which the
  KernelBench method then shares: both sides time prebuilt extensions.
- warm: one `kwb eval` per pair and profile, which times and caches eager and torch.compile
  for the reference (a rollout pays that once per task); its wall time is reported apart.
- measure: per pair, in turn, KernelBench's method in a fresh process (bench/kernelbench_method.py),
  `kwb eval --profile kernelbench` and `kwb eval --profile rl`, each through the warm `kwb serve`;
  wall time from the shell.
- stability: one pair evaluated REPEATS times in each profile; the milestone each time.
- census: the honest pairs in the kernelbench profile once more with KWB_KERNEL_CENSUS=off,
  to compare the candidate's time with and without the sealed kernel records.
- headstart: the honest pairs in the kernelbench profile with `--head-start-us` (default 100): a
  GPU spin before each timed call's start event, so the host's way to the candidate's first
  kernel is not in its time.
- throughput: every pair once per profile, CONCURRENCY `kwb eval` calls at a time through the one
  `kwb serve` (its timed stages still take turns on the GPU), and KernelBench's method over the
  same pairs one after another (it owns the GPU while it runs); evaluations per GPU-minute from
  each run's wall time.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROFILES = ("kernelbench", "rl")


def pair_dirs(root: str, only: set) -> list:
    names = sorted(n for n in os.listdir(root) if os.path.isfile(os.path.join(root, n, "candidate.py")))
    return [os.path.join(root, n) for n in names if not only or n in only]


def build_dir(cache: str, candidate: str) -> str:
    # kwb's pair mode: <cache>/pairs/<first 24 hex digits of sha256(candidate path)>.
    return os.path.join(cache, "pairs", hashlib.sha256(candidate.encode()).hexdigest()[:24])


def prebuild(pair: str, cache: str) -> dict:
    candidate = os.path.join(pair, "candidate.py")
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=build_dir(cache, candidate), MAX_JOBS="2")
    started = time.perf_counter()
    code = ("import importlib.util, sys; s = importlib.util.spec_from_file_location('c', sys.argv[1]); "
            "m = importlib.util.module_from_spec(s); s.loader.exec_module(m)")
    done = subprocess.run([sys.executable, "-c", code, candidate], env=env, capture_output=True, text=True)
    return {"phase": "prebuild", "pair": os.path.basename(pair), "ok": done.returncode == 0,
            "seconds": time.perf_counter() - started, "error": done.stderr[-400:] if done.returncode else ""}


def serve_with(kwb: str, concurrent: int) -> None:
    """Restarts the `kwb serve` daemon that `kwb eval` uses with room for CONCURRENT evaluations
    at once (a daemon started on demand takes a quarter of the cores, 4 on a 16-core host)."""
    def serving() -> int | None:
        done = subprocess.run([kwb, "serve", "status", "--json"], capture_output=True, text=True)
        try:
            return json.loads(done.stdout)["status"].get("concurrent_evaluations", -1)
        except (json.JSONDecodeError, KeyError):
            return None

    subprocess.run([kwb, "serve", "stop"], capture_output=True)
    for _ in range(100):
        if serving() is None:
            break
        time.sleep(0.1)
    subprocess.Popen([kwb, "serve", "--concurrent", str(concurrent), "--idle-exit", "300"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    for _ in range(100):
        if serving() == concurrent:
            return
        time.sleep(0.1)
    print(f"no kwb serve with {concurrent} evaluations at once answered (serving: {serving()})", flush=True)


def kwb_eval(kwb: str, pair: str, profile: str, env: dict | None = None, extra: tuple = ()) -> dict:
    started = time.perf_counter()
    done = subprocess.run([kwb, "eval", os.path.join(pair, "reference.py"), "--candidate",
                           os.path.join(pair, "candidate.py"), "--device", "cuda", "--profile", profile,
                           "--json", *extra], capture_output=True, text=True,
                          env=dict(os.environ, **env) if env else None)
    wall = time.perf_counter() - started
    try:
        r = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"wall_s": wall, "error": (done.stderr or done.stdout)[-600:]}
    t = r.get("timings", {})
    worst = max((o.get("max_abs_error", 0.0) for o in r.get("outputs", [])), default=None)
    return {"wall_s": wall, "total_s": r.get("total_seconds"), "correct": r.get("correct"),
            "reward": r.get("reward"), "verdict": r.get("verdict"),
            "speedup": r.get("speedup", {}).get("vs_eager"),
            "statistic": r.get("rules", {}).get("speedup_statistic"),
            "eager_mean_ms": t.get("eager", {}).get("mean_ms"),
            "eager_median_ms": t.get("eager", {}).get("median_ms"),
            "candidate_mean_ms": t.get("candidate", {}).get("mean_ms"),
            "candidate_median_ms": t.get("candidate", {}).get("median_ms"),
            "baselines_from_cache": t.get("baselines_from_cache"),
            "max_abs_error": worst,
            "flags": [f"{f.get('severity', '')[:1]}:{f.get('code')}" for f in r.get("flags", [])],
            "stages": {s["name"]: round(s["seconds"], 3) for s in r.get("stages", [])},
            # Of each stage's seconds, those spent waiting for the GPU's lane (shared or alone).
            "lane_waits": {s["name"]: round(s.get("lane_wait_seconds", 0.0)
                                            + s.get("alone_lane_wait_seconds", 0.0), 3)
                           for s in r.get("stages", [])},
            "servers_started": sum(1 for s in r.get("stages", []) if s.get("worker_started"))}


def kernelbench_method(pair: str, cache: str) -> dict:
    candidate = os.path.join(pair, "candidate.py")
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=build_dir(cache, candidate))
    started = time.perf_counter()
    done = subprocess.run([sys.executable, os.path.join(HERE, "kernelbench_method.py"),
                           os.path.join(pair, "reference.py"), candidate], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    try:
        r = json.loads(done.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return {"wall_s": wall, "error": done.stderr[-600:]}
    r["wall_s"] = wall
    return r


def failed_builds(log: str) -> set:
    return {e["pair"] for e in map(json.loads, open(log)) if e["phase"] == "prebuild" and not e["ok"]}


def record(out, entry: dict) -> None:
    out.write(json.dumps(entry) + "\n")
    out.flush()


def summarize(path: str) -> None:
    entries = [json.loads(line) for line in open(path)]
    measured = [e for e in entries if e["phase"] == "measure"]
    if measured:
        print("| pair | bug | KernelBench: correct, speed-up, max diff, wall s | kwb kernelbench: correct, reward, speed-up (mean), wall s | speed-up ratio | kwb rl: reward, speed-up (median), wall s |")
        print("|---|---|---|---|---|---|")
    agree = within = compared = 0
    walls = {"kernelbench-method": [], "kernelbench": [], "rl": []}
    ratios = []
    for e in measured:
        # A measure phase run with --measure-profiles kernelbench has no rl column.
        kb, kk, rl = e["kernelbench_method"], e["kernelbench"], e.get("rl", {})
        walls["kernelbench-method"].append(kb["wall_s"])
        walls["kernelbench"].append(kk["wall_s"])
        if "wall_s" in rl:
            walls["rl"].append(rl["wall_s"])
        same = kb.get("correct") == kk.get("correct")
        agree += same
        ratio = ""
        if kb.get("speedup") and kk.get("speedup") and kb.get("correct") and kk.get("correct"):
            r = kk["speedup"] / kb["speedup"]
            ratios.append(r)
            compared += 1
            within += abs(r - 1) <= 0.05
            ratio = f"{r:.3f}"

        def num(v, fmt="{:.3f}"):
            return fmt.format(v) if isinstance(v, (int, float)) else "-"
        print(f"| {e['pair']} | {e['expect'].get('kind', '') if e['expect'].get('bug') else ''} "
              f"| {kb.get('correct')}, {num(kb.get('speedup'))}, {num(kb.get('max_abs_diff'), '{:.1e}')}, {num(kb['wall_s'], '{:.1f}')} "
              f"| {kk.get('correct')}, {kk.get('reward')}, {num(kk.get('speedup'))}, {num(kk['wall_s'], '{:.1f}')} "
              f"| {ratio}{'' if same else ' VERDICTS DIFFER'} "
              f"| {rl.get('reward')}, {num(rl.get('speedup'))}, {num(rl.get('wall_s'), '{:.1f}')} |")
    if measured:
        print()
        print(f"verdicts identical: {agree} of {len(measured)}; speed-ups within 5%: {within} of {compared}"
              + (f" (ratio kwb/KernelBench median {statistics.median(ratios):.3f}, min {min(ratios):.3f}, "
                 f"max {max(ratios):.3f})" if ratios else ""))
        for name, values in walls.items():
            if not values:
                continue
            mean = statistics.fmean(values)
            print(f"{name}: mean wall {mean:.2f} s per evaluation, p50 {statistics.median(values):.2f} s "
                  f"-> {60 / mean:.1f} evaluations per GPU-minute")
    warm = [e for e in entries if e["phase"] == "warm"]
    if warm:
        for profile in PROFILES:
            values = [e["result"]["wall_s"] for e in warm if e["profile"] == profile]
            if values:
                print(f"first evaluation per pair ({profile}, times and caches eager and torch.compile): "
                      f"mean {statistics.fmean(values):.1f} s")
    builds = [e for e in entries if e["phase"] == "prebuild"]
    if builds:
        print(f"prebuild: {sum(b['ok'] for b in builds)} of {len(builds)} extensions built, "
              f"mean {statistics.fmean(b['seconds'] for b in builds):.1f} s each")
        for b in builds:
            if not b["ok"]:
                print(f"  {b['pair']}: {b['error'][-300:]}")
    # KernelBench's own rate, the yardstick: from its throughput row, else from the
    # measure phase's one-at-a-time walls.
    throughput = [e for e in entries if e["phase"] == "throughput"]
    method = [60 * e["pairs"] / e["wall_s"] for e in throughput if e["profile"] == "kernelbench-method"]
    if not method and walls["kernelbench-method"]:
        method = [60 / statistics.fmean(walls["kernelbench-method"])]
    for e in throughput:
        correct = sum(1 for c in e["correct"] if c)
        rate = 60 * e["pairs"] / e["wall_s"]
        against = (f", {rate / method[-1]:.2f}x KernelBench's method"
                   if method and e["profile"] != "kernelbench-method" else "")
        # Rows from before the count was kept say nothing about it.
        cached = (f"; baselines from the cache in {e['baselines_cached']} of {e['pairs']}"
                  if "baselines_cached" in e else "")
        print(f"throughput {e['profile']} at concurrency {e['concurrency']}: {e['pairs']} pairs in "
              f"{e['wall_s']:.1f} s -> {rate:.1f} evaluations per GPU-minute{against} "
              f"({correct} correct{cached})")
        if e.get("stage_seconds"):
            stages = ", ".join(f"{k} {v:.1f}" for k, v in e["stage_seconds"].items() if v >= 0.05)
            print(f"  stage seconds summed over the pairs: {stages}; warm servers started: "
                  f"{e.get('servers_started', 0)}")
        if e.get("lane_wait_seconds"):
            waits = ", ".join(f"{k} {v:.1f}" for k, v in e["lane_wait_seconds"].items() if v >= 0.05)
            print(f"  of which waiting for the GPU's lane: {waits}")
    census = {e["pair"]: e["result"] for e in entries if e["phase"] == "census"}
    for e in measured:
        off = census.get(e["pair"])
        kb, on = e["kernelbench_method"], e["kernelbench"]
        if off and kb.get("runtime_ms") and on.get("candidate_mean_ms") and off.get("candidate_mean_ms"):
            print(f"census {e['pair']}: candidate / KernelBench's {on['candidate_mean_ms'] / kb['runtime_ms']:.3f} "
                  f"with the records, {off['candidate_mean_ms'] / kb['runtime_ms']:.3f} without; "
                  f"speed-up ratio without {off['speedup'] / kb['speedup']:.3f}")
    head = {e["pair"]: e["result"] for e in entries if e["phase"] == "headstart"}
    for e in measured:
        spun = head.get(e["pair"])
        kb = e["kernelbench_method"]
        if spun and kb.get("runtime_ms") and spun.get("candidate_mean_ms") and spun.get("speedup"):
            print(f"head start {e['pair']}: candidate / KernelBench's {spun['candidate_mean_ms'] / kb['runtime_ms']:.3f}, "
                  f"eager / KernelBench's eager {spun['eager_mean_ms'] / kb['ref_runtime_ms']:.3f}, "
                  f"speed-up ratio {spun['speedup'] / kb['speedup']:.3f}"
                  if kb.get("ref_runtime_ms") and spun.get("eager_mean_ms") else
                  f"head start {e['pair']}: speed-up ratio {spun['speedup'] / kb['speedup']:.3f}")
    stable = [e for e in entries if e["phase"] == "stability"]
    for profile in sorted({e["profile"] for e in stable}):
        rewards = [e["result"].get("reward") for e in stable if e["profile"] == profile]
        speedups = [e["result"].get("speedup") or 0 for e in stable if e["profile"] == profile]
        top = max(set(rewards), key=rewards.count)
        print(f"stability {stable[0]['pair']} {profile}: rewards {rewards}; the same milestone "
              f"{rewards.count(top)} of {len(rewards)} times; speed-ups {min(speedups):.3f}-{max(speedups):.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kwb", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--only", default="")
    parser.add_argument("--phases", default="prebuild,warm,measure,stability")
    parser.add_argument("--stability", default="gelu_tanh")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--concurrency", default="4",
                        help="kwb eval calls at a time in the throughput phase; a list (4,8) measures each")
    parser.add_argument("--head-start-us", type=float, default=100.0, help="the headstart phase's spin")
    parser.add_argument("--profiles", default=",".join(PROFILES),
                        help="kwb's profiles in the warm and throughput phases")
    parser.add_argument("--measure-profiles", default="kernelbench,rl",
                        help="kwb's profiles beside KernelBench's method in the measure phase "
                             "(kernelbench alone saves a third of its time)")
    parser.add_argument("--warm-concurrency", type=int, default=1,
                        help="kwb eval calls at a time in the warm phase, through one kwb serve with "
                             "that much room: a first evaluation times its baselines with the GPU "
                             "to itself either way, and nothing in this phase is compared")
    parser.add_argument("--summary-only", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    log = os.path.join(args.out, "agreement.jsonl")
    if args.summary_only:
        summarize(log)
        return 0
    cache = os.environ.setdefault("KWB_CACHE_DIR", os.path.join(args.out, "cache"))
    pairs_root = os.path.join(args.out, "pairs")
    if not os.path.isdir(pairs_root):
        subprocess.run([sys.executable, os.path.join(HERE, "kernelbench_pairs.py"), pairs_root], check=True)
    pairs = pair_dirs(pairs_root, set(filter(None, args.only.split(","))))
    phases = args.phases.split(",")
    # A part cut short by its time limit is continued by the next call: what is logged is kept.
    done = set()
    if os.path.exists(log):
        for line in open(log):
            entry = json.loads(line)
            done.add((entry["phase"], entry["pair"], entry.get("profile", "")))
            if entry["phase"] == "throughput":
                done.add(("throughput", entry["profile"], entry["concurrency"]))
    with open(log, "a") as out:
        if "prebuild" in phases:
            started = time.perf_counter()
            # Only a failed build is tried again.
            built = {e[1] for e in done if e[0] == "prebuild"} - failed_builds(log)
            todo = [p for p in pairs if os.path.basename(p) not in built]
            with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
                for entry in pool.map(lambda p: prebuild(p, cache), todo):
                    record(out, entry)
            print(f"prebuilt {len(pairs)} extensions in {time.perf_counter() - started:.1f} s", flush=True)
        if "measure" in phases:
            for pair in pairs:
                if ("measure", os.path.basename(pair), "") in done:
                    continue
                expect = json.load(open(os.path.join(pair, "expect.json")))
                entry = {"phase": "measure", "pair": os.path.basename(pair), "expect": expect,
                         "kernelbench_method": kernelbench_method(pair, cache)}
                for profile in args.measure_profiles.split(","):
                    entry[profile] = kwb_eval(args.kwb, pair, profile)
                record(out, entry)
            print("measured", flush=True)
        if "warm" in phases:
            # After the measure phase: a warm phase with several evaluations at once times the
            # baselines of pairs not yet measured under their CPU load, and the measure phase
            # would then compare KernelBench's idle-host times with those cached ones (on
            # 2026-12-06, mean_rows' eager mean 65 us against KernelBench's 36 us).
            todo = [(pair, profile) for pair in pairs for profile in args.profiles.split(",")
                    if ("warm", os.path.basename(pair), profile) not in done]
            if args.warm_concurrency > 1 and todo:
                serve_with(args.kwb, args.warm_concurrency)
            with concurrent.futures.ThreadPoolExecutor(max(1, args.warm_concurrency)) as pool:
                for (pair, profile), result in zip(todo, pool.map(lambda t: kwb_eval(args.kwb, *t), todo)):
                    record(out, {"phase": "warm", "pair": os.path.basename(pair), "profile": profile,
                                 "result": result})
            print("warmed", flush=True)
        if "census" in phases:
            # The kernelbench profile again with the sealed kernel records off (a daemon of its
            # own: the variable is part of kwb serve's configuration), to see what the recording
            # adds to a candidate's timed calls against KernelBench's method.
            for pair in pairs:
                expect = json.load(open(os.path.join(pair, "expect.json")))
                if expect.get("bug") or ("census", os.path.basename(pair), "off") in done:
                    continue
                record(out, {"phase": "census", "pair": os.path.basename(pair), "profile": "off",
                             "result": kwb_eval(args.kwb, pair, "kernelbench",
                                                {"KWB_KERNEL_CENSUS": "off"})})
            print("census variant measured", flush=True)
        if "headstart" in phases:
            # The kernelbench profile again with a GPU spin before each timed call's start event
            # (kwb eval --head-start-us): whether the candidate's host-side way to its first
            # kernel, longer in its confined process than in KernelBench's, is in its times.
            for pair in pairs:
                expect = json.load(open(os.path.join(pair, "expect.json")))
                if expect.get("bug") or ("headstart", os.path.basename(pair), str(args.head_start_us)) in done:
                    continue
                record(out, {"phase": "headstart", "pair": os.path.basename(pair),
                             "profile": str(args.head_start_us),
                             "result": kwb_eval(args.kwb, pair, "kernelbench",
                                                extra=("--head-start-us", str(args.head_start_us)))})
            print("head-start variant measured", flush=True)
        if "stability" in phases:
            pair = os.path.join(pairs_root, args.stability)
            for profile in ("kernelbench", "rl", "cuda-agent"):
                # A cut run continues with the repeats it still lacks.
                had = sum(1 for line in open(log) if json.loads(line)["phase"] == "stability"
                          and json.loads(line).get("profile") == profile)
                for _ in range(max(0, args.repeats - had)):
                    record(out, {"phase": "stability", "pair": args.stability, "profile": profile,
                                 "result": kwb_eval(args.kwb, pair, profile)})
        if "throughput" in phases:
            # KernelBench's method runs one evaluation at a time in a fresh process, as the measure
            # phase already ran it over these pairs: its rate is read from those walls when every
            # pair has one, rather than paying for the same evaluations twice.
            measured = {e["pair"] for e in map(json.loads, open(log)) if e["phase"] == "measure"}
            runs = []
            if not all(os.path.basename(p) in measured for p in pairs):
                runs.append(("kernelbench-method", 1, lambda p: kernelbench_method(p, cache)))
            for concurrency in (int(c) for c in args.concurrency.split(",")):
                for profile in args.profiles.split(","):
                    runs.append((profile, concurrency,
                                 lambda p, profile=profile: kwb_eval(args.kwb, p, profile)))
            for name, concurrency, evaluate in runs:
                if ("throughput", name, concurrency) in done:
                    continue
                if name != "kernelbench-method":
                    serve_with(args.kwb, concurrency)
                started = time.perf_counter()
                with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
                    results = list(pool.map(evaluate, pairs))
                record(out, {"phase": "throughput", "pair": "*", "profile": name, "concurrency": concurrency,
                             "pairs": len(pairs), "wall_s": time.perf_counter() - started,
                             "correct": [r.get("correct") for r in results],
                             # Where the evaluations' time went (summed over the pairs; stages
                             # overlap across concurrent evaluations), and how many warm servers
                             # had to start.
                             "walls": [round(r.get("wall_s", 0.0), 2) for r in results],
                             "stage_seconds": {name: round(sum(r.get("stages", {}).get(name, 0.0)
                                                               for r in results), 2)
                                               for name in sorted({n for r in results
                                                                   for n in r.get("stages", {})})},
                             "lane_wait_seconds": {name: round(sum(r.get("lane_waits", {}).get(name, 0.0)
                                                                   for r in results), 2)
                                                   for name in sorted({n for r in results
                                                                       for n in r.get("lane_waits", {})})},
                             "servers_started": sum(r.get("servers_started", 0) for r in results),
                             # A profile's throughput with its baselines still to be timed is not
                             # the rate a rollout, whose episodes share them, would see.
                             "baselines_cached": sum(1 for r in results
                                                     if r.get("baselines_from_cache"))})
            print("throughput measured", flush=True)
    summarize(log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
