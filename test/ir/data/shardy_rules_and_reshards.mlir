// What propagation and its export write back into a module: a custom call that carries its own
// sharding rule, explicit reshards, a named computation, and sdy collectives on sharded values.
module @after_propagation {
  sdy.mesh @mesh = <["x"=4, "y"=2]>

  func.func @main(%lhs: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                  %rhs: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
      -> (tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
    %mm = stablehlo.custom_call @my_matmul(%lhs, %rhs) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=32, k=16} reduction={k}>, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %moved = sdy.reshard %mm <@mesh, [{"x", "y"}, {}]> : tensor<8x32xf32>
    %back = sdy.all_gather [{"y"}, {}] %moved out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x32xf32>
    %cols = sdy.all_slice [{}, {"y"}] %back out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x32xf32>
    %named = sdy.named_computation<"epilogue">(%cols) (%v: tensor<8x32xf32>) {
      %e = stablehlo.exponential %v : tensor<8x32xf32>
      sdy.return %e : tensor<8x32xf32>
    } : (tensor<8x32xf32>) -> tensor<8x32xf32>
    return %named : tensor<8x32xf32>
  }
}
