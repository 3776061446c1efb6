"""python3 -m utils.compile: build the workspace extension and report diagnostics."""

from .common import base_parser, exit_with, print_compile_failure, request, run


def main() -> None:
    args = base_parser("Compile kernels/ and binding.cpp into cuda_extension.").parse_args()
    data = request("compile", args, arch=args.arch, extra_cflags=[], extra_cuda_cflags=[], verbose=args.verbose)
    result = run("compile", data, args)
    if not result["ok"]:
        print_compile_failure(result)
        exit_with(False)
    if result.get("skipped"):
        print("Nothing to compile: no kernel sources in kernels/.")
        exit_with(True)
    warnings = [d for d in result.get("diagnostics", []) if d["severity"] == "warning"]
    for diag in warnings[:20]:
        print(f"  {diag['file']}:{diag['line']}: warning: {diag['message']}")
    how = "cache hit" if result.get("cache_hit") else (
        "recompiled " + (", ".join(result.get("compiled_files") or []) or "nothing"))
    print(f"COMPILE OK ({data['device']}, {how}, {len(warnings)} warning(s), {result['elapsed_s']:.1f}s)")
    print(f"  module: {result.get('extension_path')}")
    exit_with(True)


if __name__ == "__main__":
    main()
