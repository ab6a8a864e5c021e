// Compiler-API constructs in one module: argument/result shardings, a sharding constraint with
// an open dim, a sharding group tying an input to an output, propagation barriers, and a
// manual computation whose body works on local shapes.
module @compiler_api {
  sdy.mesh @grid = <["rows"=4, "cols"=2]>
  sdy.mesh @line = <["dev"=8]>

  func.func @main(%input: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@grid, [{"rows", ?}, {}]>},
                  %weight: tensor<8x32xf32>)
      -> (tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@grid, [{}, {"cols"}]>}, tensor<16x8xf32>) {
    %prod = stablehlo.dot_general %input, %weight, contracting_dims = [1] x [0] : (tensor<16x8xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
    %pinned = sdy.sharding_constraint %prod <@grid, [{"rows"}, {?}]> : tensor<16x32xf32>
    %fwd = sdy.propagation_barrier %pinned allowed_direction=FORWARD : tensor<16x32xf32>
    %none = sdy.propagation_barrier %fwd allowed_direction=NONE : tensor<16x32xf32>
    %local = sdy.manual_computation(%none) in_shardings=[<@grid, [{"rows"}, {}]>] out_shardings=[<@grid, [{"rows"}, {}]>] manual_axes={"rows"} (%blk: tensor<4x32xf32>) {
      %sq = stablehlo.multiply %blk, %blk : tensor<4x32xf32>
      sdy.return %sq : tensor<4x32xf32>
    } : (tensor<16x32xf32>) -> tensor<16x32xf32>
    %zeros = stablehlo.constant dense<0.0> : tensor<16x8xf32>
    sdy.sharding_group %input group_id=7 : tensor<16x8xf32>
    sdy.sharding_group %zeros group_id=7 : tensor<16x8xf32>
    return %local, %zeros : tensor<16x32xf32>, tensor<16x8xf32>
  }
}
