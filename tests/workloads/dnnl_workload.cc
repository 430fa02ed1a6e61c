// dnnl_workload: runs oneDNN primitives (Debian's libdnnl, OpenMP threading) the way a
// framework does — convolution, eltwise (ReLU), reorder and matmul, each executed a given
// number of times on the main thread — so tests can check the ITT tasks oneDNN itself emits
// ("dnnl::primitive::execute" domain) against the executions. Prints the counts it ran.
// With --tiny-loop it instead executes a tiny primitive as fast as it can, from each thread
// of an OpenMP team: the highest ITT task rate a real client makes, for the collector's bench.
#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <time.h>

#include <chrono>
#include <cstdio>
#include <string_view>
#include <vector>

#include "workload_cli.h"
#include "ze_result.h"

namespace xtrace::workloads {
namespace {

constexpr const char kHelp[] = R"(usage: dnnl_workload [--iterations N]
       dnnl_workload --tiny-loop SECONDS [--threads T]

Creates a convolution (8x16x32x32 -> 8x32x32x32, 3x3), a ReLU eltwise, an nchw->nhwc reorder
and a 64x128 * 128x96 matmul on oneDNN's CPU engine, then executes each of them N times in
that order on the main thread (default N 3, 1..10000). Sizes are large enough for oneDNN to
split every primitive over its OpenMP threads (set OMP_NUM_THREADS). Output: one line
"executions convolution=N eltwise=N reorder=N matmul=N".

--tiny-loop: each of T OpenMP threads (default 1, 1..64) executes a ReLU on 16 floats of its
own, on its own stream, for SECONDS; oneDNN runs it on the calling thread (inside a parallel
region), one ITT task an execution. Output: one line, dnnl_workload: N tasks per second
(T threads, M tasks, cpu C s), C being its own CPU time.
)";

// Executes a tiny ReLU from every thread of a team of `threads` for `seconds`.
int TinyLoop(double seconds, int threads) {
  using namespace dnnl;
  engine eng(engine::kind::cpu, 0);
  const memory::desc md({1, 16}, memory::data_type::f32, memory::format_tag::ab);
  eltwise_forward relu(eltwise_forward::primitive_desc(
      eltwise_forward::desc(prop_kind::forward_inference, algorithm::eltwise_relu, md, 0.f), eng));
  std::vector<unsigned long long> counts(static_cast<size_t>(threads), 0);
  const auto start = std::chrono::steady_clock::now();
  const auto until = start + std::chrono::duration<double>(seconds);
#pragma omp parallel num_threads(threads)
  {
    stream strm(eng);
    memory data(md, eng);
    auto* p = static_cast<float*>(data.get_data_handle());
    for (int i = 0; i < 16; ++i) p[i] = static_cast<float>(i) - 8.0f;
    unsigned long long n = 0;
    // The clock is read once every 256 executions: the loop measures oneDNN, not the clock.
    do {
      for (int i = 0; i < 256; ++i) relu.execute(strm, {{DNNL_ARG_SRC, data}, {DNNL_ARG_DST, data}});
      n += 256;
    } while (std::chrono::steady_clock::now() < until);
    strm.wait();
    counts[static_cast<size_t>(omp_get_thread_num())] = n;
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  unsigned long long total = 0;
  for (unsigned long long n : counts) total += n;
  timespec cpu{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
  std::printf("dnnl_workload: %.0f tasks per second (%d threads, %llu tasks, cpu %.3f s)\n",
              double(total) / elapsed, threads, total,
              double(cpu.tv_sec) + double(cpu.tv_nsec) * 1e-9);
  return 0;
}

int Main(int argc, char** argv) {
  set_program_name("dnnl_workload");
  std::uint64_t iterations = 3;
  double tiny_seconds = 0;
  int threads = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kHelp, stdout);
      return 0;
    }
    if (arg == "--iterations") {
      iterations = parse_count(arg, option_value(argc, argv, i), 1, 10'000);
    } else if (arg == "--tiny-loop") {
      tiny_seconds = parse_seconds(arg, option_value(argc, argv, i), 3600);
    } else if (arg == "--threads") {
      threads = static_cast<int>(parse_count(arg, option_value(argc, argv, i), 1, 64));
    } else {
      usage_error("unknown argument \"" + std::string(arg) + "\"");
    }
  }

  if (tiny_seconds > 0) return TinyLoop(tiny_seconds, threads);

  using namespace dnnl;
  using dt = memory::data_type;
  using tag = memory::format_tag;
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);

  const memory::desc src_md({8, 16, 32, 32}, dt::f32, tag::nchw);
  const memory::desc wei_md({32, 16, 3, 3}, dt::f32, tag::oihw);
  const memory::desc dst_md({8, 32, 32, 32}, dt::f32, tag::nchw);
  const memory::desc nhwc_md({8, 16, 32, 32}, dt::f32, tag::nhwc);
  const memory::desc a_md({64, 128}, dt::f32, tag::ab);
  const memory::desc b_md({128, 96}, dt::f32, tag::ab);
  const memory::desc c_md({64, 96}, dt::f32, tag::ab);

  convolution_forward conv(convolution_forward::primitive_desc(
      convolution_forward::desc(prop_kind::forward_inference, algorithm::convolution_direct,
                                src_md, wei_md, dst_md, {1, 1}, {1, 1}, {1, 1}),
      eng));
  eltwise_forward relu(eltwise_forward::primitive_desc(
      eltwise_forward::desc(prop_kind::forward_inference, algorithm::eltwise_relu, dst_md, 0.f),
      eng));
  reorder to_nhwc(reorder::primitive_desc(eng, src_md, eng, nhwc_md));
  matmul mm(matmul::primitive_desc(matmul::desc(a_md, b_md, c_md), eng));

  memory src(src_md, eng), wei(wei_md, eng), dst(dst_md, eng), nhwc(nhwc_md, eng);
  memory a(a_md, eng), b(b_md, eng), c(c_md, eng);
  for (memory* m : {&src, &wei, &a, &b}) {
    auto* p = static_cast<float*>(m->get_data_handle());
    const size_t n = m->get_desc().get_size() / sizeof(float);
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<float>(i % 13) * 0.25f - 1.0f;
  }

  for (std::uint64_t i = 0; i < iterations; ++i) {
    conv.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    relu.execute(strm, {{DNNL_ARG_SRC, dst}, {DNNL_ARG_DST, dst}});
    to_nhwc.execute(strm, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, nhwc}});
    mm.execute(strm, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
  }
  strm.wait();
  const auto n = static_cast<unsigned long long>(iterations);
  std::printf("executions convolution=%llu eltwise=%llu reorder=%llu matmul=%llu\n", n, n, n, n);
  return 0;
}

}  // namespace
}  // namespace xtrace::workloads

int main(int argc, char** argv) { return xtrace::workloads::Main(argc, argv); }
