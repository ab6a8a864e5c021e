"""A parallelized step called inside JAX's transformations: `jax.jit`, `jax.grad`, `jax.vmap`,
`lax.scan`, a user's own jitted training loop around a parallelized model.

Its arguments are then tracers: values of known shape laid out nowhere yet. The program is traced
and partitioned on those shapes as for arrays, and runs as a nested jitted shard_map; the
enclosing computation lays the values out as the program takes them, as for a nested jax.jit.

Reverse-mode derivatives are partitioned programs too. JAX's own transposition of the program
is not used: the program runs with check_vma=False, where JAX cannot tell a replicated value from
a partial one, and its transposes of our collectives give wrong cotangents (a cumsum over a split
dim, a gather from a split table, a concat: off by up to 37 on unit-scale values) or none at all
(pmax). So the step's derivative is the step's VJP (`jax.vjp` of it, with the cotangents as
arguments) parallelized on the same mesh: primals laid out as the step takes them, cotangents as
its results leave, gradients laid out as their primals. Its program recomputes the forward, as
under `jax.checkpoint` (the forward program's activations are inside its shard_map, not ours to
keep). Being a parallelized step itself, the backward differentiates again the same way.
Forward mode (jax.jvp, jacfwd) is refused by JAX, as for any custom_vjp function.
"""
from __future__ import annotations

import numpy as np


def _inexact(x) -> bool:
    """Whether JAX differentiates a value of x's dtype (floats and complex; not integers, bools
    or PRNG keys). Python numbers never get here: the call makes them arrays first."""
    import jax.numpy as jnp
    return bool(jnp.issubdtype(x.dtype, jnp.inexact))


class Differentiable:
    """The custom_vjp form of one trace of a Parallelized step (see the module doc). Called with
    the traced argument leaves; returns the result leaves."""

    def __init__(self, par):
        import jax
        self.par = par
        self.run, self.fn, self.in_def = par._run, par._bound, par._treedef
        self.arg_placements = list(par.in_shardings.values())
        self.out_placements = list(par.out_shardings.values())
        self.out_avals = [jax.ShapeDtypeStruct(leaf.shape, leaf.dtype) for leaf in par._out_leaves]
        self.backward_step = None  # the VJP's Parallelized, made on the first backward pass

        @jax.custom_vjp
        def call(*leaves):
            return tuple(self.run(*leaves))

        def forward(*leaves):
            return tuple(self.run(*leaves)), tuple(leaves)

        call.defvjp(forward, self.backward)
        self.call = call

    def __call__(self, *leaves):
        import jax.numpy as jnp
        # Python numbers enter as weakly typed scalars: custom_vjp keeps JAX values as residuals
        return self.call(*[x if hasattr(x, "dtype") else jnp.asarray(x) for x in leaves])

    def backward(self, primals, cts):
        grads_of = [i for i, x in enumerate(primals) if _inexact(x)]
        with_ct = [j for j, aval in enumerate(self.out_avals) if _inexact(aval)]
        grads = [None] * len(primals)
        if grads_of and with_ct:
            if self.backward_step is None:
                self.backward_step = self._vjp_step(grads_of, with_ct)
            for i, g in zip(grads_of, self.backward_step(*primals, *[cts[j] for j in with_ct])):
                grads[i] = g
        return tuple(g if g is not None else _zero_cotangent(x) for g, x in zip(grads, primals))

    def _vjp_step(self, grads_of: list, with_ct: list):
        """The step's VJP, parallelized: (primal leaves..., cotangents of the inexact results...)
        -> the gradients of the inexact primal leaves."""
        import jax
        fn, in_def, n, out_avals = self.fn, self.in_def, len(self.arg_placements), self.out_avals

        def vjp_step(*args):
            primals, cts = list(args[:n]), args[n:]

            def of_inexact(*xs):
                full = list(primals)
                for i, x in zip(grads_of, xs):
                    full[i] = x
                return tuple(jax.tree_util.tree_leaves(fn(*jax.tree_util.tree_unflatten(in_def, full))))
            _, vjp = jax.vjp(of_inexact, *[primals[i] for i in grads_of])
            given = dict(zip(with_ct, cts))
            return vjp(tuple(given[j] if j in given else _zero_cotangent(a) for j, a in enumerate(out_avals)))

        vjp_step.__name__ = f"{getattr(self.par.fn, '__name__', 'step')}_vjp"
        par = self.par
        return type(par)(vjp_step, par.mesh,
                            tuple(self.arg_placements) + tuple(self.out_placements[j] for j in with_ct),
                            out_placements=tuple(self.arg_placements[i] for i in grads_of),
                            strategy=par.strategy)


def _zero_cotangent(x):
    """The zero cotangent of a value JAX does not differentiate (integers, bools, PRNG keys):
    float0 zeros of its shape."""
    import jax
    return np.zeros(np.shape(x), dtype=jax.dtypes.float0)
