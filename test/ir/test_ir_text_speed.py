"""Import and print speed on a 10k-op module (measured on the 2-core dev machine: about 1 s to
import, of which 0.2 s is MLIR's parse and verify, and about 1 s to print). The bound is loose
because the machine is shared; the test is there to catch a blow-up, e.g. quadratic behaviour."""
import time

from spmdkit.ir import parse, print_program

N = 10_000


def big_module(n: int) -> str:
    lines = ['module {', '  sdy.mesh @m = <["x"=2, "y"=4]>',
             '  func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{"x"}, {}]>}) -> tensor<8x16xf32> {']
    prev = "%a"
    for i in range(n):
        k = i % 4
        if k == 0:
            lines.append(f"    %v{i} = stablehlo.add {prev}, %a : tensor<8x16xf32>")
        elif k == 1:
            lines.append(f'    %v{i} = "paddle.scale"({prev}) {{scale = 2.0 : f32, bias = 0.5 : f32, '
                         f'bias_after_scale = true}} : (tensor<8x16xf32>) -> tensor<8x16xf32>')
        elif k == 2:
            lines.append(f'    %v{i} = sdy.sharding_constraint {prev} <@m, [{{"x"}}, {{"y", ?}}]> : tensor<8x16xf32>')
        else:
            lines.append(f'    %v{i} = stablehlo.multiply {prev}, {prev} {{sdy.sharding = '
                         f'#sdy.sharding_per_value<[<@m, [{{"x"}}, {{}}]>]>}} : tensor<8x16xf32>')
        prev = f"%v{i}"
    lines += [f"    return {prev} : tensor<8x16xf32>", "  }", "}"]
    return "\n".join(lines)


def test_ten_thousand_ops_import_and_print(record_property):
    text = big_module(N)
    parse("")  # the MLIR context and the rule registry, once
    t0 = time.perf_counter()
    program = parse(text)
    t1 = time.perf_counter()
    printed = print_program(program)
    t2 = time.perf_counter()
    assert sum(1 for _ in program.walk()) == N + 1
    ops = program.main.body.ops
    assert ops[N - 1].operands == [ops[N - 2].result, ops[N - 2].result]  # the chain is intact
    assert printed.count("\n") == N + 6  # module, mesh, func, the ops, return, two braces
    record_property("import_s", round(t1 - t0, 3))
    record_property("print_s", round(t2 - t1, 3))
    print(f"10k ops: import {t1 - t0:.2f}s, print {t2 - t1:.2f}s")
    assert t1 - t0 < 20 and t2 - t1 < 20
