#!/usr/bin/env bash
# A Redis Cluster of redis-server processes on 127.0.0.1, for the cluster
# tests (tests/tests/redis_cluster.rs) and CI (.ci/run).
#
#   scripts/redis-cluster.sh start DIR    start the nodes, each in DIR/node-PORT (DIR is
#                                         created), on free loopback ports; join them with
#                                         `redis-cli --cluster create`; wait until every node
#                                         says cluster_state:ok and agrees on the slots (and
#                                         every replica is in sync); print the masters' URLs,
#                                         comma-separated, on stdout (also in DIR/urls)
#   scripts/redis-cluster.sh stop DIR     stop every node of DIR (their files stay)
#   scripts/redis-cluster.sh restart DIR  start the stopped nodes of DIR again with their own
#                                         config, cluster state and data; wait as for start
#
# Settings, from the environment:
#   REDIS_CLUSTER_MASTERS       masters (default 3)
#   REDIS_CLUSTER_REPLICAS      replicas per master (default 0)
#   REDIS_CLUSTER_NODE_TIMEOUT  cluster-node-timeout in ms (default 5000)
#   REDIS_CLUSTER_PERSIST       1: an append-only file fsynced on every write, so that a
#                               node keeps its data across stop and restart (default 0)
#
# Any failure exits non-zero, saying what failed (and the end of the logs).
set -euo pipefail

fail() {
  echo "redis-cluster.sh: $*" >&2
  exit 1
}

usage() {
  fail "usage: $0 start|stop|restart DIR"
}

[ $# -eq 2 ] || usage
ACTION=$1
DIR=$2
MASTERS=${REDIS_CLUSTER_MASTERS:-3}
REPLICAS=${REDIS_CLUSTER_REPLICAS:-0}
NODE_TIMEOUT=${REDIS_CLUSTER_NODE_TIMEOUT:-5000}
PERSIST=${REDIS_CLUSTER_PERSIST:-0}

for tool in redis-server redis-cli; do
  command -v "$tool" >/dev/null || fail "$tool is not on the PATH (Debian's redis-server package has both)"
done

# Whether something listens on 127.0.0.1:$1.
listening() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Sets PORT to a port P such that nothing listens on P or on its cluster bus
# port P + 10000, both below the kernel's ephemeral range (32768 and up), so
# that no outgoing connection holds them.
free_port() {
  for _ in $(seq 200); do
    PORT=$((10000 + RANDOM % 10000))
    if ! listening "$PORT" && ! listening $((PORT + 10000)); then
      return 0
    fi
  done
  fail "no free loopback port pair (P, P + 10000) found in 10000-29999"
}

nodes() {
  local d
  for d in "$DIR"/node-*; do
    [ -f "$d/redis.conf" ] && echo "${d##*/node-}"
  done
  return 0
}

show_logs() {
  local log
  for log in "$DIR"/node-*/redis.log "$DIR"/failed-*/redis.log; do
    [ -f "$log" ] || continue
    echo "--- end of $log" >&2
    tail -n 15 "$log" >&2
  done
}

wait_for_ping() {
  local port=$1
  for _ in $(seq 100); do
    [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && return 0
    sleep 0.1
  done
  show_logs
  fail "redis-server on port $port did not answer PING within 10 s"
}

running() {
  local pid
  pid=$(cat "$DIR/node-$1/redis.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  # a killed daemon nobody has reaped yet is not running
  ! grep -q '^[0-9]* (.*) Z' "/proc/$pid/stat" 2>/dev/null
}

start_node() {
  local port=$1
  redis-server "$DIR/node-$port/redis.conf" \
    || { show_logs; fail "redis-server on port $port did not start"; }
  wait_for_ping "$port"
}

role() {
  local out
  out=$(redis-cli -p "$1" role 2>/dev/null) || return 0
  echo "${out%%$'\n'*}"
}

# Whether node $1 is ready: a master that says cluster_state:ok and owns
# slots, or a replica that says cluster_state:ok and is in sync.
ready() {
  local info myself
  info=$(redis-cli -p "$1" cluster info 2>/dev/null) || return 1
  [[ $info == *cluster_state:ok* ]] || return 1
  case "$(role "$1")" in
    master)
      myself=$(redis-cli -p "$1" cluster nodes 2>/dev/null) || return 1
      myself=$(grep myself <<<"$myself") || return 1
      [[ $myself =~ connected\ [0-9] ]]
      ;;
    slave)
      info=$(redis-cli -p "$1" info replication 2>/dev/null) || return 1
      [[ $info == *master_link_status:up* ]]
      ;;
    *) return 1 ;;
  esac
}

# Every node is ready and `redis-cli --cluster check` finds the slots
# covered and agreed on.
wait_for_cluster() {
  local port ok all
  all=($(nodes))
  for _ in $(seq 300); do
    ok=1
    for port in "${all[@]}"; do
      ready "$port" || ok=0
    done
    if [ "$ok" = 1 ] && redis-cli --cluster check "127.0.0.1:${all[0]}" >"$DIR/check.log" 2>&1; then
      return 0
    fi
    sleep 0.1
  done
  cat "$DIR/check.log" >&2 2>/dev/null || true
  show_logs
  fail "the cluster in $DIR did not reach cluster_state:ok on every node within 30 s"
}

masters_urls() {
  local port urls=""
  for port in $(nodes); do
    if [ "$(role "$port")" = master ]; then
      urls="$urls${urls:+,}redis://127.0.0.1:$port"
    fi
  done
  echo "$urls"
}

# Whether the redis-server of node directory $2 answers on port $1 (and not
# another one that took the port first); gives up when its log says the
# port is taken, or after 10 s.
answers() {
  local out
  for _ in $(seq 100); do
    out=$(redis-cli -p "$1" config get dir 2>/dev/null) || out=
    [[ $out == *"$2"* ]] && return 0
    grep -qE 'Address already in use|Failed listening' "$2/redis.log" 2>/dev/null && return 1
    sleep 0.1
  done
  return 1
}

# Starts a new node in DIR/node-PORT on a free port, and sets PORT. When the
# port was taken meanwhile (another cluster starting beside this one), the
# node's directory is kept as DIR/failed-PORT and another port is tried.
new_node() {
  local node_dir pid appendonly
  if [ "$PERSIST" = 1 ]; then
    appendonly="appendonly yes
appendfsync always"
  else
    appendonly="appendonly no"
  fi
  for _ in 1 2 3 4 5; do
    free_port
    mkdir -p "$DIR/node-$PORT"
    node_dir=$(cd "$DIR/node-$PORT" && pwd -P)
    cat >"$node_dir/redis.conf" <<EOF
port $PORT
bind 127.0.0.1
cluster-enabled yes
cluster-config-file nodes.conf
cluster-node-timeout $NODE_TIMEOUT
save ""
$appendonly
dir $node_dir
daemonize yes
pidfile $node_dir/redis.pid
logfile $node_dir/redis.log
EOF
    if redis-server "$node_dir/redis.conf" && answers "$PORT" "$node_dir"; then
      return 0
    fi
    if pid=$(cat "$node_dir/redis.pid" 2>/dev/null); then
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -rf "$DIR/failed-$PORT"
    mv "$node_dir" "$DIR/failed-$PORT"
  done
  show_logs
  fail "no redis-server could be started on 5 ports in a row"
}

case "$ACTION" in
  start)
    [ "$MASTERS" -ge 3 ] || fail "a Redis Cluster needs at least 3 masters (REDIS_CLUSTER_MASTERS=$MASTERS)"
    mkdir -p "$DIR"
    [ -z "$(nodes)" ] || fail "$DIR already holds cluster nodes: use restart, or another directory"
    addresses=()
    for _ in $(seq $((MASTERS * (1 + REPLICAS)))); do
      new_node
      addresses+=("127.0.0.1:$PORT")
    done
    redis-cli --cluster create "${addresses[@]}" --cluster-replicas "$REPLICAS" --cluster-yes \
      >"$DIR/create.log" 2>&1 \
      || { cat "$DIR/create.log" >&2; show_logs; fail "redis-cli --cluster create failed"; }
    wait_for_cluster
    masters_urls >"$DIR/urls"
    cat "$DIR/urls"
    ;;
  stop)
    for port in $(nodes); do
      pid=$(cat "$DIR/node-$port/redis.pid" 2>/dev/null) || continue
      kill "$pid" 2>/dev/null || true
    done
    for port in $(nodes); do
      for _ in $(seq 50); do
        running "$port" || break
        sleep 0.1
      done
      if running "$port"; then
        kill -9 "$(cat "$DIR/node-$port/redis.pid")" 2>/dev/null || true
      fi
    done
    ;;
  restart)
    [ -n "$(nodes)" ] || fail "$DIR holds no cluster nodes to restart"
    for port in $(nodes); do
      running "$port" || start_node "$port"
    done
    wait_for_cluster
    masters_urls >"$DIR/urls"
    cat "$DIR/urls"
    ;;
  *)
    usage
    ;;
esac
