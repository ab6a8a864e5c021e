"""Documented differences from Paddle 3.3.1 in the elementwise, reduction and scan ops.

Each is excused only where the simulator proves spmdkit right and Paddle wrong (or Paddle
rejected a call that has a right answer); see documented.py for the predicate helpers.
"""
from .documented import MERGE_CONFLICT, rejected, wrong

# Paddle's answer does not execute: a shard shape or value is off.
EXECUTION_FAILS = wrong(r"local \w+ (has shape|after reducing|is not its shard)|kernel fails on its shards")


def _absent(k):
    return lambda case, paddle: case.inputs[k] is None


def _both(*preds):
    return lambda case, paddle: all(p(case, paddle) for p in preds)


def _partial_sum_reduce(name):
    return (wrong(r"after reducing \{[^}]*'sum'"),
            f"Paddle marks a {name} reduction over a split dim partial SUM; a SUM of the shards' "
            f"{name}s is not their {name}")


def _whole_reduce(name):
    return (wrong(r"after reducing \{[^}]*'sum'"),
            f"Paddle keeps a split reduced dim and marks the output partial SUM, but no reduce type "
            f"combines shard {name}s into the {name}: the reduced dims must be whole")


DOCUMENTED = {
    "where": [
        (MERGE_CONFLICT, "Paddle raises when condition and x split one dim over different mesh dims; "
                         "spmdkit keeps the first"),
        (rejected(r"rank .* are not matched"), "Paddle requires condition to have the highest rank; "
                                               "numpy broadcasting does not"),
        (rejected(r"basic_string::substr"), "Paddle's where fails (basic_string::substr) when y has a "
                                            "higher rank than x"),
        (EXECUTION_FAILS, "Paddle splits size-1 (broadcast) dims of condition, x and y like full dims, "
                          "so the shards do not line up"),
    ],
    "fused_dropout_add": [
        (MERGE_CONFLICT, "Paddle raises when x and y split one dim over different mesh dims; spmdkit "
                         "keeps the first"),
        (lambda case, paddle: case.function == "forward" and EXECUTION_FAILS(case, paddle),
         "Paddle's forward returns x's and y's own layouts unmerged (and splits broadcast size-1 "
         "dims), so the shards of x, y and out need not line up"),
        (wrong(r"local seed_offset"), "Paddle's reverse echoes the given seed_offset layout; the "
                                      "[seed, offset] pair must be whole on every rank"),
    ],
    "swiglu": [
        (MERGE_CONFLICT, "Paddle raises when x and y split one dim over different mesh dims; spmdkit "
                         "keeps the first"),
        (_both(_absent(1), EXECUTION_FAILS), "without y, swiglu halves x's last dim into two "
                                             "operands; Paddle keeps that dim split, so the halves "
                                             "sit on different ranks"),
    ],
    "label_smooth": [
        (MERGE_CONFLICT, "Paddle raises when label and prior_dist split one dim over different mesh "
                         "dims; spmdkit keeps the first"),
        (_both(_absent(1), EXECUTION_FAILS), "without prior_dist the kernel divides epsilon by the "
                                             "class count; Paddle keeps the class dim split, so each "
                                             "rank divides by its shard's count"),
    ],
    "prod": [_partial_sum_reduce("product")],
    "any": [_partial_sum_reduce("any")],
    "all": [_partial_sum_reduce("all")],
    "frobenius_norm": [_whole_reduce("Frobenius norm")],
    "logsumexp": [
        _whole_reduce("log-sum-exp"),
        (wrong(r"has \d+ dims, the tensor has|local out has shape"),
         "Paddle ignores reduce_all=True and reduces only the listed axes, so its output has the wrong rank"),
    ],
    "p_norm": [
        (wrong(r"after reducing \{[^}]*'sum'"),
         "Paddle marks every p-norm over a split dim partial SUM; that is right only for p = 1 and "
         "p = 0 (inf needs MAX, -inf MIN, other orders whole reduced dims)"),
        (wrong(r"has \d+ dims, the tensor has|local out has shape"),
         "Paddle ignores asvector=True and reduces only `axis`, so its output has the wrong rank"),
    ],
    "argmax": [(wrong(r"has \d+ dims, the tensor has"),
                "with flatten=True and keepdims=False the index is 0-D; Paddle gives it one dim")],
    "argmin": [(wrong(r"has \d+ dims, the tensor has"),
                "with flatten=True and keepdims=False the index is 0-D; Paddle gives it one dim")],
    "cummax": [(MERGE_CONFLICT, "Paddle's grad rule raises when x, indices and out_grad split one dim "
                                "over different mesh dims; spmdkit keeps the first")],
    "cummin": [(MERGE_CONFLICT, "Paddle's grad rule raises when x, indices and out_grad split one dim "
                                "over different mesh dims; spmdkit keeps the first")],
    "topk": [(MERGE_CONFLICT, "Paddle's grad rule raises when x, indices and out_grad split one dim "
                              "over different mesh dims; spmdkit keeps the first")],
    "argsort": [(rejected(r"ArgSortGrad x dims_mapping\[\d+\]=\[[\d,]*\] should be equal to indices"),
                 "Paddle's grad rule rejects indices split otherwise than x; spmdkit reshards them to x's splits")],
    "nonzero": [(MERGE_CONFLICT, "Paddle raises on any input split over two or more mesh dims "
                                 "(it merges x with itself dim by dim); the output is whole anyway")],
}
