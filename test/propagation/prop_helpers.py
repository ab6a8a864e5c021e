"""Shared helpers for the propagation tests: build a Graph in Shardy's terms, check shardings."""
from spmdkit.propagation import Graph

DOT = "ik,kj->ij"          # stablehlo.dot_general contracting [1] x [0]
DOT_T = "ik,jk->ij"        # contracting [1] x [1]
BATCH_DOT = "bik,bkj->bij"  # batching [0] x [0], contracting [2] x [1]


def graph(**axes) -> Graph:
    g = Graph()
    g.mesh("mesh", **axes)
    return g


def dot(g, lhs, rhs, rule=DOT, out_sharding=None):
    shape = [g.shape(lhs)[0], g.shape(rhs)[1 if rule == DOT else 0]]
    if rule == BATCH_DOT:
        shape = [g.shape(lhs)[0], g.shape(lhs)[1], g.shape(rhs)[2]]
    out = g.value(shape, out_sharding, name="dot")
    return g.op("dot_general", rule, [lhs, rhs], [out], reduction="k")


def ew(g, *operands, out_sharding=None, name="add"):
    """An elementwise op (add, multiply, ...): one factor per dim shared by every tensor."""
    rank = len(g.shape(operands[0]))
    dims = "abcdefgh"[:rank]
    out = g.value(g.shape(operands[0]), out_sharding, name=name)
    return g.op(name, ",".join([dims] * len(operands)) + "->" + dims, list(operands), [out])


def expect(g, expected: dict):
    """expected maps value id -> Shardy text without the mesh ('[{"a", ?}, {?}]')."""
    got = {v: g.sharding(v) for v in expected}
    assert got == expected, "\n".join(f"{g.value_name(v)}: got {got[v]}, want {expected[v]}" for v in expected if got[v] != expected[v])
