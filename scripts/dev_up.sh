#!/usr/bin/env bash
# Start the whole service locally, without Docker: Redis (the running one, or one started here),
# SeaweedFS's S3 gateway on loopback with access keys, the API on 127.0.0.1:8000, a CPU and a GPU
# Celery worker. Prints the URL and a development API key. `scripts/dev_down.sh` stops everything.
# Everything it starts has a pid file under the run folder (CHOREO_DEV_RUN_DIR, default .run/) and runs
# in its own process group, so two checkouts (or two run folders) keep two stacks apart.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN="$(mkdir -p "${CHOREO_DEV_RUN_DIR:-$ROOT/.run}" && cd "${CHOREO_DEV_RUN_DIR:-$ROOT/.run}" && pwd)"
umask 077  # every file written here (secrets, logs, data) is the user's only
VENV_BIN="${VENV_BIN:-$ROOT/.venv/bin}"
API_HOST=127.0.0.1
API_PORT="${CHOREO_DEV_API_PORT:-8000}"
REDIS_PORT="${CHOREO_DEV_REDIS_PORT:-6379}"
REDIS_DB="${CHOREO_DEV_REDIS_DB:-2}"
S3_PORT="${CHOREO_DEV_S3_PORT:-18333}"
MASTER_PORT="${CHOREO_DEV_MASTER_PORT:-19333}"
VOLUME_PORT="${CHOREO_DEV_VOLUME_PORT:-18080}"
FILER_PORT="${CHOREO_DEV_FILER_PORT:-18888}"
mkdir -p "$RUN/logs"

alive() { [[ -f "$RUN/$1.pid" ]] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }

start() {  # start NAME CMD...: in its own session (process group = pid), logging to .run/logs/NAME.log
  local name="$1"; shift
  if alive "$name"; then echo "dev_up: $name already running (pid $(cat "$RUN/$name.pid"))"; return; fi
  setsid "$@" >"$RUN/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$RUN/$name.pid"
}

wait_for() {  # wait_for WHAT SECONDS CMD...
  local what="$1" seconds="$2"; shift 2
  for _ in $(seq "$((seconds * 2))"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "dev_up: $what did not come up in ${seconds}s; see $RUN/logs/" >&2
  exit 1
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# -- S3 keys of this stack, made once; the URLs are written again on every start -------------------------
if [[ ! -f "$RUN/secrets.env" ]]; then
  cat >"$RUN/secrets.env" <<ENV
export CHOREO_S3_ACCESS_KEY=dev$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')
export CHOREO_S3_SECRET_KEY=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
ENV
fi
cat >"$RUN/dev.env" <<ENV
# Written by scripts/dev_up.sh on every start, from the current CHOREO_DEV_* settings.
source "$RUN/secrets.env"
export CHOREO_ENVIRONMENT=development
export CHOREO_REDIS_URL=redis://127.0.0.1:$REDIS_PORT/$REDIS_DB
export CHOREO_S3_ENDPOINT_URL=http://127.0.0.1:$S3_PORT
export CHOREO_S3_BUCKET=choreo
export CHOREO_CALLBACK_ALLOW_LOOPBACK=true
ENV
chmod 600 "$RUN/secrets.env" "$RUN/dev.env"
# shellcheck disable=SC1091
source "$RUN/dev.env"
cat >"$RUN/s3.json" <<JSON
{"identities": [{"name": "choreo", "credentials": [{"accessKey": "$CHOREO_S3_ACCESS_KEY",
  "secretKey": "$CHOREO_S3_SECRET_KEY"}], "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
JSON
chmod 600 "$RUN/s3.json"

# -- Redis: use the running one, else start one that keeps an append-only file ------------------------------
if port_open "$REDIS_PORT"; then
  REDIS_NOTE="the one already answering on 127.0.0.1:$REDIS_PORT, used as it is (its own persistence settings)"
else
  REDIS_NOTE="its own, append-only (fsync every second), data in $RUN/redis"
  command -v redis-server >/dev/null || { echo "dev_up: no Redis on $REDIS_PORT and no redis-server" >&2; exit 1; }
  mkdir -p "$RUN/redis"
  start redis redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --appendonly yes --appendfsync everysec \
    --dir "$RUN/redis"
  wait_for Redis 20 port_open "$REDIS_PORT"
fi

# -- SeaweedFS: master, volume, filer and the S3 gateway in one process, loopback only ---------------------
mkdir -p "$RUN/seaweed"
start seaweed "$VENV_BIN/weed" server -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$RUN/seaweed" \
  -master.port="$MASTER_PORT" -volume.port="$VOLUME_PORT" -volume.max=0 -volume.preStopSeconds=0 -master.volumeSizeLimitMB=256 \
  -filer -filer.port="$FILER_PORT" -s3 -s3.port="$S3_PORT" -s3.port.iceberg=0 -s3.port.lance=0 \
  -s3.config="$RUN/s3.json" -metricsPort=0
wait_for "SeaweedFS S3" 60 "$VENV_BIN/python" -c "
from choreo.service.context import get_context
get_context().storage.ensure_bucket()"

# -- API and workers --------------------------------------------------------------------------------------
cd "$ROOT"
# The Studio page at /studio/ uploads to and reads from S3 with presigned URLs: the API sets the
# bucket's CORS rules to admit the page's origins. S3 listens on 127.0.0.1, which the browser reaches.
export CHOREO_STUDIO_ORIGINS="http://$API_HOST:$API_PORT,http://localhost:$API_PORT"
# --no-proxy-headers: the API reads X-Forwarded-For itself, from CHOREO_TRUSTED_PROXIES only.
start api "$VENV_BIN/python" -m uvicorn --factory api.main:create_app --host "$API_HOST" --port "$API_PORT" \
  --no-proxy-headers
CELERY=("$VENV_BIN/python" -m celery -A worker.app worker --loglevel=INFO --prefetch-multiplier=1
        --without-gossip --without-mingle)
start cpu-worker "${CELERY[@]}" -Q cpu -P threads -c 2 -n "cpu-dev@%h"
start gpu-worker "${CELERY[@]}" -Q gpu -P threads -c 2 -n "gpu-dev@%h"
wait_for API 60 "$VENV_BIN/python" -c "
import httpx; httpx.get('http://$API_HOST:$API_PORT/readyz', timeout=2).raise_for_status()"
for worker in cpu-worker gpu-worker; do
  wait_for "$worker" 90 grep -q " ready." "$RUN/logs/$worker.log"
done

# -- a development key for team dev (content, fitness and admin) ------------------------------------------
key="$("$VENV_BIN/choreo" keys create --team dev --name "make up $(date -u +%FT%TZ)" \
        --scopes content,fitness,admin 2>/dev/null)"
echo "$key" >"$RUN/dev-api-key"
"$VENV_BIN/choreo" admin callback-secret --team dev >"$RUN/dev-callback-secret"
chmod 600 "$RUN/dev-api-key" "$RUN/dev-callback-secret"

cat <<MSG
Choreo is up.
  API:      http://$API_HOST:$API_PORT   (docs at http://$API_HOST:$API_PORT/docs)
  Studio:   http://$API_HOST:$API_PORT/studio/   (sign in with the key below)
  S3:       http://127.0.0.1:$S3_PORT  (SeaweedFS; keys in $RUN/secrets.env)
  Redis:    $REDIS_NOTE
  logs:     $RUN/logs/
  callbacks are signed with the secret in $RUN/dev-callback-secret (loopback receivers allowed)
  API key:  $key
Use it:
  export CHOREO_API_URL=http://$API_HOST:$API_PORT CHOREO_API_KEY=$key
  choreo submit demo/Kevin_MacLeod_-_Vibe_Ace.ogg --wait -o out/service
Stop everything with: make down   (scripts/dev_down.sh)
MSG
