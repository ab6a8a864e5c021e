// Data-flow ops whose results are tied to their operands: a while loop, a case with two
// branches, and calls to a private function; rule ops from Paddle and JAX in generic form.
module @control {
  sdy.mesh @mesh = <["batch"=2, "model"=4]>

  func.func @main(%x: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"batch"}, {}]>}, %n: tensor<i32>) -> tensor<8x16xf32> {
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %loop:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, tensor<8x16xf32>
      attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{"batch"}, {"model"}]>]>}
    cond {
      %go = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %go : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      %step = func.call @scale(%acc) : (tensor<8x16xf32>) -> tensor<8x16xf32>
      stablehlo.return %next, %step : tensor<i32>, tensor<8x16xf32>
    }
    %pick = stablehlo.compare GT, %loop#0, %zero, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %idx = stablehlo.convert %pick : (tensor<i1>) -> tensor<i32>
    %branch = "stablehlo.case"(%idx) ({
      %r = "paddle.relu"(%loop#1) : (tensor<8x16xf32>) -> tensor<8x16xf32>
      stablehlo.return %r : tensor<8x16xf32>
    }, {
      %t = "paddle.transpose"(%loop#1) {perm = [1 : i32, 0 : i32]} : (tensor<8x16xf32>) -> tensor<16x8xf32>
      %u = "paddle.transpose"(%t) {perm = array<i32: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
      stablehlo.return %u : tensor<8x16xf32>
    }) : (tensor<i32>) -> tensor<8x16xf32>
    %mm = "paddle.matmul"(%branch, %branch) {trans_x = false, trans_y = true} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>
    %sm = "paddle.softmax"(%mm) {axis = -1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %out = "paddle.matmul"(%sm, %branch) {trans_x = false, trans_y = false} : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    return %out : tensor<8x16xf32>
  }

  func.func private @scale(%v: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %two = stablehlo.constant dense<2.0> : tensor<8x16xf32>
    %r = stablehlo.multiply %v, %two : tensor<8x16xf32>
    return %r : tensor<8x16xf32>
  }
}
