"""python3 -m utils.verification: compile, then compare ModelNew against Model."""

from .common import base_parser, compile_first, exit_with, print_error, request, run


def main() -> None:
    parser = base_parser("Check that ModelNew matches Model on several seeded inputs.")
    parser.add_argument("--checks", type=int, default=5)
    parser.add_argument("--atol", type=float, default=1e-2)
    parser.add_argument("--rtol", type=float, default=1e-2)
    args = parser.parse_args()

    ok, extension, device = compile_first(args)
    if not ok:
        exit_with(False)
    args.device = device
    data = request("verify", args, checks=args.checks, atol=args.atol, rtol=args.rtol,
                   extension_path=extension, shapes="default")
    result = run("verify", data, args)

    print()
    failed = {f["check"]: f for f in result.get("failures", [])}
    for check in range(result.get("checks_run", 0)):
        if check in failed:
            print(f"check {check}: FAIL [{failed[check]['kind']}]")
        else:
            print(f"check {check}: PASS")
    for out in result.get("outputs", []):
        print(f"  output {out['index']} {out['dtype']}{out['shape']}: max abs error "
              f"{out['max_abs_error']:.3g}, max rel error {out['max_rel_error']:.3g}")
    strict = [f for f in result.get("flags", []) if f.get("severity") == "strict"]
    if result["ok"] and result.get("correct") and strict:
        # Correct numbers are not enough: the evaluator would give this candidate -1.
        print("VERIFICATION FAILED: integrity flags (" + ", ".join(f["code"] for f in strict) + ")")
        exit_with(False)
    if result["ok"] and result.get("correct"):
        print(f"VERIFICATION PASSED ({result['checks_passed']}/{args.checks} checks, {device}, "
              f"atol={args.atol:g}, rtol={args.rtol:g})")
        exit_with(True)
    print("VERIFICATION FAILED")
    print_error(result)
    exit_with(False)


if __name__ == "__main__":
    main()
