"""`spmdkit train --example charlm ...`: run spmdkit.examples.charlm, plot, print the figures, the
sample and the checks (exit 1 if one fails)."""
from __future__ import annotations

import json

# The 300-step run's mean loss over its last 10 steps falls below this (nats per byte; a uniform
# guess is ln 256 = 5.55). Measured figures: docs/training.md.
LOSS_THRESHOLD_300 = 2.7
# Our loss against the one-device run's, relative: at each of the first 50 steps, and of each
# 25-step window's mean (rounding differences of differently ordered sums grow through training,
# so later single steps drift apart while the curves stay together; bf16 rounds more coarsely).
STEP_REL_TOL = {"f32": 1e-3, "bf16": 1e-1}
WINDOW_REL_TOL = {"f32": 1e-2, "bf16": 3e-2}


def checks(row: dict, fig: dict) -> dict[str, bool]:
    loss = row["loss"]
    out = {}
    if len(loss) >= 10:
        out["loss fell (mean of the last 10 < 0.8 x the first)"] = fig["final_mean10"] < 0.8 * loss[0]
    if row["ref_loss"]:
        tol, wtol = STEP_REL_TOL[row["precision"]], WINDOW_REL_TOL[row["precision"]]
        out[f"tracks one device: relative gap <= {tol:g} at each of the first 50 steps"] = \
            fig["max_rel_gap_first50"] <= tol
        out[f"tracks one device: 25-step means within {wtol:g} relative"] = fig["max_rel_gap_window25"] <= wtol
    if row["steps"] >= 300 and row["precision"] == "f32":
        out[f"last 10 losses average below {LOSS_THRESHOLD_300}"] = fig["final_mean10"] < LOSS_THRESHOLD_300
    return out


def main(args) -> int:
    from .charlm import plot, summary, train
    if args.save_every < 0 or args.sample_bytes < 0:
        raise SystemExit("--save-every and --sample-bytes must be >= 0")
    try:
        row = train(args.mesh, args.steps, args.precision, save_every=args.save_every, ckpt=args.ckpt,
                    resume=args.resume, reference=not args.no_reference, sample_bytes=args.sample_bytes)
    except ValueError as e:
        raise SystemExit(str(e)) from None
    fig = summary(row)
    if args.plot:
        print(f"wrote {plot(row, args.plot)}")
    marks = "  ".join(f"{i}: " + "/".join(f"{v:.3f}" for v in vals) for i, vals in fig["at_step"].items())
    print(f"loss by step (ours{'/one device' if row['ref_loss'] else ''}): {marks}")
    if row["ref_loss"]:
        print(f"largest gap to one device: {fig['max_gap']:.2e} ({fig['max_rel_gap']:.2e} relative; first 50 "
              f"steps {fig['max_rel_gap_first50']:.2e}; 25-step means {fig['max_rel_gap_window25']:.2e})")
    tps = row["tokens_per_s"]
    print(f"wall {row['wall_s']:.1f} s; ours {row['ms_per_step'] or float('nan'):.1f} ms/step, "
          f"{tps or float('nan'):,.0f} tokens/s; plan {row['plan_bytes'] or 0:,.0f} B/device/step")
    if row.get("sample"):
        print("sample:\n" + row["sample"])
    row["checks"] = checks(row, fig)
    for name, ok in row["checks"].items():
        print(f"[{'ok' if ok else 'FAIL'}] {name}")
    if args.json:
        print(json.dumps({**row, "summary": fig}))
    return 0 if all(row["checks"].values()) else 1
