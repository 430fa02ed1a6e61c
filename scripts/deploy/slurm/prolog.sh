#!/bin/sh
# Slurm Prolog (slurm.conf: Prolog=/etc/slurm/xtrace-prolog.sh), run as root on each node of
# a job before it starts. An example, for sites that run the xtrace daemon only on nodes that
# have jobs: starts the node's daemon if it is not running. Users then trace their running
# job with `xtrace slurm $SLURM_JOB_ID`. A site that keeps the daemon always on (the systemd
# unit) needs no prolog at all.
#
# A prolog must not fail the job: whatever happens here, exit 0.
if ! systemctl is-active --quiet xtrace-daemon 2>/dev/null; then
  systemctl start xtrace-daemon 2>/dev/null || \
    logger -t xtrace-prolog "job ${SLURM_JOB_ID}: could not start xtrace-daemon"
fi
exit 0
