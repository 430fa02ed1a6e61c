#!/bin/sh
# Slurm Epilog (slurm.conf: Epilog=/etc/slurm/xtrace-epilog.sh), run as root on each node of
# a job after it ends. An example: a capture of the job still running (its processes are gone,
# so it ends by itself within a poll; this makes sure) is stopped, so its last file is
# finished before the next job's user may ask for one. Only a capture of this job, by its own
# user, is stopped: the same user's capture of another job of theirs, and another user's
# capture on a shared node, go on. (`xtrace ctl status` names the job a capture covers:
# "the processes of Slurm job 4242 on node n1 ... owned by bob (uid 1002)".)
#
# XTRACE_SOCKET names the daemon's socket where it is not the default (several slurmd on one
# host, slurmd -N, each with a daemon of its own).
#
# An epilog that fails drains the node: whatever happens here, exit 0.
socket=${XTRACE_SOCKET:-/run/xtrace/xtrace.sock}
owner=$(id -u "${SLURM_JOB_USER}" 2>/dev/null) || exit 0
status=$(xtrace ctl --socket "$socket" status 2>/dev/null) || exit 0
case "$status" in
  capturing*"Slurm job ${SLURM_JOB_ID} "*"owned by ${SLURM_JOB_USER} (uid ${owner})"*)
    xtrace ctl --socket "$socket" stop >/dev/null 2>&1 ;;
esac
exit 0
