#!/usr/bin/env bash
# Provision a rootful Podman API service with the Agent Sandbox runtime images, for the engine tier's
# second run (scripts/test-all.sh).
#
#   scripts/provision-podman.sh          make Podman's API answer, load missing images from Docker
#   scripts/provision-podman.sh --stop   stop the service this script started (if any)
#
# Installs Debian's podman and catatonit (the init Podman runs for HostConfig.Init) when missing.
# The images come from the Docker Engine that scripts/provision-engine.sh provisioned, through
# `docker save | podman load` (same image ids), so they are never built twice nor pulled. Prints
# the service's address on stdout (unix:///run/agent-sandbox-podman.sock by default).
#
# Environment:
#   AGENT_SANDBOX_PODMAN_SOCKET   socket to serve (default /run/agent-sandbox-podman.sock)
#   AGENT_SANDBOX_PODMAN_LOG      service log (default /tmp/agent-sandbox-podman.log)
#   AGENT_SANDBOX_PODMAN_PIDFILE  service pid (default /tmp/agent-sandbox-podman.pid)
#   DOCKER_HOST                   the Docker Engine to take the images from (default its socket)
set -euo pipefail

SOCKET=${AGENT_SANDBOX_PODMAN_SOCKET:-/run/agent-sandbox-podman.sock}
SERVICE_LOG=${AGENT_SANDBOX_PODMAN_LOG:-/tmp/agent-sandbox-podman.log}
PIDFILE=${AGENT_SANDBOX_PODMAN_PIDFILE:-/tmp/agent-sandbox-podman.pid}
IMAGES=(base python node bash linux)
SUITE=bookworm
APT_OPTS=(-o DPkg::Lock::Timeout=600 -o Acquire::Retries=3)

log() { printf 'provision-podman: %s\n' "$*" >&2; }
die() { printf 'provision-podman: error: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "a rootful Podman service needs root; rerun with sudo: sudo $0"

stop_service() {
  [ -f "$PIDFILE" ] || { log "no pid file at $PIDFILE: this script started no service"; return 0; }
  local pid i
  pid=$(tr -dc '0-9' <"$PIDFILE")
  if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null || true)" = podman ]; then
    log "stopping the Podman service (pid $pid)"
    kill -TERM "$pid"
    for ((i = 0; i < 100; i++)); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
    [ -d "/proc/$pid" ] && kill -KILL "$pid" 2>/dev/null
  fi
  rm -f "$PIDFILE"
}

case "${1:-}" in
  --stop) stop_service; exit 0 ;;
  "") ;;
  *) sed -n '2,17s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac

answers() { [ "$(curl -s --max-time 3 --unix-socket "$SOCKET" http://podman/_ping 2>/dev/null)" = OK ]; }

if ! command -v podman >/dev/null 2>&1 || [ ! -x /usr/bin/catatonit ]; then
  log "installing podman and catatonit (apt-get; may wait for other apt runs)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get "${APT_OPTS[@]}" update >/tmp/agent-sandbox-podman-apt.log 2>&1 ||
    { tail -n 30 /tmp/agent-sandbox-podman-apt.log >&2; die "apt-get update failed"; }
  apt-get "${APT_OPTS[@]}" install -y --no-install-recommends podman catatonit >>/tmp/agent-sandbox-podman-apt.log 2>&1 ||
    { tail -n 30 /tmp/agent-sandbox-podman-apt.log >&2; die "installing podman failed"; }
fi

if answers; then
  log "Podman answers at unix://$SOCKET"
else
  log "starting the Podman API service at unix://$SOCKET, log: $SERVICE_LOG"
  rm -f "$SOCKET"
  setsid podman system service --time=0 "unix://$SOCKET" >>"$SERVICE_LOG" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
  for ((i = 0; i < 100; i++)); do answers && break; sleep 0.2; done
  answers || { tail -n 30 "$SERVICE_LOG" >&2; die "the Podman service did not answer within 20 s"; }
fi

# The images Podman lacks, or holds under another id than Docker's (an image rebuilt since).
missing=()
for image in "${IMAGES[@]}"; do
  tag="agent-sandbox/$image:$SUITE"
  docker_id=$(docker image inspect --format '{{.Id}}' "$tag") || die "Docker has no $tag: run scripts/provision-engine.sh first"
  podman_id=$(podman image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)
  [ "sha256:${podman_id#sha256:}" = "$docker_id" ] || missing+=("$tag")
done
if [ "${#missing[@]}" -gt 0 ]; then
  log "loading ${missing[*]} from Docker"
  t0=$SECONDS
  # One archive: the layers the images share are read and stored once.
  docker save "${missing[@]}" | podman load -q >&2
  log "loaded in $((SECONDS - t0)) s"
else
  log "all images present"
fi
echo "unix://$SOCKET"
