"""python3 -m utils.profiling: compile, then time eager PyTorch, torch.compile and ModelNew."""

from .common import base_parser, compile_first, exit_with, print_error, request, run


def main() -> None:
    parser = base_parser("Time Model (eager and torch.compile) against ModelNew.")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile baseline")
    parser.add_argument("--no-l2-flush", action="store_true")
    args = parser.parse_args()

    ok, extension, device = compile_first(args)
    if not ok:
        exit_with(False)
    args.device = device
    data = request("profile", args, warmup=args.warmup, iterations=args.iterations, rounds=args.rounds,
                   l2_flush=not args.no_l2_flush, include_baselines=True,
                   include_compile=not args.no_compile, extension_path=extension)
    result = run("profile", data, args)
    if not result["ok"]:
        print("PROFILING FAILED")
        print_error(result)
        exit_with(False)

    timings = result["timings"]
    print()
    for name in ("eager", "compile", "candidate"):
        t = timings.get(name)
        if t is None:
            continue
        if not t.get("available"):
            print(f"{name:>10}: unavailable ({t.get('reason', '').splitlines()[0] if t.get('reason') else ''})")
            continue
        print(f"{name:>10}: median {t['median_ms']:.4f} ms  (p10 {t['p10_ms']:.4f}, p90 {t['p90_ms']:.4f}, "
              f"{t['samples']} samples, {t['method']})")
    cand = timings.get("candidate", {})
    for base in ("eager", "compile"):
        ref = timings.get(base, {})
        if cand.get("available") and ref.get("available") and cand["median_ms"] > 0:
            print(f"speed-up vs {base}: {ref['median_ms'] / cand['median_ms']:.3f}x")
    if result.get("compile_time_s") is not None:
        print(f"torch.compile warm-up: {result['compile_time_s']:.1f}s")
    for flag in result.get("flags", []):
        print(f"flag [{flag['severity']}] {flag['code']}: {flag['reason']}")
    if any(flag.get("severity") == "strict" for flag in result.get("flags", [])):
        # The timing is not trusted: the evaluator would give this candidate -1.
        print("PROFILING FAILED: integrity flags")
        exit_with(False)
    print("Note: profiling checks a few timed outputs only; run python3 -m utils.verification too.")
    exit_with(True)


if __name__ == "__main__":
    main()
