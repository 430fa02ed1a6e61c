// Field-by-field comparison of the Level Zero events (model/ze_events.h) for log tests.
#pragma once

#include <gtest/gtest.h>

#include "model/event.h"

namespace xtrace::test_util {

inline void ExpectSameZeEvent(const Event& expected, const Event& actual) {
  ASSERT_EQ(expected.index(), actual.index()) << "different event kinds";
  if (const auto* e = std::get_if<ApiCall>(&expected)) {
    const auto& a = std::get<ApiCall>(actual);
    EXPECT_EQ(e->pid, a.pid);
    EXPECT_EQ(e->tid, a.tid);
    EXPECT_EQ(e->start_ns, a.start_ns);
    EXPECT_EQ(e->end_ns, a.end_ns);
    EXPECT_EQ(e->fn, a.fn);
    EXPECT_EQ(e->result, a.result);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(e->arg[i], a.arg[i]) << "arg" << i;
    EXPECT_EQ(e->args_unreadable, a.args_unreadable);
    EXPECT_EQ(e->truncated, a.truncated);
  } else {
    ADD_FAILURE() << "ExpectSameZeEvent: event kind " << expected.index() << " not compared";
  }
}

}  // namespace xtrace::test_util
