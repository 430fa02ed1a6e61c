#!/bin/sh
# Slurm Prolog (slurm.conf: Prolog=/etc/slurm/xtrace-prolog.sh), run as root on each node of
# a job before it starts. An example, for sites that run the xtrace daemon only on nodes that
# have jobs: starts the node's daemon if none answers on its socket. Users then trace their
# running job with `xtrace slurm $SLURM_JOB_ID`. A site that keeps the daemon always on (the
# systemd unit) needs no prolog at all.
#
# Where systemd runs the node, the daemon is its unit (xtrace-daemon.service). Where it does
# not (a container, a cluster started by hand), the prolog starts the daemon itself, in a
# session of its own so that it outlives the prolog, its pid in XTRACE_PID_FILE; it runs
# until stopped (kill -TERM, which finishes the open capture file first).
#
# Settings, from the environment slurmd gives the prolog or a wrapper that sets them and runs
# this file (a %n in a path is the node's Slurm name, for several slurmd on one host):
#   XTRACE             the binary (default: /usr/local/bin/xtrace)
#   XTRACE_SOCKET      the daemon's control socket (default: /run/xtrace/xtrace.sock)
#   XTRACE_OUTPUT_DIR  where captures nobody gave a directory go (default: /var/lib/xtrace)
#   XTRACE_GROUP       the daemon's --group, whose members may capture anything (default:
#                      xtrace-admin; set it empty for none)
#   XTRACE_PID_FILE    without systemd: the daemon's pid (default: the socket's path, .pid)
#   XTRACE_LOG         without systemd: the daemon's stderr (default: /var/log/xtrace-daemon.log)
#
# A prolog must not fail the job: whatever happens here, exit 0.
node_path() { printf '%s' "$1" | sed "s/%n/${SLURMD_NODENAME}/g"; }
xtrace=${XTRACE:-/usr/local/bin/xtrace}
socket=$(node_path "${XTRACE_SOCKET:-/run/xtrace/xtrace.sock}")
output_dir=$(node_path "${XTRACE_OUTPUT_DIR:-/var/lib/xtrace}")
group=${XTRACE_GROUP-xtrace-admin}
pid_file=$(node_path "${XTRACE_PID_FILE:-${socket%.sock}.pid}")
log=$(node_path "${XTRACE_LOG:-/var/log/xtrace-daemon.log}")
say() { logger -t xtrace-prolog "job ${SLURM_JOB_ID} on ${SLURMD_NODENAME}: $*" 2>/dev/null; }

# Running already (for an earlier job, or always on): nothing to do.
"$xtrace" ctl --socket "$socket" status >/dev/null 2>&1 && exit 0

if [ -d /run/systemd/system ]; then
  systemctl start xtrace-daemon 2>/dev/null || say "could not start xtrace-daemon"
  exit 0
fi

mkdir -p "$(dirname "$socket")" "$output_dir" 2>/dev/null
# One prolog at a time starts it: two jobs starting at once on a node both get here, and the
# second finds the first's daemon answering.
exec 9>"${socket}.lock"
flock -w 20 9 || { say "another prolog holds ${socket}.lock"; exit 0; }
"$xtrace" ctl --socket "$socket" status >/dev/null 2>&1 && exit 0
set -- daemon --allow-users --socket "$socket" --output-dir "$output_dir"
[ -n "$group" ] && set -- "$@" --group "$group"
setsid "$xtrace" "$@" </dev/null >>"$log" 2>&1 9>&- &
echo $! > "$pid_file"
# Until it answers (at most 10 s): a user may run `xtrace slurm` as soon as the job starts.
tries=0
while [ $tries -lt 100 ]; do
  "$xtrace" ctl --socket "$socket" status >/dev/null 2>&1 && exit 0
  kill -0 "$(cat "$pid_file")" 2>/dev/null || break
  sleep 0.1
  tries=$((tries + 1))
done
say "xtrace daemon did not answer on $socket (see $log)"
exit 0
