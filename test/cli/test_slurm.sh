#!/usr/bin/env bash
# Slurm for real: a one-node Slurm from Debian's packages (slurm-wlm, munge) started in a temporary
# folder — munged with a key and socket of its own, slurmctld and slurmd as plain daemons (no
# systemd, no cgroups: proctrack/linuxproc, task/none), a node with this machine's CPUs and memory
# and its GPUs as gres (on a machine without any, two stand-ins: gres files that are no GPU, so
# that the example's --gres=gpu:1 is kept and Slurm still sets CUDA_VISIBLE_DEVICES) — runs examples/sweep/slurm-array.sbatch as a job
# array of two shards on the host backend, then README's merge job after it
# (sbatch --dependency=afterany); the merged summary must hold every workload once.
# SAGERUN_SLURM_SWEEP=FILE (test/bench/gpus/run-gpu.sh, on a GPU node) runs that sweep instead, as
# an array of one task per GPU of the node with SAGERUN_SLURM_ARGS, checks that every task and the
# merge completed and that the merged summary holds every point, and copies the results to
# SAGERUN_SLURM_KEEP.
# SKIPs, saying why, where Slurm cannot start (packages missing, not root, a daemon that does not
# come up); SAGERUN_REQUIRE_SLURM=1 (CI) makes that a failure. The daemons are stopped on every
# exit.
set -u
source "$(dirname "$0")/lib.sh"
SBATCH_FILE=$ROOT/examples/sweep/slurm-array.sbatch
SWEEP=$ROOT/test/data/sweep-host.json
C=$TMP/slurm
pids=()

stop_cluster() {
    if [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ]; then
        scancel --quiet --user="$(id -un)" 2>/dev/null # this cluster's jobs: ours alone
        for _ in $(seq 50); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
    fi
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$p" 2>/dev/null
    done
    pids=()
}
trap 'stop_cluster; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

cannot_start() { # cannot_start WHY [LOG]: SKIP, or fail when Slurm is required
    if [ "${SAGERUN_REQUIRE_SLURM:-0}" = 1 ]; then
        fail "Slurm must start here (SAGERUN_REQUIRE_SLURM=1): $1" "${2:-}"
        finish
        exit 1
    fi
    echo "SKIP: Slurm cannot start here: $1"
    [ -n "${2:-}" ] && sed 's/^/  | /' <<<"$2"
    exit 0
}

for tool in munged mungekey slurmctld slurmd sbatch squeue scontrol sinfo scancel; do
    command -v "$tool" >/dev/null || cannot_start "no $tool (apt-get install slurm-wlm munge; tools/install-deps.sh does)"
done
[ "$(id -u)" -eq 0 ] || cannot_start "slurmd runs jobs as their user only as root (running as uid $(id -u))"
if ! "$S" list --backend host 2>/dev/null | grep -q '^  reference-mt '; then
    echo "SKIP: the host variants (plugins/reference*.so) are not built"; exit 0
fi

# Two free TCP ports on the loopback for slurmctld and slurmd.
free_ports() {
    python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])'
}

# The gres of the node: its GPUs (/dev/nvidia0, ...), else two stand-in files.
gres_files=()
for f in /dev/nvidia[0-9] /dev/nvidia[0-9][0-9]; do [ -c "$f" ] && gres_files+=("$f"); done
[ ${#gres_files[@]} -gt 0 ] || gres_files=(/dev/null /dev/zero)

write_conf() { # the cluster's files under $C
    local host cpus mem ports
    host=$(hostname -s); cpus=$(nproc)
    mem=$(awk '/^MemTotal:/ { print int($2 / 1024 * 0.8) }' /proc/meminfo)
    read -r -a ports <<<"$(free_ports)"
    # munged wants its socket's folders searchable by all (mktemp -d made $TMP 0700)
    chmod 711 "$TMP" && mkdir -p "$C"/{state,spool,log,run} && mkdir -m 700 "$C/key" && chmod 755 "$C/run"
    cat > "$C/slurm.conf" <<EOF
ClusterName=sagerun-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=${ports[0]}
SlurmdPort=${ports[1]}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$C/run/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$C/state
SlurmdSpoolDir=$C/spool
SlurmctldPidFile=$C/run/slurmctld.pid
SlurmdPidFile=$C/run/slurmd.pid
SlurmctldLogFile=$C/log/slurmctld.log
SlurmdLogFile=$C/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
MinJobAge=600
GresTypes=gpu
NodeName=sagerun-node NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem Gres=gpu:${#gres_files[@]} State=UNKNOWN
PartitionName=test Nodes=sagerun-node Default=YES MaxTime=INFINITE State=UP
EOF
    # the example's --gres=gpu:1 is kept: Slurm hands each task one GPU and sets
    # CUDA_VISIBLE_DEVICES. The node's own GPUs where it has some, else two stand-ins (files that are
    # no GPU: the CPU CI machine), so that the array runs the same without GPUs.
    local f
    for f in "${gres_files[@]}"; do echo "NodeName=sagerun-node Name=gpu File=$f"; done > "$C/gres.conf"
    # inside an outer Slurm job, its SLURM_* variables would steer sbatch: this cluster only
    unset $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p')
    export SLURM_CONF=$C/slurm.conf
}

# up SECONDS TEST...: waits until TEST succeeds; false after SECONDS
up() {
    local secs=$1; shift
    for _ in $(seq $((secs * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
    return 1
}

start_cluster() {
    mungekey --create --keyfile="$C/key/munge.key" >/dev/null 2>&1 \
        || cannot_start "mungekey could not write a key"
    munged --foreground --key-file="$C/key/munge.key" --socket="$C/run/munge.socket" \
        --pid-file="$C/run/munged.pid" --log-file="$C/log/munged.log" \
        --seed-file="$C/run/munged.seed" > "$C/log/munged.out" 2>&1 &
    pids+=($!)
    up 10 sh -c "munge -S '$C/run/munge.socket' -n | unmunge -S '$C/run/munge.socket'" \
        || cannot_start "munged did not start" "$(tail -n 5 "$C/log/munged.log" "$C/log/munged.out" 2>&1)"
    slurmctld -D > "$C/log/slurmctld.out" 2>&1 &
    pids+=($!)
    slurmd -D -N sagerun-node > "$C/log/slurmd.out" 2>&1 &
    pids+=($!)
    up 60 sh -c 'sinfo -h -N -o "%t" | grep -qx idle' \
        || cannot_start "the node did not become idle in 60 s" \
                        "$(sinfo -N 2>&1; tail -n 5 "$C/log/slurmctld.log" "$C/log/slurmd.log" 2>&1)"
    echo "ok   a one-node Slurm is up ($(sinfo -h -o '%P %D %t %G'))"
}

# job_state ID: the job's JobState (an array job: every task's, one per line)
job_state() {
    scontrol -o show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2
}

# wait_done ID SECONDS: true once no task of the job is PENDING, RUNNING or the like
wait_done() {
    local states
    for _ in $(seq $(($2 * 2))); do
        states=$(job_state "$1")
        [ -n "$states" ] && ! grep -qvE '^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE)$' <<<"$states" \
            && return 0
        sleep 0.5
    done
    return 1
}

write_conf
start_cluster

OUT=$TMP/results
mkdir -p "$TMP/work"
cd "$TMP/work" || exit 1
export PATH="$(dirname "$S"):$PATH" SWEEP OUT SAGERUN_ARGS="--backend host --quiet"
if [ -n "${SAGERUN_SLURM_SWEEP:-}" ]; then # a sweep of the caller's, a task per GPU of the node
    SWEEP=$SAGERUN_SLURM_SWEEP SAGERUN_ARGS=${SAGERUN_SLURM_ARGS:-}
    check "sbatch the sweep as an array of ${#gres_files[@]} tasks" 0 sbatch --parsable \
        --array=0-$((${#gres_files[@]} - 1)) --cpus-per-task=1 "$SBATCH_FILE"
    JOB=$(tail -1 <<<"$out")
    check "sbatch the merge job after it" 0 sbatch --parsable --dependency="afterany:$JOB" \
        --output=merge-%j.log --wrap "sagerun merge $OUT/shard-* --out-dir $OUT/merged"
    MERGE=$(tail -1 <<<"$out")
    wait_done "$MERGE" 1200 || fail "the jobs ended in 1200 s" "$(squeue 2>&1)"
    [ "$(job_state "$JOB" | sort -u)" = COMPLETED ] && [ "$(job_state "$MERGE")" = COMPLETED ] \
        && echo "ok   every task and the merge completed" \
        || fail "every task and the merge completed" "$(job_state "$JOB"; cat "$TMP"/work/*.log)"
    py "the merged summary holds every point, each bound to a GPU" '
import json, sys
m = json.load(open(sys.argv[1]))
assert "missing" not in m and len(m["workloads"]) == m["sweep"]["workload_count"], m.get("missing")
assert all((w["ran_on"]["cuda_visible_devices"] or "").isdigit() for w in m["workloads"])
' "$OUT/merged/summary.json"
    [ -n "${SAGERUN_SLURM_KEEP:-}" ] && cp -r "$OUT" "$SAGERUN_SLURM_KEEP" && cp "$TMP"/work/*.log "$SAGERUN_SLURM_KEEP/"
    finish
    exit
fi
# The example asks 4 CPUs per task; a CI machine may have 2: one each, so both shards run at once.
check "sbatch the example as a job array of 2 shards" 0 \
    sbatch --parsable --array=0-1 --cpus-per-task=1 "$SBATCH_FILE"
JOB=$(tail -1 <<<"$out")
check "sbatch the merge job after it (afterany), as README says" 0 \
    sbatch --parsable --job-name=sagerun-merge --dependency="afterany:$JOB" --output=merge-%j.log \
    --wrap "sagerun merge $OUT/shard-* --out-dir $OUT/merged"
MERGE=$(tail -1 <<<"$out")
if wait_done "$MERGE" 600; then
    echo "ok   both jobs ended"
else
    fail "the jobs did not end in 600 s" "$(squeue 2>&1; scontrol show job "$JOB" 2>&1 | head -30)"
fi
logs=$(for f in "$TMP"/work/*.log; do echo "== $f"; cat "$f"; done 2>&1)
states=$(job_state "$JOB" | sort | uniq -c | tr -s ' ')
[ "$states" = " 2 COMPLETED" ] && echo "ok   the 2 array tasks completed" \
    || fail "the 2 array tasks completed (got:$states)" "$logs"
[ "$(job_state "$MERGE")" = COMPLETED ] && echo "ok   the merge job completed" \
    || fail "the merge job completed (got: $(job_state "$MERGE"))" "$logs"
for i in 0 1; do
    [ -s "$TMP/work/sagerun-sweep-${JOB}_$i.log" ] && echo "ok   task $i wrote its log" \
        || fail "task $i wrote sagerun-sweep-${JOB}_$i.log" "$(ls "$TMP/work")"
done

py "the shards are the array's tasks" '
import json, sys
for i in (0, 1):
    s = json.load(open(f"{sys.argv[1]}/shard-{i}/summary.json"))
    assert s["shard"] == {"index": i, "count": 2}, s["shard"]
    assert all(w["status"] == "ok" for w in s["workloads"]), s["workloads"]
    # --gres=gpu:1: Slurm bound the task to one GPU of the node (or a stand-in)
    assert all((w["ran_on"]["cuda_visible_devices"] or "").isdigit() for w in s["workloads"]), s["workloads"]
' "$OUT"
grep -qE "CUDA_VISIBLE_DEVICES=[0-9]+$" "$TMP/work/sagerun-sweep-${JOB}_0.log" \
    && echo "ok   task 0 says which GPU Slurm gave it" \
    || fail "task 0 says which GPU Slurm gave it" "$(cat "$TMP/work/sagerun-sweep-${JOB}_0.log")"
py "merged: all 3 workloads once, by index, reports copied" "$(cat "$ROOT/test/cli/check_host_merge.py")" "$OUT/merged"
check "the merged summary shows" 0 "$S" show "$OUT/merged/summary.json" \
    && contains "every workload" "n96"

# An array with a gap would leave a shard out: each task refuses it, saying why.
check "sbatch an array with a gap" 0 sbatch --parsable --array=0,2 --cpus-per-task=1 \
    --output=gap-%a.log "$SBATCH_FILE"
GAP=$(tail -1 <<<"$out")
wait_done "$GAP" 120 || fail "the gap array ended in 120 s"
[ "$(job_state "$GAP" | sort -u)" = FAILED ] && echo "ok   its tasks failed" \
    || fail "its tasks failed (got: $(job_state "$GAP" | tr '\n' ' '))"
grep -q "the array must be one contiguous range (got 0-2, 2 tasks)" gap-0.log \
    && echo "ok   and said why" || fail "and said why" "$(cat gap-*.log 2>&1)"
finish
