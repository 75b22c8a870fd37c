# The multi-host path for real on one machine: two network namespaces joined by a veth pair
# stand for two hosts, 10.77.0.1 and 10.77.0.2. mpirun runs in the first with a hostfile naming
# both, and starts the second's daemon through a remote-shell agent that enters that namespace
# (where ssh would log in to another host); the ranks then talk TCP over the veth pair only.
# The run must train exactly like a 2-rank run on one host, and its traffic must have crossed
# the veth pair. Needs root for the namespaces: skipped (77), saying why, where they or the
# veth pair cannot be made (no root, a container without CAP_SYS_ADMIN or CAP_NET_ADMIN).
source "$(dirname "$0")/lib.bash"
require_mpi
[ "$(id -u)" = 0 ] || { echo "SKIP: creating network namespaces needs root"; exit 77; }
command -v ip >/dev/null || { echo "SKIP: ip (iproute2) is missing"; exit 77; }
ns0="difftx$$a" ns1="difftx$$b"
cleanup() {
  ip netns del "$ns0" 2>/dev/null || true
  ip netns del "$ns1" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# Namespaces, a veth pair between them, and entering one: what a container may forbid.
make_hosts() {
  ip netns add "$ns0" && ip netns add "$ns1" &&
    ip link add veth0 netns "$ns0" type veth peer name veth1 netns "$ns1" && ip netns exec "$ns0" true
}
if ! make_hosts 2>"$work/netns.txt"; then
  echo "SKIP: cannot make two network namespaces joined by a veth pair here: $(tr '\n' ' ' < "$work/netns.txt")"
  exit 77
fi
ip -n "$ns0" addr add 10.77.0.1/24 dev veth0
ip -n "$ns1" addr add 10.77.0.2/24 dev veth1
for link in "$ns0 veth0" "$ns0 lo" "$ns1 veth1" "$ns1 lo"; do
  set -- $link
  ip -n "$1" link set "$2" up
done

cat > "$work/agent" <<AGENT
#!/bin/sh
# mpirun's remote shell for this test: "host" 10.77.0.N is network namespace N.
host="\$1"; shift
case "\$host" in
  10.77.0.1) ns=$ns0 ;;
  10.77.0.2) ns=$ns1 ;;
  *) echo "agent: unknown host \$host" >&2; exit 1 ;;
esac
echo "\$host" >> "$work/agent.log"
exec ip netns exec "\$ns" sh -c "\$*"
AGENT
chmod +x "$work/agent"
printf '10.77.0.1 slots=1\n10.77.0.2 slots=1\n' > "$work/hostfile"

prepare_small_corpus
common=(--config "$root/tests/fixtures/train/diff.json" --data "$work/data" --steps 12 --seq-len 64 --micro-batch 8
        --lr 3e-3 --warmup 3 --eval-every 6 --eval-batches 2 --checkpoint-every 0 --quiet)
mpi_run -np 2 "$difftx" train "${common[@]}" --out "$work/one_host"
timeout 300 ip netns exec "$ns0" mpirun --hostfile "$work/hostfile" -np 2 --mca plm_rsh_agent "$work/agent" \
  --mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 \
  -x OMP_NUM_THREADS=1 "$difftx" train "${common[@]}" --out "$work/two_hosts" --check-replicas

grep -qx 10.77.0.2 "$work/agent.log" || { echo "FAIL: mpirun did not start a daemon on 10.77.0.2"; exit 1; }
bytes="$(ip -n "$ns0" -s -j link show veth0 | python3 -c \
  'import json, sys; s = json.load(sys.stdin)[0]["stats64"]; print(s["rx"]["bytes"] + s["tx"]["bytes"])')"
echo "veth traffic: $bytes bytes"
# 12 steps move the 0.13M-parameter gradients and weights across: megabytes, not a handshake.
[ "$bytes" -gt 2000000 ] || { echo "FAIL: only $bytes bytes crossed the veth pair"; exit 1; }
metrics_match "$work/one_host/metrics.jsonl" "$work/two_hosts/metrics.jsonl" 1e-5 2e-3
echo "PASS"
