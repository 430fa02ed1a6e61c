#!/bin/sh
# Slurm Epilog (slurm.conf: Epilog=/etc/slurm/xtrace-epilog.sh), run as root on each node of
# a job after it ends. An example: a capture of the job still running (its processes are gone,
# so it ends by itself within a poll; this makes sure) is stopped, so its last file is
# finished before the next job's user may ask for one. Only a capture of the job's own user
# is stopped: another user's capture on a shared node goes on.
#
# An epilog that fails drains the node: whatever happens here, exit 0.
owner=$(id -u "${SLURM_JOB_USER}" 2>/dev/null) || exit 0
status=$(xtrace ctl status 2>/dev/null) || exit 0
case "$status" in
  capturing*"owned by ${SLURM_JOB_USER} (uid ${owner})"*) xtrace ctl stop >/dev/null 2>&1 ;;
esac
exit 0
