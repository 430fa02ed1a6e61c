#!/usr/bin/env bash
# `make fuzz`: runs each libFuzzer harness of a -DXTRACE_FUZZ=ON build for a given time, one
# after another on one core (nice), and prints the executions of each and in all.
#   tests/fuzz/run_fuzzers.sh BUILD_DIR SECONDS_PER_HARNESS HARNESS...
# Each harness grows its own working corpus in BUILD_DIR/fuzz-corpus/<name>, started from the
# seeds in tests/fuzz/corpus/<name> (the repo's corpus stays small: add to it only inputs that
# found a bug). A crash, leak or sanitizer report leaves its input in
# BUILD_DIR/fuzz-artifacts/<name>/ and makes the run fail.
set -uo pipefail

build=$1
seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
total=0
failed=()

printf '%-16s %14s %10s  %s\n' harness executions exec/s result
for name in "$@"; do
  fuzzer="$build/bin/${name}_fuzzer"
  corpus="$build/fuzz-corpus/$name"
  artifacts="$build/fuzz-artifacts/$name"
  log="$build/fuzz-logs/$name.log"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  cp -n "$here/corpus/$name"/* "$corpus"/ 2>/dev/null || true
  nice "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  result=clean
  if ((rc != 0)); then
    result="FAILED (exit $rc): see $log and $artifacts"
    failed+=("$name")
  fi
  printf '%-16s %14s %10s  %s\n' "$name" "${runs:-?}" "${rate:-?}" "$result"
  total=$((total + ${runs:-0}))
done
printf '%-16s %14s\n' total "$total"
if ((${#failed[@]})); then
  echo "fuzz: ${failed[*]} failed" >&2
  exit 1
fi
