#!/usr/bin/env bash
# Stop everything scripts/dev_up.sh started: each pid file under the run folder (CHOREO_DEV_RUN_DIR,
# default .run/) names a process group,
# which gets SIGTERM, then SIGKILL if it has not gone after 15 s. SeaweedFS gets SIGINT and 3 s:
# its volume server's graceful gRPC stop waits for the filer's open streams and otherwise hangs.
# Data in the run folder is kept.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN="${CHOREO_DEV_RUN_DIR:-$ROOT/.run}"
status=0

group_alive() { kill -0 -- "-$1" 2>/dev/null; }

# Workers and the API first, so nothing writes to storage or Redis while they stop.
for name in cpu-worker gpu-worker api seaweed redis; do
  pidfile="$RUN/$name.pid"
  [[ -f "$pidfile" ]] || continue
  pid="$(cat "$pidfile")"
  if group_alive "$pid"; then
    signal=TERM grace_ticks=30
    [[ "$name" == seaweed ]] && signal=INT grace_ticks=6
    kill "-$signal" -- "-$pid" 2>/dev/null
    for _ in $(seq "$grace_ticks"); do group_alive "$pid" || break; sleep 0.5; done
    if group_alive "$pid"; then
      [[ "$name" == seaweed ]] || echo "dev_down: $name (group $pid) ignored SIG$signal; killing it"
      kill -KILL -- "-$pid" 2>/dev/null
      for _ in $(seq 20); do group_alive "$pid" || break; sleep 0.25; done
    fi
  fi
  if group_alive "$pid"; then
    echo "dev_down: $name (group $pid) is still running" >&2
    status=1
  else
    rm -f "$pidfile"
    echo "dev_down: stopped $name"
  fi
done
exit "$status"
