#include "daemon/capture_controller.h"

#include <gtest/gtest.h>

#include <string>

namespace xtrace {
namespace {

// Two daemons on one host (one per `slurmd -N` node name) capture one job at once; their
// logs' headers differ, so a merged trace keeps their GPU queues on tracks of their own.
TEST(DescribeDaemonCapture, NamesTheRequestAndWhoAskedForIt) {
  CaptureOptions request;
  request.slurm_job = "4242";
  request.slurm_node = "node7";
  request.slurm_cluster = "hpc";
  request.output_dir = "/home/bob/trace/node7";
  request.client_pid = 811;
  EXPECT_EQ(DescribeDaemonCapture(request),
            "xtrace ctl start --slurm-job 4242 --slurm-node node7 --slurm-cluster hpc "
            "-o /home/bob/trace/node7 (asked the daemon from pid 811)");
  CaptureOptions other = request;
  other.slurm_node = "node8";
  other.output_dir = "/home/bob/trace/node8";
  EXPECT_NE(DescribeDaemonCapture(other), DescribeDaemonCapture(request));
  CaptureOptions pids;
  pids.pids = {7, 9};
  EXPECT_EQ(DescribeDaemonCapture(pids), "xtrace ctl start --pid 7 --pid 9");
}

}  // namespace
}  // namespace xtrace
