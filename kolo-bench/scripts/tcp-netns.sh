#!/usr/bin/env bash
# tcp-netns.sh: Kolo over TCP against Open MPI over TCP between two "hosts" on this machine.
#
# Builds two network namespaces (the hosts) joined by veth pairs through a bridge in a third (the launcher's),
# starts an sshd on port 22 of each host, with keys from 'kolo keys generate' and an ssh config of its own, and runs
#   kolo bench allreduce -H kolo-host-0:1,kolo-host-1:1 --network-interface eth0 --transport tcp --compare ...
# in the launcher namespace: one rank per host, Kolo's ranks started over ssh as 'kolo run' starts them, Open MPI's
# by mpirun on the same hosts (btl tcp,self on eth0, its daemons started through the same ssh config). Each host has
# its own host name and its own /dev/shm, as separate machines have. The addresses (10.78.0.0/24) exist only inside
# these namespaces and none has a route anywhere else, so no traffic leaves them. Everything is torn down on exit.
#
# Usage: kolo-bench/scripts/tcp-netns.sh [--out DIR] [-- KOLO_BENCH_OPTIONS...]
#   --out DIR   where tcp-netns.json and tcp-netns.svg go (default: the current directory)
#   options after -- are added to kolo bench's (e.g. --sizes 1KiB..1MiB); the defaults are every size
#   8B..256MiB and --bind-to none (both "hosts" share this machine's CPUs: pinning each host's rank 0 to
#   its CPU 0 would put both ranks on one CPU; mpirun gets the same --bind-to).
#
# Needs root, iproute2, OpenSSH (sshd, ssh), util-linux (unshare) and Open MPI (mpirun, mpicc); without them it
# says why and exits 0.
set -euo pipefail

out_dir=.
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out_dir=${2:?--out needs a directory}; shift 2 ;;
        --) shift; extra=("$@"); break ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) echo "tcp-netns.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done

skip() {
    echo "tcp-netns.sh: skipped: $*"
    exit 0
}
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, sshd)"
for tool in ip ssh ssh-keygen unshare mpirun mpicc; do
    command -v "$tool" >/dev/null || skip "needs $tool on PATH"
done
[ -x /usr/sbin/sshd ] || skip "needs OpenSSH's sshd (apt-get install openssh-server)"

root=$(cd "$(dirname "$0")/../.." && pwd)
kolo="$root/kolo"
id="kb$$"
launcher_ns="$id-l"
hosts=2
subnet=10.78.0
work=$(mktemp -d /tmp/kolo-tcp-netns.XXXXXX)
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)

namespaces() {
    echo "$launcher_ns"
    for ((i = 0; i < hosts; i++)); do echo "$id-h$i"; done
}

cleanup() {
    local ns pid attempt
    for ns in $(namespaces); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -TERM "$pid" 2>/dev/null || true; done
    done
    for ns in $(namespaces); do
        for attempt in $(seq 50); do
            [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break
            for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
            sleep 0.1
        done
        ip netns del "$ns" 2>/dev/null || true
        rm -rf "/etc/netns/$ns"
    done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Build Kolo (and check the bench's options) outside the namespaces, before anything is timed.
"$kolo" bench --help >/dev/null

ip netns add "$launcher_ns" 2>"$work/probe" || skip "cannot create network namespaces here: $(cat "$work/probe")"

hosts_file="$work/hosts"
{
    echo "127.0.0.1 localhost"
    echo "$subnet.1 kolo-launcher"
    for ((i = 0; i < hosts; i++)); do echo "$subnet.$((10 + i)) kolo-host-$i"; done
} >"$hosts_file"
etc_files() {    # every name resolves from the file; nothing answers DNS, so nothing waits for it
    mkdir -p "/etc/netns/$1"
    cp "$hosts_file" "/etc/netns/$1/hosts"
    printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' >"/etc/netns/$1/resolv.conf"
    printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n' >"/etc/netns/$1/nsswitch.conf"
}

ip -n "$launcher_ns" link set lo up
ip -n "$launcher_ns" link add eth0 type bridge
ip -n "$launcher_ns" addr add "$subnet.1/24" dev eth0
ip -n "$launcher_ns" link set eth0 up
etc_files "$launcher_ns"
for ((i = 0; i < hosts; i++)); do
    h="$id-h$i"
    ip netns add "$h"
    ip -n "$h" link set lo up
    ip -n "$launcher_ns" link add "vh$i" type veth peer name eth0 netns "$h"
    ip -n "$launcher_ns" link set "vh$i" master eth0 up
    ip -n "$h" addr add "$subnet.$((10 + i))/24" dev eth0
    ip -n "$h" link set eth0 up
    etc_files "$h"
done

"$kolo" keys generate --out "$work/keys" >/dev/null
cat >"$work/ssh_config" <<EOF
Host *
  User root
  IdentityFile $work/keys/id_ed25519
  IdentitiesOnly yes
  IdentityAgent none
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  GlobalKnownHostsFile /dev/null
  LogLevel ERROR
EOF
mkdir -p /run/sshd
for ((i = 0; i < hosts; i++)); do
    hd="$work/host$i"
    mkdir -p "$hd"
    ssh-keygen -q -t ed25519 -N "" -f "$hd/ssh_host_ed25519_key"
    cat >"$hd/sshd_config" <<EOF
Port 22
ListenAddress $subnet.$((10 + i))
HostKey $hd/ssh_host_ed25519_key
PidFile none
AuthorizedKeysFile $work/keys/authorized_keys
PermitRootLogin yes
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
LogLevel ERROR
EOF
    # Its own host name and /dev/shm, as a separate machine has (else Kolo would see one machine).
    ip netns exec "$id-h$i" unshare --uts --mount --propagation private sh -c \
        "hostname kolo-host-$i && mount -t tmpfs -o mode=1777 tmpfs /dev/shm && exec /usr/sbin/sshd -D -e -f '$hd/sshd_config'" \
        >>"$hd/sshd.log" 2>&1 </dev/null &
done
export KOLO_SSH_COMMAND="ssh -F $work/ssh_config"
for ((i = 0; i < hosts; i++)); do
    for attempt in $(seq 100); do
        ip netns exec "$launcher_ns" $KOLO_SSH_COMMAND -o BatchMode=yes -o ConnectTimeout=2 "kolo-host-$i" true \
            </dev/null 2>/dev/null && break
        [ "$attempt" = 100 ] && { echo "tcp-netns.sh: sshd on kolo-host-$i does not answer: $(cat "$work/host$i/sshd.log")" >&2; exit 1; }
        sleep 0.1
    done
done

given() {    # whether the options after -- include $1
    local a
    for a in "${extra[@]}"; do [ "$a" = "$1" ] && return 0; done
    return 1
}
slots=$(for ((i = 0; i < hosts; i++)); do printf 'kolo-host-%d:1,' "$i"; done)
cmd=("$kolo" bench allreduce -H "${slots%,}" --network-interface eth0 --transport tcp --compare
     --json "$out_dir/tcp-netns.json" --plot "$out_dir/tcp-netns.svg")
given --sizes || cmd+=(--sizes 8B..256MiB)
given --bind-to || cmd+=(--bind-to none)
cmd+=("${extra[@]}")
echo "tcp-netns.sh: ${cmd[*]}" >&2
ip netns exec "$launcher_ns" "${cmd[@]}"
