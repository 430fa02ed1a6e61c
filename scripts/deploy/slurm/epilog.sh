#!/bin/sh
# Slurm Epilog (slurm.conf: Epilog=/etc/slurm/xtrace-epilog.sh), run as root on each node of
# a job after it ends. An example: a capture of the job still running (its processes are gone,
# so it ends by itself within a poll; this makes sure) is stopped, so its last file is
# finished before the next job's user may ask for one. Only a capture of this job, by its own
# user, is stopped: the same user's capture of another job of theirs, another user's capture
# on a shared node, and a capture of another cluster's job of the same id (two clusters on
# one host) go on. (`xtrace ctl status` names the job a capture covers: "the processes of
# Slurm job 4242 of cluster c1 on node n1 ... owned by bob (uid 1002)"; a capture asked for
# without a cluster, "Slurm job 4242 on node n1", is taken as this cluster's.)
#
# XTRACE_SOCKET names the daemon's socket where it is not the default (several slurmd on one
# host, slurmd -N, each with a daemon of its own).
#
# An epilog that fails drains the node: whatever happens here, exit 0.
socket=${XTRACE_SOCKET:-/run/xtrace/xtrace.sock}
owner=$(id -u "${SLURM_JOB_USER}" 2>/dev/null) || exit 0
status=$(xtrace ctl --socket "$socket" status 2>/dev/null) || exit 0
case "$status" in
  capturing*"Slurm job ${SLURM_JOB_ID} of cluster ${SLURM_CLUSTER_NAME} "*) ;;
  capturing*"Slurm job ${SLURM_JOB_ID} of cluster "*) exit 0 ;;  # another cluster's job
  capturing*"Slurm job ${SLURM_JOB_ID} "*) ;;
  *) exit 0 ;;
esac
case "$status" in
  *"owned by ${SLURM_JOB_USER} (uid ${owner})"*)
    xtrace ctl --socket "$socket" stop >/dev/null 2>&1 ;;
esac
exit 0
