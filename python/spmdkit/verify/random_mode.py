"""Random mode: random meshes (1-D to 3-D), shapes, placements and partial inputs; the rule
applied forward and in its second function (reverse or grad); every answer executed."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .backends import RuleCall, RuleRejected
from .cases import Case, fill_attrs
from .outcome import Tally, case_tags, counterexample
from .placement import Placement
from .samplers import SAMPLERS, Options, random_mesh, tensor
from .simulate import BadCase, Execution, verify_placements
from .specs import OpSpec


def functions_of(spec: OpSpec) -> list[str]:
    return ["forward"] + ({"reverse": ["reverse"], "grad": ["grad"]}.get(spec.second, []))


def kernel_spec(spec: OpSpec, function: str, specs: dict[str, OpSpec]) -> OpSpec:
    """The entry whose kernel executes: the op itself, or its grad entry for a grad rule."""
    return specs[spec.grad_op] if function == "grad" else spec


def draw_case(spec: OpSpec, function: str, specs, rng, mesh, opts: Options):
    """(Case, Execution) for one random call of `spec`'s `function`."""
    kspec = kernel_spec(spec, function, specs)
    sample = SAMPLERS[kspec.sampler](rng, mesh, opts)
    attrs = fill_attrs(kspec, sample.attrs, rng)
    ex = Execution(kspec, mesh, sample.inputs, attrs, rng)
    given = function == "reverse" or (function == "forward" and kspec.forward_outputs)
    outputs = [tensor(rng, s, mesh, opts) for s in ex.output_shapes] if given else []
    return Case(kspec.name, spec.name, function, tuple(mesh), sample.inputs, outputs, attrs), ex


def check_call(backend, case: Case, ex: Execution):
    """(ins, outs, Verdict) for the backend's answer to `case`; raises RuleRejected."""
    outputs = [case.outputs] if ex.spec.list_output and case.outputs else case.outputs
    call = RuleCall(case.rule, case.function, case.mesh_shape, case.inputs + outputs,
                    case.attrs, [len(s) for s in ex.output_shapes], n_inputs=len(case.inputs))
    ins, outs = backend.infer(call)
    if ex.spec.flat_results:
        ins = _nest_flat(case.inputs, ins)
    ins = with_unreturned(ex.spec, case.inputs, ins)
    # A list output (einsum_grad's x_grad) is one kernel result per element.
    outs = [q for o in outs for q in (o if isinstance(o, list) else [o])]
    return ins, outs, verify_placements(ex, ins, outs)


def _nest_flat(inputs: list, placements: list) -> list:
    """Placements nested like `inputs` from a flat answer (one per present tensor), as the
    generic rules give them; an answer already nested is returned as it is."""
    from .cases import flat_tensors
    if len(placements) != len(flat_tensors(inputs)) or any(isinstance(p, list) for p in placements):
        return placements
    it = iter(placements)
    return [[next(it) for _ in a] if isinstance(a, list) else (None if a is None else next(it)) for a in inputs]


def with_unreturned(spec: OpSpec, inputs: list, ins: list) -> list:
    """The inferred input placements with the inputs the rule takes but does not return (Paddle's
    grads leave out tensors they do not read) put back, whole: the kernel does not read them."""
    if not spec.unreturned or len(ins) != len(inputs) - len(spec.unreturned):
        return ins
    out, it = [], iter(ins)
    for pos, a in enumerate(inputs):
        if pos not in spec.unreturned:
            out.append(next(it))
        elif isinstance(a, list):
            out.append([Placement.replicated(len(t.shape)) for t in a])
        else:
            out.append(None if a is None else Placement.replicated(len(a.shape)))
    return out


def run_random(backend, spec: OpSpec, specs: dict[str, OpSpec], cases: int = 100, seed: int = 0,
               max_ranks: int = 8, opts: Options | None = None) -> list[Tally]:
    opts = opts or Options()
    opts = replace(opts, partial_types=tuple(t for t in opts.partial_types if t in backend.partial_types))
    tallies = []
    for function in functions_of(spec):
        tally = Tally(spec.name, function)
        for i in range(cases):
            rng = np.random.default_rng([seed, i, len(function)])
            mesh = random_mesh(rng, max_ranks)
            try:
                case, ex = draw_case(spec, function, specs, rng, mesh, opts)
            except BadCase as e:
                tally.notes.append(str(e))
                tally.skipped += 1
                continue
            try:
                ins, outs, verdict = check_call(backend, case, ex)
            except RuleRejected as e:
                tally.add_rejected(f"{case.describe(ex.spec)}\n    {e}")
                continue
            tally.cases += 1
            if verdict:
                tally.correct += 1
            else:
                tally.add_wrong(counterexample(case.describe(ex.spec), ins, outs, verdict.reason), case_tags(case))
        tallies.append(tally)
    return tallies
