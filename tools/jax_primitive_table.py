"""Every JAX primitive of `jax.lax` with its sharding rule, or why it has none (docs/jax_primitives.md).

    python tools/jax_primitive_table.py            # print the table
    python tools/jax_primitive_table.py --write    # rewrite docs/jax_primitives.md
    python tools/jax_primitive_table.py --names    # the primitive names with / without a rule

The primitives are enumerated, not listed: every `Primitive` object in a module of
`jax._src.lax` or in `jax.lax`. A primitive has a rule when the registry holds `jax.<name>`;
the others are either handled by the importer without a rule (regions, calls, constraints) or
carry the reason given in NO_RULE below. test/test_jax_primitive_coverage.py checks that the
page is this script's output for the installed JAX and build, and that no primitive is unexplained.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "jax_primitives.md"

# handled by spmdkit.ir.import_jax without a rule of their own
IMPORTER = {
    "cond": "imported as `stablehlo.case`; its branches' ops have rules",
    "while": "imported as `stablehlo.while`; its regions' ops have rules",
    "scan": "imported as the while loop JAX would run (dynamic slices and updates)",
    "sharding_constraint": "imported as `sdy.sharding_constraint` (a constraint, not a computation)",
    "custom_linear_solve": "imported as its `solve` jaxpr (jnp.linalg.solve, inv), whose ops have rules",
}

_COLLECTIVE = ("a collective over named mesh axes: met only inside `shard_map` bodies, which run per device "
               "as written (manual axes); nothing to infer")
_LINALG = ("linear algebra on the trailing matrix dims that jnp.linalg's common functions do not emit; no rule "
           "yet (cholesky, triangular_solve, lu, eigh, qr, svd, ... have rules: rules_yaml/jax_linalg.yaml)")
_SUBPROGRAM = "carries a sub-program (a jaxpr param) that the importer does not open"
_INTERNAL = "internal to JAX's tracing (never in a jaxpr a user's model gives)"

NO_RULE = {
    **{p: _COLLECTIVE for p in (
        "all_gather", "all_gather_done", "all_gather_invariant", "all_gather_reduced", "all_gather_reduced_start",
        "all_gather_start", "all_to_all", "all_to_all_done", "all_to_all_start", "axis_index", "pbroadcast",
        "pbroadcast_done", "pbroadcast_start", "pmax", "pmin", "ppermute", "ppermute_done", "ppermute_start", "precv",
        "preduced", "psend", "psum", "psum_done", "psum_invariant", "psum_invariant_start", "psum_start",
        "ragged_all_to_all", "reduce_scatter", "reduce_scatter_done", "reduce_scatter_start", "unreduced_psum",
        "unreduced_psum_start", "unreduced_reduce_scatter", "unreduced_reduce_scatter_start",
        "vary_unreduced_cast_p")},
    **{p: _LINALG for p in (
        "cholesky_update", "eig", "geqp3", "hessenberg", "ormqr", "schur", "symmetric_product", "tridiagonal")},
    "approx_top_k": "TPU's approximate top-k (its result size depends on recall_target): no rule yet; exact "
                    "`top_k` has one",
    "scaled_dot": "block-scaled dot (fp8 / microscaling formats): no rule yet",
    "rng_uniform": "XLA's stateful RngUniform (deprecated); JAX's random functions use threefry2x32, which has one",
    "reduce": "a reduction with a custom body: " + _SUBPROGRAM + " (sum / max / min / prod / and / or / xor / "
              "argmax have their own primitives, with rules; `stablehlo.reduce` read from MLIR has one)",
    "reduce_window": "a window reduction with a custom body: " + _SUBPROGRAM + " (reduce_window_sum / max / min "
                     "have rules)",
    "select_and_scatter": "its select and scatter bodies are sub-programs; JAX's pooling grads emit "
                          "select_and_scatter_add, which has a rule",
    "composite": _SUBPROGRAM,
    "platform_index": "lax.platform_dependent's branch index, fixed by the compile platform: not read",
    "device_put": "a transfer of any number of arrays (placement, not computation): no rule",
    "after_all": "tokens order side effects: not tensors",
    "create_token": "tokens order side effects: not tensors",
    "eval_jaxpr": _INTERNAL,
    "dce_sink": _INTERNAL,
    "tie": _INTERNAL,
    "stage": _INTERNAL,
    "empty": _INTERNAL + " (an uninitialized buffer for its own loops)",
    "empty2": _INTERNAL + " (an uninitialized buffer for its own loops)",
    "from_edtype": "extended-dtype conversion: " + _INTERNAL,
    "to_edtype": "extended-dtype conversion: " + _INTERNAL,
}

# primitives outside jax.lax that models emit (dropout's PRNG, jit, custom derivatives)
OUTSIDE_LAX = [
    ("random_seed, random_split, random_fold_in, random_bits, random_wrap, random_unwrap",
     "importer: a key array is held as its uint32 data and each of these is replaced by the ops JAX lowers "
     "it to (python/spmdkit/ir/jax_keys.py)"),
    ("threefry2x32", "rule `jax.threefry2x32` (what random_bits becomes)"),
    ("iota_2x32_shape", "rule `jax.iota_2x32_shape` (random_bits' counters)"),
    ("jit / pjit, closed_call, remat, custom_jvp_call, custom_vjp_call", "importer: private functions called with "
     "`func.call` (or inlined)"),
    ("shard_map", "importer: `sdy.manual_computation`"),
]


def lax_primitives() -> dict[str, str]:
    """{primitive name: the module that defines it} for every Primitive reachable in jax.lax."""
    from jax._src import core
    import jax._src.lax as lax_pkg
    import jax.lax

    found: dict[str, str] = {}
    modules = [importlib.import_module(m.name) for m in pkgutil.walk_packages(lax_pkg.__path__, "jax._src.lax.")]
    for mod in [*modules, jax.lax]:
        for value in vars(mod).values():
            if isinstance(value, core.Primitive):
                home = getattr(mod, "__name__", "")
                if value.name not in found or found[value.name] == "jax.lax":
                    found[value.name] = home
    return dict(sorted(found.items()))


def rule_names() -> set[str]:
    sys.path.insert(0, str(ROOT / "python"))
    from spmdkit import core
    return set(core.list_spmd_rules())


def classify(names: set[str]) -> dict[str, tuple[str, str]]:
    """{primitive: (status, detail)}; status is `rule`, `importer`, `no rule` or `unexplained`."""
    out = {}
    for prim in lax_primitives():
        if f"jax.{prim}" in names:
            out[prim] = ("rule", f"`jax.{prim}`")
        elif prim in IMPORTER:
            out[prim] = ("importer", IMPORTER[prim])
        elif prim in NO_RULE:
            out[prim] = ("no rule", NO_RULE[prim])
        else:
            out[prim] = ("unexplained", "")
    return out


def render(names: set[str]) -> str:
    import jax
    rows = classify(names)
    mods = lax_primitives()
    count = {s: sum(1 for v in rows.values() if v[0] == s) for s in ("rule", "importer", "no rule", "unexplained")}
    lines = [
        "# Every `jax.lax` primitive and its sharding rule",
        "",
        f"Generated by `python tools/jax_primitive_table.py --write` from jax {jax.__version__} and this build:",
        "every `Primitive` object in a module of `jax._src.lax` or in `jax.lax`. A primitive `p` has a rule",
        "when the registry holds `jax.p` (rules_yaml/jax_*.yaml; docs/jax_stablehlo_rules.md gives its",
        "arguments); `spmdkit verify jax.p` proves it on simulated ranks. test/test_jax_primitive_coverage.py",
        "checks that this page is current and traces flax, equinox and optax models through",
        "`spmdkit.ir.import_jax`, requiring a rule for every op they emit.",
        "",
        f"{len(rows)} primitives: {count['rule']} with a rule, {count['importer']} handled by the importer, "
        f"{count['no rule']} without a rule (reasons below), {count['unexplained']} unexplained.",
        "",
        "| primitive | module | rule / how it is handled |",
        "|---|---|---|",
    ]
    for prim, (status, detail) in rows.items():
        shown = detail if status == "rule" else f"{status}: {detail}"
        lines.append(f"| `{prim}` | {mods[prim].replace('jax._src.lax.', 'lax.')} | {shown} |")
    lines += ["", "## Primitives outside `jax.lax` that models emit", "", "| primitive | how it is handled |",
              "|---|---|"]
    lines += [f"| {p} | {how} |" for p, how in OUTSIDE_LAX]
    lines += ["", BEFORE.strip(), ""]
    return "\n".join(lines)


# The registry of main before this table (commit 3abe211), for the record.
BEFORE = """
## Before (main at 3abe211)

Of the same 209 primitives, 80 had a rule and 129 had none (after: 130 and 79). Added since:
erfc, erf_inv, cbrt, acos, asin, atan, acosh, asinh, atanh, cosh, sinh, round, lgamma, digamma,
bessel_i0e, bessel_i1e, igamma, igammac, igamma_grad_a, random_gamma_grad, polygamma, zeta,
regularized_incomplete_beta, clz, population_count, real, imag, conj, complex, bitcast_convert_type,
nextafter, shift_left, shift_right_logical, shift_right_arithmetic, mulhi, eq_to, lt_to, le_to,
reduce_xor, top_k, tile, stack, unstack, rng_bit_generator, scatter, scatter-sub, scatter-mul,
scatter-min, scatter-max, select_and_gather_add, select_and_scatter_add; outside jax.lax,
threefry2x32 and iota_2x32_shape, and PRNG key arrays in the importer (dropout failed to import before:
`Cannot interpret 'key<fry>' as a data type`).
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help=f"rewrite {DOC.relative_to(ROOT)}")
    ap.add_argument("--names", action="store_true", help="print the names with and without a rule")
    args = ap.parse_args(argv)
    names = rule_names()
    if args.names:
        rows = classify(names)
        with_rule = [p for p, (s, _) in rows.items() if s == "rule"]
        without = [p for p, (s, _) in rows.items() if s != "rule"]
        print(f"with a rule ({len(with_rule)}): {', '.join(with_rule)}")
        print(f"without ({len(without)}): {', '.join(without)}")
        return 0
    text = render(names)
    if args.write:
        DOC.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
