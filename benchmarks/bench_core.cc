// Nanoseconds per rule call in C++ alone (no Python): what whole-program propagation over a
// large graph pays per op. Built with -DSPMDKIT_BENCH=ON; run build/.../bench_core.
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <vector>

#include "generated_rules.h"
#include "generated_support.h"

using namespace spmd;

namespace {

MeshPtr mesh2x2() { return std::make_shared<const ProcessMesh>(std::vector<int64_t>{2, 2}, std::vector<int64_t>{0, 1, 2, 3}, std::vector<std::string>{"x", "y"}); }

DistMetaTensor tensor(const MeshPtr& mesh, std::vector<int64_t> shape, std::vector<int64_t> mapping) {
  TensorDistAttr a(mesh);
  a.set_dims_mapping(mapping);
  return DistMetaTensor(Shape(shape.begin(), shape.end()), a);
}

void bench(const char* name, const std::function<std::size_t()>& call) {
  std::size_t sink = 0;
  for (int i = 0; i < 2000; ++i) sink += call();  // warm up
  double best = 1e30;
  for (int rep = 0; rep < 15; ++rep) {
    const int n = 20000;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) sink += call();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / n);
  }
  std::printf("%-16s %8.0f ns/call  (%zu)\n", name, best, sink % 10);
}

}  // namespace

int main() {
  const MeshPtr m = mesh2x2();
  const DistMetaTensor x = tensor(m, {64, 32}, {1, 0}), y = tensor(m, {32, 48}, {0, -1});
  const DistMetaTensor out = tensor(m, {64, 48}, {1, 0});
  const DistMetaTensor a = tensor(m, {4, 8, 16}, {0, -1, -1}), b = tensor(m, {8, 16}, {-1, 1});
  const DistMetaTensor r = tensor(m, {6, 12, 48}, {0, -1, 1});
  const DistMetaTensor ln = tensor(m, {8, 16, 32}, {0, 1, -1}), sc = tensor(m, {32}, {-1});
  const std::vector<int64_t> shape = {72, 6, 8};
  std::printf("spmdkit C++ rule cost (best of 15 x 20000 calls)\n");
  bench("matmul", [&] { return MatmulInferSpmd(x, y, false, false).outputs.size(); });
  bench("matmul reverse", [&] { return MatmulInferSpmdReverse(x, y, out, false, false).inputs.size(); });
  bench("add", [&] { return ElementwiseBinaryInferSpmd(a, b).outputs.size(); });
  bench("reshape", [&] { return ReshapeInferSpmd(r, shape).outputs.size(); });
  bench("layer_norm", [&] { return LayerNormInferSpmd(ln, sc, sc, 1e-5f, 2).outputs.size(); });
  bench("softmax", [&] { return SoftmaxInferSpmd(ln, -1).outputs.size(); });
  return 0;
}
