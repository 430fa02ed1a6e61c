// Helpers of the log reader and writer tests: a sample log of full batches (with where each
// frame begins), and a log read back to its end.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "log/log_reader.h"
#include "log/log_writer.h"
#include "log_test_util.h"

namespace xtrace::test_util {

inline constexpr int kEventsPerBatch = 100;

// A log of `batches` full batches of launches, plus the file offset where each frame begins
// (frame 0 is the header).
struct SampleLog {
  std::string path;
  std::vector<uint64_t> frame_offsets;
  uint64_t size = 0;
};

inline SampleLog WriteSampleLog(const std::string& path, int batches, bool finish = true) {
  SampleLog log{.path = path, .frame_offsets = {}, .size = 0};
  auto writer = LogWriter::Create(path, SampleHeader(), {.events_per_batch = kEventsPerBatch});
  EXPECT_TRUE(writer.ok());
  const StringId name = (*writer)->strings().Intern("gemm");
  log.frame_offsets.push_back(0);
  for (int b = 0; b < batches; ++b) {
    log.frame_offsets.push_back((*writer)->bytes_written());
    for (int i = 0; i < kEventsPerBatch; ++i) {
      (*writer)->Append(RealisticLaunch(b * kEventsPerBatch + i, name, 1));
    }
  }
  if (finish) {
    log.frame_offsets.push_back((*writer)->bytes_written());
    EXPECT_TRUE((*writer)->Finish(SampleSummary()).ok());
  } else {
    EXPECT_TRUE((*writer)->Flush().ok());
  }
  log.size = (*writer)->bytes_written();
  return log;
}

// Reads to the end; returns the events and the final Next result's status.
struct ReadOutcome {
  std::vector<Event> events;
  Status status;
};

inline ReadOutcome ReadToEnd(LogReader& reader) {
  ReadOutcome outcome;
  Event event;
  while (true) {
    Result<bool> next = reader.Next(&event);
    if (!next.ok()) {
      outcome.status = next.status();
      break;
    }
    if (!*next) break;
    outcome.events.push_back(event);
  }
  return outcome;
}

// The events of a log that must read without error.
inline std::vector<Event> ReadAll(LogReader& reader) {
  ReadOutcome outcome = ReadToEnd(reader);
  EXPECT_TRUE(outcome.status.ok()) << outcome.status.message();
  return std::move(outcome.events);
}

}  // namespace xtrace::test_util
