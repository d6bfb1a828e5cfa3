# SPDX-License-Identifier: MIT
# A Slurm cluster in nnp-vm guests run with --host-root (the host's
# Debian slurmd, slurmctld and munged), for tests/vm/slurm_*.sh: one node
# in one VM, or a node per chassis of an nnp-pod POD. Source in the
# guest, in the checkout; everything goes under $SLURM_DIR (/tmp/slurm),
# since the host's root is read-only there.
#
# slurm_conf NAME NODE:ADDR...: cgroup v2 mounted as slurmd wants it
# (without systemd, a system.slice of its own, its controllers enabled
# for the steps' cgroups), and slurm.conf and cgroup.conf for the nodes
# given (the first runs slurmctld; an address on a LAN, nnp-vm --lan or
# nnp-pod's: Slurm resolves no address without a non-loopback one), each
# with 4 nnp chips as GRES NAME (nnp, or gpu; gres.conf: nnptool gres
# --name NAME), jobs' chips given by tools/slurm/nnp-task-prolog, and
# ConstrainDevices on (it confines a job to its chips' device files only
# with NAME gpu: docs/slurm.md). A node that stops answering is down
# within SlurmdTimeout (10 s), rather than Slurm's default 300.
# slurm_node_conf [NAME]: the one-node cluster, node nnp-vm at 10.0.0.1.
# slurm_munge_up [KEY]: munged with KEY as its key (a job's nodes share
# one), else with one made for this run; the key file mode 600.
# slurm_wait_idle N: returns once N nodes are idle (1 if not within 15 s).
# slurm_node_up: the one node's munged, slurmctld and slurmd, idle.
# slurm_gres: this node's gres.conf lines of the chips named gpu, as
# nnptool gres writes them for this Slurm (without Links= from 24.05 on,
# which picks by them the wrong way round: docs/slurm.md), into FILE.
# slurm_node_start: the one-node cluster with the chips named gpu, its
# gres.conf from slurm_gres, up: prints "=== up", or "=== down" and the
# logs' ends and returns 1.
# job NAME SRUN-ARGS...: the job, each line of it and of srun after
# "NAME: ", then srun's exit status as "NAME: status=N" (124: it ran over
# 180 s).
SLURM_DIR=/tmp/slurm
export SLURM_CONF=$SLURM_DIR/slurm.conf

slurm_conf() {
	local s=$SLURM_DIR name=$1 node first= names=
	shift
	mkdir -p "$s/spool" "$s/state" "$s/munge" "$s/log" || return 1
	mount -t cgroup2 none /sys/fs/cgroup || return 1
	echo "+cpuset +cpu +memory +pids" >/sys/fs/cgroup/cgroup.subtree_control
	mkdir -p /sys/fs/cgroup/system.slice
	echo "+cpuset +cpu +memory +pids" >/sys/fs/cgroup/system.slice/cgroup.subtree_control
	cat >"$SLURM_CONF" <<CONF
ClusterName=nnp
SlurmctldHost=${1%%:*}(${1#*:})
AuthType=auth/munge
AuthInfo=socket=$s/munge/sock
CredType=cred/munge
SlurmUser=root
GresTypes=$name
SlurmdSpoolDir=$s/spool
SlurmdPidFile=$s/slurmd.pid
SlurmctldPidFile=$s/slurmctld.pid
SlurmdLogFile=$s/log/slurmd.log
SlurmctldLogFile=$s/log/slurmctld.log
StateSaveLocation=$s/state
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
TaskProlog=$PWD/tools/slurm/nnp-task-prolog
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
MpiParams=ports=12000-12999
ReturnToService=2
SlurmdTimeout=10
CONF
	for node; do
		echo "NodeName=${node%%:*} NodeAddr=${node#*:} Gres=$name:nnpt:4 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 State=UNKNOWN"
		names=$names${names:+,}${node%%:*}
	done >>"$SLURM_CONF"
	echo "PartitionName=main Nodes=$names Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES" >>"$SLURM_CONF"
	printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\nConstrainDevices=yes\n' >"$s/cgroup.conf"
}

slurm_node_conf() {
	slurm_conf "${1:-nnp}" nnp-vm:10.0.0.1
}

slurm_munge_up() {
	local s=$SLURM_DIR
	(
		umask 077
		if [ -n "${1:-}" ]; then
			printf %s "$1" >"$s/munge/munge.key"
		else
			head -c 1024 /dev/urandom >"$s/munge/munge.key"
		fi
	) || return 1
	munged --force --key-file="$s/munge/munge.key" --socket="$s/munge/sock" \
		--pid-file="$s/munge/pid" --log-file="$s/munge/log" \
		--seed-file="$s/munge/seed" 2>/dev/null
}

slurm_gres() {
	local v
	v=$(slurmd -V 2>/dev/null)	# "slurm-wlm 24.11.5" (Debian's)
	v=${v##* }
	if [ "${v%%.*}" -ge 24 ] 2>/dev/null; then
		nnptool gres --name gpu --no-links -o "$1"
	else
		nnptool gres --name gpu -o "$1"
	fi
}

slurm_wait_idle() {
	local i
	for i in $(seq 30); do
		[ "$(sinfo -h -N -o %T 2>/dev/null | grep -cx idle)" -ge "$1" ] && return 0
		sleep 0.5
	done
	return 1
}

slurm_node_up() {
	slurm_munge_up && slurmctld && slurmd && slurm_wait_idle 1
}

slurm_node_start() {
	if slurm_node_conf gpu && slurm_gres $SLURM_DIR/gres.conf &&
		slurm_node_up; then
		echo "=== up"
	else
		echo "=== down"
		tail -n 20 $SLURM_DIR/log/*
		return 1
	fi
}

job() {
	local name=$1
	shift
	{ timeout 180 srun -s "$@"; echo "status=$?"; } 2>&1 | sed "s/^/$name: /"
}
