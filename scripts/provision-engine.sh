#!/usr/bin/env bash
# Provision a local Docker Engine and the Agent Sandbox runtime images.
#
#   scripts/provision-engine.sh          make the engine answer, build missing images
#   scripts/provision-engine.sh --stop   stop the dockerd this script started (if any)
#
# Idempotent: when the engine answers and every image exists it only checks and
# prints the image list (a couple of seconds). No image is ever pulled: the base
# image is built from Debian packages with debootstrap + `docker import`; the
# per-runtime images add labels on top of it, and the Python one Debian's numpy,
# pandas, matplotlib and Pillow.
#
# Environment:
#   DOCKER_HOST                      use that engine; fail if it does not answer
#   AGENT_SANDBOX_DOCKERD_LOG        dockerd log   (default ${XDG_RUNTIME_DIR:-/tmp}/agent-sandbox-dockerd.log)
#   AGENT_SANDBOX_DOCKERD_PIDFILE    dockerd pid   (default /tmp/agent-sandbox-dockerd.pid)
#   AGENT_SANDBOX_DEBIAN_MIRROR      Debian mirror (default: first URIs: of /etc/apt/sources.list.d/debian.sources)
set -euo pipefail

BASE_IMAGE=agent-sandbox/base:bookworm
RUNTIMES=(python node bash linux)
SUITE=bookworm
DOCKERD_LOG=${AGENT_SANDBOX_DOCKERD_LOG:-${XDG_RUNTIME_DIR:-/tmp}/agent-sandbox-dockerd.log}
DOCKERD_PIDFILE=${AGENT_SANDBOX_DOCKERD_PIDFILE:-/tmp/agent-sandbox-dockerd.pid}
LOCK_FILE=/tmp/agent-sandbox-provision.lock
APT_OPTS=(-o DPkg::Lock::Timeout=600 -o Acquire::Retries=3)
LOCAL_SOCKET=/var/run/docker.sock

log() { printf 'provision: %s\n' "$*" >&2; }
# run_logged LOGFILE CMD...: keep noisy output in LOGFILE, show its tail on failure.
run_logged() {
  local logfile=$1 rc=0
  shift
  "$@" >"$logfile" 2>&1 </dev/null || rc=$?
  if [ "$rc" -ne 0 ]; then
    printf 'provision: command failed (exit %s): %s\nprovision: last 30 lines of %s:\n' "$rc" "$*" "$logfile" >&2
    tail -n 30 "$logfile" >&2
    exit "$rc"
  fi
  rm -f "$logfile"
}
die() { printf 'provision: error: %s\n' "$*" >&2; exit 1; }
is_root() { [ "$(id -u)" -eq 0 ]; }
need_root() { is_root || die "$1 needs root; rerun with sudo: sudo $0"; }

usage() {
  sed -n '2,16s/^# \{0,1\}//p' "$0"
}

# ---------------------------------------------------------------- --stop ----
stop_engine() {
  if [ ! -f "$DOCKERD_PIDFILE" ]; then
    log "no pid file at $DOCKERD_PIDFILE: this script did not start a dockerd, nothing to stop"
    return 0
  fi
  local pid
  pid=$(tr -dc '0-9' <"$DOCKERD_PIDFILE")
  if [ -z "$pid" ] || [ "$(cat "/proc/$pid/comm" 2>/dev/null || true)" != dockerd ]; then
    log "dockerd from $DOCKERD_PIDFILE (pid ${pid:-?}) is not running; removing stale pid file"
    rm -f "$DOCKERD_PIDFILE"
    return 0
  fi
  log "stopping dockerd (pid $pid)"
  kill -TERM "$pid"
  local i
  for ((i = 0; i < 300; i++)); do
    [ -d "/proc/$pid" ] || break
    sleep 0.1
  done
  if [ -d "/proc/$pid" ]; then
    log "dockerd (pid $pid) still running after 30 s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      [ -d "/proc/$pid" ] || break
      sleep 0.1
    done
  fi
  [ -d "/proc/$pid" ] && die "dockerd (pid $pid) did not exit"
  rm -f "$DOCKERD_PIDFILE"
  log "dockerd stopped"
}

# ---------------------------------------------------------------- engine ----
DOCKER=""

# Print the server version if $1 (a docker client) can talk to the engine;
# the client's error text goes to $CLIENT_ERR.
CLIENT_ERR=$(mktemp /tmp/agent-sandbox-provision.XXXXXX)
trap 'rm -f "$CLIENT_ERR"' EXIT
server_version() {
  timeout 15 "$1" version --format '{{.Server.Version}}' 2>"$CLIENT_ERR"
}

# Choose a client that works against the engine; prefer Debian's /usr/bin/docker.
# Sets DOCKER and ENGINE_VERSION; returns 1 if no client gets an answer.
pick_client() {
  local c v candidates=()
  [ -x /usr/bin/docker ] && candidates+=(/usr/bin/docker)
  v=$(command -v docker 2>/dev/null || true)
  [ -n "$v" ] && [ "$v" != /usr/bin/docker ] && candidates+=("$v")
  [ -x /usr/local/bin/docker ] && [ "$v" != /usr/local/bin/docker ] && candidates+=(/usr/local/bin/docker)
  [ "${#candidates[@]}" -gt 0 ] || return 1
  for c in "${candidates[@]}"; do
    if v=$(server_version "$c") && [ -n "$v" ]; then
      DOCKER=$c ENGINE_VERSION=$v
      return 0
    fi
    # A newer client that does not negotiate down: pin the engine's API version.
    if [ -z "${DOCKER_API_VERSION:-}" ] && grep -qi 'too new' "$CLIENT_ERR" &&
      v=$(DOCKER_API_VERSION=1.41 server_version "$c") && [ -n "$v" ]; then
      export DOCKER_API_VERSION=1.41
      DOCKER=$c ENGINE_VERSION=$v
      return 0
    fi
  done
  return 1
}

engine_answers() {
  if [ -z "${DOCKER_HOST:-}" ] && [ -S "$LOCAL_SOCKET" ] && command -v curl >/dev/null 2>&1; then
    # cheap pre-check before spawning clients
    curl -fsS --max-time 3 --unix-socket "$LOCAL_SOCKET" http://x/_ping >/dev/null 2>&1 || return 1
  fi
  pick_client
}

engine_address() { printf '%s' "${DOCKER_HOST:-unix://$LOCAL_SOCKET}"; }

install_engine() {
  need_root "installing docker.io/debootstrap"
  log "installing docker.io (apt-get; may wait for other apt runs)"
  export DEBIAN_FRONTEND=noninteractive
  run_logged /tmp/agent-sandbox-apt.log apt-get "${APT_OPTS[@]}" update
  run_logged /tmp/agent-sandbox-apt.log apt-get "${APT_OPTS[@]}" install -y docker.io
}

wait_for_engine() {
  local deadline=$((SECONDS + $1))
  while ((SECONDS < deadline)); do
    engine_answers && return 0
    sleep 0.5
  done
  return 1
}

# The pid of a running dockerd that serves the local socket: one started without -H/--host (the
# default), or with the local socket among its hosts. A daemon on another socket (rootless, a second
# data root) is not the one to wait for.
local_dockerd_pid() {
  local pid args
  for pid in $(pgrep -x dockerd 2>/dev/null); do
    args=" $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) " || continue
    case "$args" in
      *" -H "* | *" -H="* | *" --host "* | *" --host="*)
        case "$args" in *"$LOCAL_SOCKET"*) echo "$pid" && return ;; esac
        ;;
      *) echo "$pid" && return ;;
    esac
  done
}

start_engine() {
  need_root "starting dockerd"
  local pid
  pid=$(local_dockerd_pid)
  if [ -n "$pid" ]; then
    log "a dockerd is already running (pid $pid); waiting for it to answer"
  else
    mkdir -p "$(dirname "$DOCKERD_LOG")"
    log "starting dockerd, log: $DOCKERD_LOG"
    setsid dockerd >>"$DOCKERD_LOG" 2>&1 </dev/null 9>&- &
    pid=$!
    echo "$pid" >"$DOCKERD_PIDFILE"
    log "dockerd pid $pid (pid file $DOCKERD_PIDFILE; stop with: $0 --stop)"
  fi
  if ! wait_for_engine 60; then
    log "engine did not answer within 60 s; last 30 lines of $DOCKERD_LOG:"
    tail -n 30 "$DOCKERD_LOG" >&2 2>/dev/null || true
    exit 1
  fi
}

ensure_engine() {
  if [ -n "${DOCKER_HOST:-}" ]; then
    engine_answers || die "DOCKER_HOST=$DOCKER_HOST is set but no engine answers there (not starting a local dockerd; unset DOCKER_HOST to use a local one)"
  elif ! engine_answers; then
    if ! is_root && [ -S "$LOCAL_SOCKET" ] && [ ! -w "$LOCAL_SOCKET" ] && [ -n "$(local_dockerd_pid)" ]; then
      die "an engine runs but $LOCAL_SOCKET is not accessible to uid $(id -u); join the docker group or rerun with sudo: sudo $0"
    fi
    command -v dockerd >/dev/null 2>&1 || install_engine
    # apt may have started it (on systemd machines)
    engine_answers || start_engine
  fi
  log "engine answers at $(engine_address) (Engine $ENGINE_VERSION; client $DOCKER${DOCKER_API_VERSION:+, API $DOCKER_API_VERSION})"
}

# ---------------------------------------------------------------- images ----
image_exists() { "$DOCKER" image inspect "$1" >/dev/null 2>&1; }

ROOTFS=""
cleanup_rootfs() {
  [ -n "$ROOTFS" ] && [ -d "$ROOTFS" ] || return 0
  local m
  # debootstrap/chroot may leave proc/sys/dev mounts behind on failure
  for m in $(awk -v r="$ROOTFS" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  rm -rf --one-file-system "$ROOTFS"
  ROOTFS=""
}

build_base() {
  need_root "building $BASE_IMAGE (debootstrap/chroot)"
  if ! command -v debootstrap >/dev/null 2>&1; then
    log "installing debootstrap"
    export DEBIAN_FRONTEND=noninteractive
    run_logged /tmp/agent-sandbox-apt.log apt-get "${APT_OPTS[@]}" update
    run_logged /tmp/agent-sandbox-apt.log apt-get "${APT_OPTS[@]}" install -y debootstrap
  fi
  local mirror=${AGENT_SANDBOX_DEBIAN_MIRROR:-}
  if [ -z "$mirror" ] && [ -f /etc/apt/sources.list.d/debian.sources ]; then
    mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  fi
  mirror=${mirror:-http://deb.debian.org/debian}

  log "building $BASE_IMAGE from $mirror (about a minute)"
  # Leftovers of an interrupted run (we hold the lock, so none is in use).
  local old
  for old in /var/tmp/agent-sandbox-rootfs.*; do
    [ -d "$old" ] || continue
    log "removing stale $old"
    ROOTFS=$old cleanup_rootfs
  done
  rm -f /var/tmp/agent-sandbox-rootfs.*.log
  ROOTFS=$(mktemp -d /var/tmp/agent-sandbox-rootfs.XXXXXX)
  chmod 755 "$ROOTFS" # becomes / of the image (and apt's _apt user must enter it)
  trap 'cleanup_rootfs; rm -f "$CLIENT_ERR"' EXIT
  trap 'exit 130' INT TERM
  local t0=$SECONDS
  # debootstrap's resolver struggles with big dependency trees: bootstrap a
  # minimal system and let apt inside it install the rest.
  run_logged "$ROOTFS.log" \
    debootstrap --variant=minbase --include=python3,ca-certificates "$SUITE" "$ROOTFS" "$mirror"
  log "debootstrap done ($((SECONDS - t0)) s); installing packages inside the rootfs"

  # Use the host's apt sources (deb822) instead of debootstrap's sources.list.
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    cp /etc/apt/sources.list.d/debian.sources "$ROOTFS/etc/apt/sources.list.d/"
    rm -f "$ROOTFS/etc/apt/sources.list"
  fi
  cp -L /etc/resolv.conf "$ROOTFS/etc/resolv.conf" 2>/dev/null || true
  printf '#!/bin/sh\nexit 101\n' >"$ROOTFS/usr/sbin/policy-rc.d"
  chmod 755 "$ROOTFS/usr/sbin/policy-rc.d"

  run_logged "$ROOTFS.log" \
    chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive HOME=/root sh -ec '
      apt-get -o Acquire::Retries=3 update
      apt-get -o Acquire::Retries=3 install -y --no-install-recommends \
        bash coreutils findutils tar procps python3-pip python3-venv nodejs npm
      apt-get clean
    '

  # Minimal-size cleanup; the engine provides resolv.conf/hosts at run time.
  rm -f "$ROOTFS/usr/sbin/policy-rc.d"
  rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/* "$ROOTFS"/var/cache/debconf/*-old \
    "$ROOTFS"/var/log/* "$ROOTFS"/tmp/* "$ROOTFS"/var/tmp/* "$ROOTFS"/root/.cache
  : >"$ROOTFS/etc/resolv.conf"
  mkdir -p "$ROOTFS/workspace"

  local cmd
  for cmd in bash tar find head stat rm ps pkill python3 pip node npm; do
    chroot "$ROOTFS" /usr/bin/env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      sh -c "command -v $cmd" >/dev/null || die "rootfs lacks $cmd"
  done

  log "importing rootfs as $BASE_IMAGE"
  tar --numeric-owner -C "$ROOTFS" -c . | "$DOCKER" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'LABEL org.agent-sandbox.image=1' \
    --change 'WORKDIR /workspace' \
    --change 'CMD ["bash"]' \
    - "$BASE_IMAGE" >/dev/null
  cleanup_rootfs
  trap 'rm -f "$CLIENT_ERR"' EXIT
  trap - INT TERM
  log "built $BASE_IMAGE ($((SECONDS - t0)) s)"
}

# What each runtime image adds to the base, and the recipe version its label carries: an image
# built by an older recipe is rebuilt (so a machine that kept its images still gets the new ones).
RECIPE=2
runtime_steps() {
  case "$1" in
    # The data libraries from Debian's packages (no PyPI), so the first plot works offline.
    python)
      printf '%s\n' \
        'RUN apt-get -o Acquire::Retries=3 update \' \
        ' && DEBIAN_FRONTEND=noninteractive apt-get -o Acquire::Retries=3 install -y --no-install-recommends \' \
        '      python3-numpy python3-pandas python3-matplotlib python3-pil \' \
        ' && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/debconf/*-old /root/.cache \' \
        ' && python3 -c "import numpy, pandas, matplotlib, PIL"' \
        'ENV MPLBACKEND=Agg'
      ;;
  esac
}

image_current() {
  [ "$("$DOCKER" image inspect --format '{{index .Config.Labels "org.agent-sandbox.recipe"}}' "$1" 2>/dev/null)" = "$RECIPE" ]
}

build_runtime() {
  local runtime=$1 tag="agent-sandbox/$1:$SUITE" steps
  steps=$(runtime_steps "$runtime")
  log "building $tag${steps:+ (installs Debian packages: a minute or two)}"
  # Classic builder: uses the local base without any registry lookup. Host network for the
  # build's apt (the engine may have no bridge); the sandboxes themselves never get it.
  local context
  context=$(mktemp -d /tmp/agent-sandbox-build.XXXXXX) # an empty build context with the Dockerfile
  printf 'FROM %s\n%s\nLABEL org.agent-sandbox.image=1 org.agent-sandbox.runtime=%s org.agent-sandbox.recipe=%s\nWORKDIR /workspace\nCMD ["bash"]\n' \
    "$BASE_IMAGE" "$steps" "$runtime" "$RECIPE" >"$context/Dockerfile"
  DOCKER_BUILDKIT=0 run_logged "$context.log" "$DOCKER" build --network host -q -t "$tag" "$context"
  rm -rf "$context"
}

ensure_images() {
  local r missing=()
  for r in "${RUNTIMES[@]}"; do
    image_current "agent-sandbox/$r:$SUITE" || missing+=("$r")
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    log "all images present"
    return 0
  fi
  image_exists "$BASE_IMAGE" || build_base
  for r in "${missing[@]}"; do build_runtime "$r"; done
}

list_images() {
  local r tag
  for tag in "$BASE_IMAGE" $(printf "agent-sandbox/%s:$SUITE " "${RUNTIMES[@]}"); do
    "$DOCKER" image inspect --format '{{.Size}}' "$tag" |
      awk -v t="$tag" '{printf "%-32s %4d MB\n", t, $1 / 1000000 + 0.5}'
  done
}

# ------------------------------------------------------------------ main ----
case "${1:-}" in
  --stop) stop_engine; exit 0 ;;
  -h | --help) usage; exit 0 ;;
  "") ;;
  *) usage >&2; exit 2 ;;
esac

# Serialize concurrent runs (two builds of the same base would waste minutes).
if [ -e "$LOCK_FILE" ] && [ ! -w "$LOCK_FILE" ]; then
  exec 9<"$LOCK_FILE" # another user's lock file: flock works on a read-only fd
else
  exec 9>>"$LOCK_FILE"
fi
if ! flock -n 9; then
  log "another provision run holds $LOCK_FILE; waiting"
  flock 9
fi

ensure_engine
ensure_images
list_images
