// Maps the timestamps of the ITT fast path to CLOCK_MONOTONIC, the clock of every BPF
// record. The collector stamps records with the TSC (rdtsc costs about half a vDSO
// clock_gettime on this machine kind, and a begin/end pair reads the clock twice); xtrace
// reads (TSC, CLOCK_MONOTONIC) pairs itself at every drain and interpolates between the
// readings before and after each record, so the mapping follows NTP's slewing of
// CLOCK_MONOTONIC. Where the TSC cannot be trusted the collector is told to use
// CLOCK_MONOTONIC itself, and the mapping is the identity.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "xtrace/itt_ring.h"

namespace xtrace {

class TscClock {
 public:
  // XT_ITT_CLOCK_TSC when the TSC is invariant (constant_tsc and nonstop_tsc) and reads the
  // same on every CPU this process may run on (checked against CLOCK_MONOTONIC); otherwise
  // XT_ITT_CLOCK_MONOTONIC, with `why` saying what failed.
  static uint32_t ChooseClock(std::string* why);

  static uint64_t ReadTsc();
  static uint64_t MonotonicNs();

  // Takes its first two readings (a few ms apart for the TSC, to know its rate from the start).
  explicit TscClock(uint32_t clock);
  uint32_t clock() const { return clock_; }

  // The clock in the collector's units now.
  uint64_t Now() const;
  // `ns` of CLOCK_MONOTONIC in the collector's units (for the lease).
  uint64_t UnitsFor(uint64_t ns) const;

  // Takes a reading (at most one per kMinSpacingNs). Called after the rings are read, so
  // every record read lies before the latest reading.
  void Sample();

  // The CLOCK_MONOTONIC time of `raw` (collector units), or nullopt when it lies outside the
  // readings taken so far (before the first, or after the last by more than a moment): such
  // a record cannot have been written while xtrace was attached.
  std::optional<uint64_t> ToMonotonic(uint64_t raw) const;

 private:
  static constexpr uint64_t kMinSpacingNs = 10'000'000;
  struct Reading {
    uint64_t tsc;
    uint64_t ns;
  };
  uint32_t clock_;
  std::deque<Reading> readings_;
  // The pair of readings ToMonotonic used last (a batch's records mostly fall between the
  // same two): [a.tsc, b.tsc), or from a.tsc on when b is the newest. Cleared by Sample.
  mutable struct {
    Reading a{}, b{};
    double ns_per_unit = 0;  // between a and b: a multiply per record, not a divide
    bool newest = false;
    bool valid = false;
  } last_pair_;
};

}  // namespace xtrace
