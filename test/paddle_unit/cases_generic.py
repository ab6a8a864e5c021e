"""Paddle's tests of the generic rules (replicated, default_data_parallel) as cases."""
from .notation import Case

REP = "test_replicated_rule"
DDP = "test_default_data_parallel_rule"
X, Y = "[10,10,32,48]", "[32,48]"
O1, O2 = "[10,10,32,48]", "[10,32,48]"

# x's batch dim is 10, y's 32 (and out2's 10, out1's 10): no batch-parallel kernel runs on
# rows that do not correspond; spmdkit refuses unequal batch dims.
BATCH = dict(differs="the tensors' batch dims differ (10 and 32): the batch-parallel kernel refuses them", ours="raises")

CASES = [
    # replicated([x, y], {}): Paddle 3.3.1's binding refuses the dict its own test passes
    Case(REP, "replicated", "fwd", (2, 3), [["[64,32,10,10]{-1,1,0,-1}", "[32,48]{0,-1}"], {}], raises=True,
         note="the test's attribute dict is the pre-3.0 API: Paddle 3.3.1 refuses it as spmdkit does"),
    Case(REP, "replicated", "fwd", (2, 3), [["[64,32,10,10]{-1,1,0,-1}", "[32,48]{0,-1}"], ["[64,32,10,10]"]],
         ins=["{-1,-1,-1,-1}", "{-1,-1}"], outs=["{-1,-1,-1,-1}"],
         note="the same call with the output spec Paddle's binding accepts, given without a mapping"),
    # default_data_parallel(inputs, outputs); the Paddle test fetches it under the name
    # "unsqueeze" (a leftover: Paddle 3.3.1 fails that test), the cases call it by its name.
    Case(DDP, "default_data_parallel", "fwd", (2, 3), [[f"{X}{{-1,1,-1,-1}}", f"{Y}{{0,-1}}"], [f"{O1}{{-1,1,-1,-1}}", O2]], **BATCH,
         ins=["{0,-1,-1,-1}", "{0,-1}"], outs=["{0,-1,-1,-1}", "{0,-1,-1}"]),
    Case(DDP, "default_data_parallel", "fwd", (2, 3), [[f"{X}{{-1,1,-1,-1}}"], [f"{Y}{{0,-1}}", f"{O1}{{-1,1,-1,-1}}", O2]], **BATCH,
         ins=["{-1,-1,-1,-1}"], outs=["{-1,-1}", "{-1,-1,-1,-1}", "{-1,-1,-1}"]),
    Case(DDP, "default_data_parallel", "fwd", (2, 3), [[f"{X}{{0,-1,-1,-1}}", "[32,48,4,4]{1,-1,-1,-1}"], [f"{O1}{{-1,1,-1,-1}}", O2]],
         raises=True, note="the test sets a rank-4 mapping on its rank-2 y; the case gives y rank 4 so the batch conflict is what is refused"),
    Case(DDP, "default_data_parallel", "bwd", (2, 3), [[f"{X}{{-1,1,-1,-1}}", f"{Y}{{0,-1}}"], [f"{O1}{{-1,0,1,-1}}", f"{O2}{{0,1,-1}}"]], **BATCH,
         ins=["{0,-1,-1,-1}", "{0,-1}"], outs=["{0,-1,-1,-1}", "{0,-1,-1}"]),
    Case(DDP, "default_data_parallel", "bwd", (2, 3), [[f"{X}{{-1,1,-1,-1}}", f"{Y}{{0,-1}}"], [f"{O1}{{-1,0,1,-1}}", f"{O2}{{-1,1,-1}}"]], **BATCH,
         ins=["{-1,-1,-1,-1}", "{-1,-1}"], outs=["{-1,-1,-1,-1}", "{-1,-1,-1}"]),
]
