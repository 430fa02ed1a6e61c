// Kernel names and the embedded simulated-GPU module (see kernel_catalog.h).
#include "kernel_catalog.h"

#include <array>
#include <string_view>

namespace xtrace::workloads {
namespace {

// Built rather than written out so its length is easy to adjust and the pieces stay
// readable: a GEMM template with a long software-pipeline stage list, the shape of name
// that template-heavy libraries (CUTLASS-style, oneDNN ukernels) hand to the runtime.
std::string long_gemm_name() {
  constexpr std::size_t kTarget = 1000;
  const std::string head =
      "void xt::gemm<xt::dtype::bf16, xt::dtype::bf16, xt::dtype::f32, xt::layout::row_major, "
      "xt::layout::col_major, xt::tile_shape<256, 128, 32>, xt::pipeline<";
  const std::string tail =
      ">, xt::epilogue<xt::bias_add<float>, xt::activation<xt::act::gelu_tanh>>>("
      "xt::matrix_ref<const xt::bf16, 2>, xt::matrix_ref<const xt::bf16, 2>, "
      "xt::matrix_ref<float, 2>, float, float)";
  std::string stages;
  for (int i = 0;; ++i) {
    std::string stage = std::string(i ? ", " : "") + "xt::stage<" + std::to_string(i) +
                        ", xt::copy_op<xt::global_to_slm, " + std::to_string(16 << (i % 3)) +
                        ">, xt::mma_op<8, 16, 16>>";
    if (head.size() + stages.size() + stage.size() + tail.size() > kTarget) break;
    stages += stage;
  }
  return head + stages + tail;
}

std::array<KernelSpec, static_cast<std::size_t>(Kernel::kCount)> build_catalog() {
  return {{
      {Kernel::kScale, "xt_scale_f32", 4'000},
      {Kernel::kGemm, long_gemm_name(), 60'000},
      {Kernel::kSoftmax,
       "xt::softmax<float, 128>(const float*, float*) [with MODE = \"fused, online\"; SEP = ',']",
       12'000},
      {Kernel::kSyclLambda, "_ZTSZZ9run_layerRN4sycl3_V15queueEENKUlRNS0_7handlerEE_clES4_EUlNS0_7nd_itemILi1EEEE_",
       8'000},
      {Kernel::kReduce,
       "xt::native::reduce_kernel<512, 1, xt::native::ReduceOp<float, xt::native::sum_functor<float, "
       "float, float>::operator()(xt::TensorIterator&)::{lambda(float, float)#1}, unsigned int, float, 4>>",
       15'000},
      {Kernel::kNeverLaunched, "xt_never_launched", 1'000},
  }};
}

}  // namespace

std::span<const KernelSpec> kernel_catalog() {
  static const auto catalog = build_catalog();
  return catalog;
}

const KernelSpec& kernel_spec(Kernel id) { return kernel_catalog()[static_cast<std::size_t>(id)]; }

std::string simulated_module_text() {
  std::string text = "XTRACE-SIMGPU-MODULE 1\n";
  for (const KernelSpec& k : kernel_catalog())
    text += "kernel " + std::to_string(k.duration_ns) + " " + k.name + "\n";
  return text;
}

}  // namespace xtrace::workloads
