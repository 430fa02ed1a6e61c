#!/usr/bin/env bash
# Smoke tests for the test workloads on the simulated GPU: each case runs a workload, checks
# its stdout protocol, and checks its launch log against the launch counts it printed.
# usage: smoke_test.sh CASE BINDIR   (CASE: rounds signal duration module lateload noload errors)
# Needs ZE_ENABLE_ALT_DRIVERS=/abs/path/libxtrace_simze.so in the environment (ctest sets it).
set -euo pipefail

case_name=${1:?usage: smoke_test.sh CASE BINDIR}
bindir=${2:?usage: smoke_test.sh CASE BINDIR}
workload=$bindir/ze_workload
lateload=$bindir/ze_lateload
noload=$bindir/ze_noload

tmp=$(mktemp -d)
bg_pid=""
cleanup() {
  # Only the process this script started, by its pid.
  if [[ -n $bg_pid ]] && kill -0 "$bg_pid" 2>/dev/null; then kill -KILL "$bg_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
  echo "FAIL [$case_name]: $*" >&2
  for f in "$tmp"/out "$tmp"/err; do
    [[ -s $f ]] && { echo "--- $(basename "$f"):" >&2; head -c 4000 "$f" >&2; }
  done
  exit 1
}

# wait_for_line FILE REGEX: until a line of FILE matches the extended REGEX (30 s at most).
wait_for_line() {
  local file=$1 regex=$2 i
  for ((i = 0; i < 600; i++)); do
    grep -Eq -- "$regex" "$file" 2>/dev/null && return 0
    if [[ -n $bg_pid ]] && ! kill -0 "$bg_pid" 2>/dev/null; then
      grep -Eq -- "$regex" "$file" 2>/dev/null && return 0
      fail "process $bg_pid exited before printing a line matching /$regex/"
    fi
    sleep 0.05
  done
  fail "timed out waiting for a line matching /$regex/ in $(basename "$file")"
}

# wait_bg: waits for the background process, fails unless it exits with status 0.
wait_bg() {
  local status=0
  wait "$bg_pid" || status=$?
  bg_pid=""
  [[ $status -eq 0 ]] || fail "exited with status $status"
}

expect_stdout() {
  local expected=$1
  [[ "$(cat "$tmp/out")" == "$expected" ]] || fail "stdout is not as expected; wanted:
$expected"
}

# check_log LOG LINES THREADS PID: LINES lines, each "<tid>\t<known kernel>\t<x>,<y>,<z>",
# from THREADS distinct worker tids (none of them the main thread PID), every launched
# kernel equally often, the never-launched kernel absent, the long name intact.
check_log() {
  local log=$1 lines=$2 threads=$3 pid=$4
  [[ -f $log ]] || fail "no launch log"
  local n
  n=$(wc -l <"$log")
  [[ $n -eq $lines ]] || fail "launch log has $n lines, the workload reported $lines launches"
  "$workload" --list-kernels >"$tmp/kernels"
  awk -F'\t' -v pid="$pid" -v threads="$threads" -v lines="$lines" '
    NR == FNR { known[$0] = 1; last = $0; if (length($0) > longest) longest = length($0); next }
    NF != 3 || $1 !~ /^[0-9]+$/ || $3 !~ /^[0-9]+,[0-9]+,[0-9]+$/ { print "malformed line " FNR ": " $0; bad = 1; next }
    !($2 in known) { print "unknown kernel name on line " FNR ": " $2; bad = 1; next }
    $1 == pid { print "launch on the main thread, line " FNR; bad = 1 }
    { tids[$1] = 1; count[$2]++; if (length($2) > maxlen) maxlen = length($2) }
    END {
      if (bad) exit 1
      nt = 0; for (t in tids) nt++
      if (nt != threads) { print nt " distinct tids, expected " threads; exit 1 }
      if (last in count) { print "the never-launched kernel " last " was launched"; exit 1 }
      nk = 0; for (k in count) nk++
      if (lines > 0 && maxlen != longest) { print "longest name in the log has " maxlen " chars, expected " longest; exit 1 }
      for (k in count) if (count[k] * nk != lines) { print "kernel " k " launched " count[k] " times of " lines; exit 1 }
    }' "$tmp/kernels" "$log" >"$tmp/check" || fail "launch log check: $(cat "$tmp/check")"
}

maps_has_loader() { grep -q 'libze_loader\.so' "/proc/$1/maps"; }

[[ -n ${ZE_ENABLE_ALT_DRIVERS:-} ]] || fail "ZE_ENABLE_ALT_DRIVERS is not set"
[[ -f $ZE_ENABLE_ALT_DRIVERS ]] || fail "simulated driver $ZE_ENABLE_ALT_DRIVERS does not exist"

case $case_name in
rounds)
  # 2 threads x 10 iterations x 5 = 100 launches per round; warm-up is not logged.
  "$workload" --iterations 10 --threads 2 --rounds 2 --warmup-rounds 1 \
    --launch-log "$tmp/log" >"$tmp/out" 2>"$tmp/err" || fail "exited with status $?"
  pid=$(sed -n 's/^ready \([0-9][0-9]*\)$/\1/p' "$tmp/out")
  [[ -n $pid ]] || fail "no ready line"
  expect_stdout "ready $pid
round 1 launches=100
round 2 launches=100
exit rounds=2 launches=200"
  check_log "$tmp/log" 200 2 "$pid"
  # The gemm launches carry group counts {16 + i%4, 8, 1}: iterations 0, 4 and 8 of each
  # thread and round give 16,8,1.
  n=$(awk -F'\t' '$2 ~ /^void xt::gemm</ && $3 == "16,8,1"' "$tmp/log" | wc -l)
  [[ $n -eq 12 ]] || fail "$n gemm launches with groups 16,8,1, expected 12"
  ;;
signal)
  "$workload" --wait-for-signal --threads 3 --iterations 4 --warmup-rounds 2 \
    --launch-log "$tmp/log" >"$tmp/out" 2>"$tmp/err" &
  bg_pid=$!
  wait_for_line "$tmp/out" '^ready [0-9]+$'
  [[ ! -s $tmp/log ]] || fail "warm-up launches were logged"
  maps_has_loader "$bg_pid" || fail "libze_loader.so is not mapped after ready"
  kill -USR1 "$bg_pid"
  wait_for_line "$tmp/out" '^round 1 launches=60$'
  check_log "$tmp/log" 60 3 "$bg_pid"
  kill -USR1 "$bg_pid"
  wait_for_line "$tmp/out" '^round 2 launches=60$'
  pid=$bg_pid
  kill -TERM "$bg_pid"
  wait_bg
  expect_stdout "ready $pid
round 1 launches=60
round 2 launches=60
exit rounds=2 launches=120"
  check_log "$tmp/log" 120 3 "$pid"
  ;;
duration)
  start=$(date +%s%N)
  "$workload" --duration 1 --iterations 2 --sleep-us 2000 \
    --launch-log "$tmp/log" >"$tmp/out" 2>"$tmp/err" || fail "exited with status $?"
  elapsed_ms=$((($(date +%s%N) - start) / 1000000))
  ((elapsed_ms >= 1000)) || fail "ran for only $elapsed_ms ms"
  pid=$(sed -n 's/^ready \([0-9][0-9]*\)$/\1/p' "$tmp/out")
  rounds=$(grep -c '^round [0-9]* launches=10$' "$tmp/out") || true
  ((rounds >= 2)) || fail "only $rounds rounds in 1 s"
  grep -qx "exit rounds=$rounds launches=$((rounds * 10))" "$tmp/out" || fail "bad exit line"
  check_log "$tmp/log" $((rounds * 10)) 1 "$pid"
  ;;
module)
  # Any blob is a module for the simulated driver; kernels then get a default duration.
  head -c 4096 /dev/urandom >"$tmp/blob.bin"
  "$workload" --module "$tmp/blob.bin" --iterations 3 --threads 2 \
    --launch-log "$tmp/log" >"$tmp/out" 2>"$tmp/err" || fail "exited with status $?"
  pid=$(sed -n 's/^ready \([0-9][0-9]*\)$/\1/p' "$tmp/out")
  expect_stdout "ready $pid
round 1 launches=30
exit rounds=1 launches=30"
  check_log "$tmp/log" 30 2 "$pid"
  ;;
lateload)
  "$lateload" --launches 6 --launch-log "$tmp/log" >"$tmp/out" 2>"$tmp/err" &
  bg_pid=$!
  wait_for_line "$tmp/out" '^ready [0-9]+$'
  ! maps_has_loader "$bg_pid" || fail "libze_loader.so is mapped before SIGUSR1"
  kill -USR1 "$bg_pid"
  wait_for_line "$tmp/out" '^round 1 launches=6$'
  maps_has_loader "$bg_pid" || fail "libze_loader.so is not mapped after loading"
  [[ $(wc -l <"$tmp/log") -eq 6 ]] || fail "launch log does not have 6 lines"
  pid=$bg_pid
  kill -TERM "$bg_pid"
  wait_bg
  expect_stdout "ready $pid
loaded $pid
round 1 launches=6
exit rounds=1 launches=6"
  ;;
noload)
  "$noload" >"$tmp/out" 2>"$tmp/err" &
  bg_pid=$!
  wait_for_line "$tmp/out" '^ready [0-9]+$'
  ! grep -q 'libze' "/proc/$bg_pid/maps" || fail "a Level Zero library is mapped"
  kill -TERM "$bg_pid"
  wait_bg
  "$noload" --seconds 0.2 >"$tmp/out" 2>"$tmp/err" || fail "--seconds 0.2 failed"
  [[ $(tail -n 1 "$tmp/out") == exit ]] || fail "no exit line"
  ;;
errors)
  # Usage errors: status 2 and a message naming the option.
  for args in "--iterations 0" "--iterations abc" "--iterations -3" "--threads 257" \
    "--rounds 1x" "--duration 0" "--duration nan" "--sleep-us 99999999999" "--bogus" \
    "--iterations" "--wait-for-signal --duration 1" "--rounds 2 --wait-for-signal"; do
    status=0
    # shellcheck disable=SC2086  # word splitting of $args is intended
    "$workload" $args >"$tmp/out" 2>"$tmp/err" || status=$?
    [[ $status -eq 2 ]] || fail "'$args' exited with status $status, expected 2"
    opt=${args%% *}
    grep -q -- "$opt\|unknown argument\|cannot be combined" "$tmp/err" || fail "'$args': message does not name $opt"
  done
  status=0
  "$workload" --module "$tmp/missing.bin" >"$tmp/out" 2>"$tmp/err" || status=$?
  [[ $status -eq 2 ]] || fail "--module of a missing file exited with status $status"
  # A Level Zero failure: status 1 and the failing call named with its ze_result_t.
  status=0
  ZE_ENABLE_ALT_DRIVERS=$tmp/no-such-driver.so "$workload" >"$tmp/out" 2>"$tmp/err" || status=$?
  [[ $status -eq 1 ]] || fail "without a driver: status $status, expected 1"
  grep -Eq '^ze_workload: zeInit failed: ZE_RESULT_[A-Z_]+ \(0x[0-9a-f]+\)$' "$tmp/err" ||
    fail "without a driver: no message naming zeInit and its result"
  ;;
*)
  fail "unknown case"
  ;;
esac
echo "PASS [$case_name]"
