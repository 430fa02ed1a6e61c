// Running statistics of durations for the report tables: count, total, min, max (constant
// memory however many values arrive), and a log-scale histogram for percentiles.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

namespace xtrace::report {

struct DurationStats {
  uint64_t count = 0;
  uint64_t total_ns = 0;
  uint64_t min_ns = std::numeric_limits<uint64_t>::max();
  uint64_t max_ns = 0;

  void Add(uint64_t ns) {
    ++count;
    total_ns += ns;
    min_ns = std::min(min_ns, ns);
    max_ns = std::max(max_ns, ns);
  }
  void Merge(const DurationStats& o) {
    count += o.count;
    total_ns += o.total_ns;
    min_ns = std::min(min_ns, o.min_ns);
    max_ns = std::max(max_ns, o.max_ns);
  }
  double average_ns() const { return count ? double(total_ns) / double(count) : 0; }
  uint64_t min_or_zero() const { return count ? min_ns : 0; }
};

// Percentiles of durations from 1 ns to ~10^12 ns with at most 1% error: buckets grow by
// 2%, so a value is reported as its bucket's geometric middle (±1%). Fixed size (a few KiB):
// memory does not grow with the number of values.
class LatencyHistogram {
 public:
  void Add(uint64_t ns) {
    ++buckets_[Bucket(ns)];
    ++count_;
  }
  void Merge(const LatencyHistogram& o) {
    for (size_t i = 0; i < kBuckets; ++i) buckets_[i] += o.buckets_[i];
    count_ += o.count_;
  }
  uint64_t count() const { return count_; }
  // The value below which a fraction q (0..1) of the values lie; 0 when there are none.
  uint64_t Percentile(double q) const {
    if (count_ == 0) return 0;
    const uint64_t rank = std::max<uint64_t>(1, uint64_t(std::ceil(q * double(count_))));
    uint64_t seen = 0;
    for (size_t i = 0; i < kBuckets; ++i) {
      seen += buckets_[i];
      if (seen >= rank) return i == 0 ? 0 : uint64_t(std::llround(std::pow(kGrowth, double(i) - 0.5)));
    }
    return 0;
  }

 private:
  static constexpr double kGrowth = 1.02;
  static constexpr size_t kBuckets = 1400;  // 1.02^1400 ≈ 10^12 ns: 17 minutes
  static size_t Bucket(uint64_t ns) {
    if (ns == 0) return 0;
    const double b = std::floor(std::log(double(ns)) / std::log(kGrowth)) + 1;
    return std::min<size_t>(kBuckets - 1, size_t(std::max(1.0, b)));
  }
  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
};

}  // namespace xtrace::report
