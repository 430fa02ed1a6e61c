// Converts a capture to Perfetto protobuf beside its Chrome JSON and checks both with
// tests/testing/trace_checks.h: every track drawable, the two formats the same timeline.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "subprocess.h"
#include "trace_checks.h"

namespace xtrace::testing {

// `json_path` is the capture's JSON, already converted; the Perfetto trace goes beside it.
inline void ExpectEveryFormatDrawable(const std::string& xtrace, const std::string& log,
                                      const std::string& json_path) {
  const std::string perfetto = json_path + ".pftrace";
  auto conv = RunCommand({xtrace, "convert", "-q", log, "-o", perfetto});
  ASSERT_EQ(conv.exit_code(), 0) << conv.err;
  for (const std::string& problem : test_util::CheckEveryFormat(json_path, perfetto))
    ADD_FAILURE() << problem;
}

}  // namespace xtrace::testing
