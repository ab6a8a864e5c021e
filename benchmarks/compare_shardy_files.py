"""Our propagation against the live Shardy (jaxlib's) on Shardy's own lit-test files, function by
function, value by value: the measure of issue 20.

Each file of the folder is split on `// -----`; its RUN line names Shardy's passes
(`-sdy-basic-propagate`, `-sdy-aggressive-propagate`, `-sdy-op-priority-propagate`,
`-sdy-user-priority-propagate`, `-sdy-add-data-flow-edges`, `-sdy-sink-data-flow-edges`,
`-sdy-propagation-pipeline`, ...). Each chunk runs through the live Shardy with those passes and
through `spmdkit.propagate` in the matching mode; then each function's values are compared in walk
order (arguments, op results, nested ops, an edge's or constraint's own `sharding`, a
manual_computation's in/out shardings, function results; `?` and priorities ignored, a fully
replicated sharding equal to none). Our result must also print as a program MLIR's verifier takes.
A function agrees when every value does; one where spmdkit raises counts as a raise (with the
reason). Functions the live Shardy rejects (verifier errors the file expects) are left out.

    PYTHONPATH=python python benchmarks/compare_shardy_files.py /tmp/shardy_tests [-v]
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import warnings
from collections import Counter
from pathlib import Path

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(ROOT, "test"), os.path.join(ROOT, "test", "propagation")]

import shardy_oracle  # noqa: E402
from live_shardy_values import ours, pipeline, values_of  # noqa: E402
from spmdkit import ir  # noqa: E402

# RUN-line pass -> our options (None: a pass that is not a propagation strategy).
MODES = {
    "sdy-basic-propagate": dict(aggressive=False, op_priority=False, user_priority=False),
    "sdy-aggressive-propagate": dict(aggressive=True, op_priority=False, user_priority=False),
    "sdy-op-priority-propagate": dict(aggressive=True, op_priority=True, user_priority=False),
    "sdy-user-priority-propagate": dict(aggressive=True, op_priority=True, user_priority=True),
    "sdy-propagation-pipeline": dict(aggressive=True, op_priority=True, user_priority=True),
}


def run_passes(line: str) -> list[tuple[str, str]]:
    """[(pass name, options text)] of a RUN line, in order."""
    out = []
    for m in re.finditer(r'-(sdy-[\w-]+)(?:=("[^"]*"|\S+))?', line):
        out.append((m.group(1), (m.group(2) or "").strip('"')))
    return out


def mode_of(passes) -> dict:
    options = None
    for name, opts in passes:
        if name in MODES:
            options = dict(MODES[name])
            if "propagation-strategy=basic" in opts:
                options["aggressive"] = False
    if options is None:
        raise ValueError(f"no propagation pass among {passes}")
    return options


def pipeline_before_propagation() -> str:
    """The passes of jaxlib's `sdy-propagation-pipeline` that run before its propagation pass."""
    from jaxlib.mlir import passmanager
    with shardy_oracle._context():
        full = str(passmanager.PassManager.parse("builtin.module(sdy-propagation-pipeline)"))
    # sdy-save-module (a debugging dump) is not registered as a pass of its own
    return full[:full.index(",sdy-user-priority-propagate")].replace("sdy-save-module,", "") + ")"


def live_module(chunk: str, passes: str):
    from jaxlib.mlir import ir as mir, passmanager
    with shardy_oracle._context():
        module = mir.Module.parse(chunk)
        passmanager.PassManager.parse(passes).run(module.operation)
        return module


def live(chunk: str, passes: str) -> str:
    """The chunk as the live Shardy propagates it, printed (all its functions: @main may call others)."""
    module = live_module(chunk, passes)
    with shardy_oracle._context():
        return str(module)


def split_functions(module) -> dict[str, str]:
    """{function name: a module holding the meshes and that function} of a parsed module."""
    from jaxlib.mlir import ir as mir
    meshes, funcs = [], {}
    for op in module.body.operations:
        if op.operation.name == "sdy.mesh":
            meshes.append(str(op))
        elif op.operation.name == "func.func":
            funcs[mir.StringAttr(op.operation.attributes["sym_name"]).value] = str(op)
    return {name: "\n".join(meshes + [text]) for name, text in funcs.items()}


def parse_functions(chunk: str) -> dict[str, str]:
    from jaxlib.mlir import ir as mir
    with shardy_oracle._context():
        return split_functions(mir.Module.parse(chunk))


def _reason(e: BaseException) -> str:
    text = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    text = re.sub(r"line \d+, column \d+", "line N", text)
    return re.sub(r"%\w+|@\w+|\d+", "#", text)[:150]


def as_main(functions: dict[str, str], name: str) -> str:
    """A module of the meshes, function `name` renamed to @main and the functions it calls: the
    Shardy in jaxlib propagates a module from its main function (it aborts on a module without
    one), so each function takes its turn, alone (both engines see the same module)."""
    keep, todo = [], [name]
    while todo:
        f = todo.pop()
        if f in keep:
            continue
        keep.append(f)
        body = functions[f][functions[f].index("func.func"):]
        todo += [g for g in re.findall(r"@(\w+)", body) if g in functions and g not in keep]
    text = functions[name][:functions[name].index("func.func")]  # the meshes
    text += "\n".join(functions[f][functions[f].index("func.func"):] for f in keep)
    text = re.sub(r"@main\b", "@main_", text) if name != "main" else text
    return re.sub("@" + re.escape(name) + r"\b", "@main", text)


def compare_chunk(chunk: str, passes, stats: Counter, reasons: Counter, examples: list, verbose: bool):
    options = mode_of(passes)
    if any(name == "sdy-propagation-pipeline" for name, _ in passes):
        # its propagation part: both engines start from what the pipeline's passes before its
        # propagation make of the chunk (inline meshes lifted, constants split, data-flow edges
        # added, calls flattened into named computations, groups imported); the export
        # (reshards, sunk edges, calls again) is not propagation
        try:
            chunk = str(live_module(chunk, pipeline_before_propagation()))
        except Exception:  # noqa: BLE001 -- the file expects a diagnostic here
            stats["live rejects"] += 1
            return
        passes = [("sdy-user-priority-propagate", "")]
    passes_text = pipeline(passes)
    try:
        functions = parse_functions(chunk)
    except Exception:  # noqa: BLE001 -- the file expects a parse/verifier diagnostic here
        stats["live rejects"] += 1
        return
    for name in functions:
        text = as_main(functions, name)
        try:
            theirs = live(text, passes_text)
        except Exception:  # noqa: BLE001 -- the file expects a diagnostic here: nothing to compare
            stats["live rejects"] += 1
            continue
        stats["functions"] += 1
        try:
            program = ours(text, **options)
        except Exception as e:  # noqa: BLE001
            stats["raises"] += 1
            reasons[_reason(e)] += 1
            if verbose:
                print(f"  {name}: raises {_reason(e)}")
            continue
        try:
            reference = ir.parse(theirs, strict_ops=False).functions["main"]
        except Exception as e:  # noqa: BLE001
            stats["raises"] += 1  # we could not even read Shardy's answer (tokens, dynamic shapes)
            reasons["reading Shardy's output: " + _reason(e)] += 1
            continue
        a, b = values_of(program.functions["main"]), values_of(reference)
        if len(a) != len(b):
            stats["differ"] += 1
            examples.append((name, "walks differ", len(a), len(b)))
            if verbose:
                print(f"  {name}: walks differ")
            continue
        differ = [(la, x, y) for (la, x), (_, y) in zip(a, b) if x != y]
        stats["values"] += len(a)
        stats["values differ"] += len(differ)
        if differ:
            stats["differ"] += 1
            examples.append((name, differ[:3]))
            if verbose:
                print(f"  {name}: {differ[:4]}")
        else:
            stats["agree"] += 1


def main() -> None:
    from spmdkit.ir.group_conflicts import ShardingGroupConflictWarning
    warnings.simplefilter("ignore", ShardingGroupConflictWarning)  # expected: Shardy warns there too
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    total = Counter()
    all_reasons = Counter()
    rows = []
    for path in sorted(Path(args.folder).glob("*.mlir")):
        text = path.read_text()
        run = next((line for line in text.splitlines() if line.startswith("// RUN:")), "")
        passes = run_passes(run)
        try:
            mode_of(passes)
        except ValueError:
            continue
        stats, reasons, examples = Counter(), Counter(), []
        if args.verbose:
            print(path.name)
        for chunk in re.split(r"^// -----.*$", text, flags=re.M):
            if "func.func" in chunk:
                compare_chunk(chunk, passes, stats, reasons, examples, args.verbose)
        rows.append((path.stem, stats))
        total.update(stats)
        all_reasons.update(reasons)
    print("| file | functions | agree | differ | spmdkit raises | values agree |")
    print("|---|---|---|---|---|---|")
    for name, s in rows + [("total", total)]:
        print(f"| {name} | {s['functions']} | {s['agree']} | {s['differ']} | {s['raises']} | "
              f"{s['values'] - s['values differ']} of {s['values']} |")
    if total["live rejects"]:
        print(f"(left out: {total['live rejects']} functions the live Shardy rejects)")
    print("\nspmdkit raises:")
    for reason, n in all_reasons.most_common():
        print(f"  {n} x {reason}")


if __name__ == "__main__":
    main()
