// Level Zero result reporting for the test workloads: every failing call is named with its
// ze_result_t so a broken driver or loader shows up as one clear line, not a silent hang.
#pragma once

#include <level_zero/ze_api.h>

namespace xtrace::workloads {

// Symbolic name of a result code ("ZE_RESULT_ERROR_INVALID_ARGUMENT"), or "unknown".
const char* ze_result_name(ze_result_t result);

// Prints "<program>: <call> failed: <NAME> (0x...)" to stderr and exits with status 1.
// Exiting at once (rather than unwinding) is deliberate: after a failed call the driver
// may hold half-built objects that other threads still use, and tests only need the message.
[[noreturn]] void ze_fail(const char* call, ze_result_t result);

// Sets the program name used in messages (argv[0]'s basename is a good choice).
void set_program_name(const char* name);
const char* program_name();

}  // namespace xtrace::workloads

// ZE_CHECK(zeFoo(a, b)) reports "zeFoo" (the text before the parenthesis) on failure.
#define ZE_CHECK(call)                                                              \
  do {                                                                              \
    ze_result_t xtrace_ze_result_ = (call);                                         \
    if (xtrace_ze_result_ != ZE_RESULT_SUCCESS)                                     \
      ::xtrace::workloads::ze_fail(#call, xtrace_ze_result_);                       \
  } while (0)
