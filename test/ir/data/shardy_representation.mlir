// The sharding representation on op results: sub-axes, priorities, open and closed dims,
// explicitly replicated axes, several meshes, a mesh with device ids, and a maximal mesh.
module {
  sdy.mesh @m = <["x"=8, "y"=2, "z"=2]>
  sdy.mesh @ids = <["a"=2, "b"=2], device_ids=[3, 2, 1, 0]>
  sdy.mesh @one = <[], device_ids=[0]>

  func.func @main(%p: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@m, [{"x":(1)2, "y"}p0, {"x":(2)4}p2], replicated={"z"}>},
                  %q: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@ids, [{"b", ?}, {?}p1]>})
      -> (tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@m, [{"x"}, {"y", "z"}]>}) {
    %sum = stablehlo.add %p, %q {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"x", ?}, {}], replicated={"y"}>]>} : tensor<64x32xf32>
    %neg = stablehlo.negate %sum {sdy.sharding = #sdy.sharding_per_value<[<@one, []>]>} : tensor<64x32xf32>
    %both:2 = "stablehlo.optimization_barrier"(%sum, %neg) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"x"}, {}]>, <@m, [{}, {"y"}]>]>} : (tensor<64x32xf32>, tensor<64x32xf32>) -> (tensor<64x32xf32>, tensor<64x32xf32>)
    %out = stablehlo.maximum %both#0, %both#1 : tensor<64x32xf32>
    return %out : tensor<64x32xf32>
  }
}
