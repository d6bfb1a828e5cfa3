# SPDX-License-Identifier: MIT
# A one-node Slurm cluster in an nnp-vm guest run with --host-root (the
# host's Debian slurmd, slurmctld and munged), for tests/vm/slurm_*.sh.
# Source in the guest, in the checkout; everything goes under $SLURM_DIR
# (/tmp/slurm), since the host's root is read-only there.
#
# slurm_node_conf [NAME]: cgroup v2 mounted as slurmd wants it (without
# systemd, a system.slice of its own, its controllers enabled for the
# steps' cgroups), and slurm.conf and cgroup.conf for node nnp-vm at
# 10.0.0.1 (nnp-vm --lan: Slurm resolves no address without a
# non-loopback one) with 4 nnp chips as GRES NAME (nnp, or gpu; gres.conf:
# nnptool gres --name NAME), jobs' chips given by
# tools/slurm/nnp-task-prolog, and ConstrainDevices on (it confines a
# job to its chips' device files only with NAME gpu: docs/slurm.md).
# slurm_node_up: a munge key made for this run (mode 600), munged,
# slurmctld and slurmd started; returns once the node is idle (1 if not
# within 15 s).
SLURM_DIR=/tmp/slurm
export SLURM_CONF=$SLURM_DIR/slurm.conf

slurm_node_conf() {
	local s=$SLURM_DIR name=${1:-nnp}
	mkdir -p "$s/spool" "$s/state" "$s/munge" "$s/log" || return 1
	mount -t cgroup2 none /sys/fs/cgroup || return 1
	echo "+cpuset +cpu +memory +pids" >/sys/fs/cgroup/cgroup.subtree_control
	mkdir -p /sys/fs/cgroup/system.slice
	echo "+cpuset +cpu +memory +pids" >/sys/fs/cgroup/system.slice/cgroup.subtree_control
	cat >"$SLURM_CONF" <<CONF
ClusterName=nnp
SlurmctldHost=nnp-vm(10.0.0.1)
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
ReturnToService=2
NodeName=nnp-vm NodeAddr=10.0.0.1 Gres=$name:nnpt:4 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 State=UNKNOWN
PartitionName=main Nodes=nnp-vm Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
	printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\nConstrainDevices=yes\n' >"$s/cgroup.conf"
}

slurm_node_up() {
	local s=$SLURM_DIR i
	head -c 1024 /dev/urandom >"$s/munge/munge.key" && chmod 600 "$s/munge/munge.key" ||
		return 1
	munged --force --key-file="$s/munge/munge.key" --socket="$s/munge/sock" \
		--pid-file="$s/munge/pid" --log-file="$s/munge/log" \
		--seed-file="$s/munge/seed" 2>/dev/null || return 1
	slurmctld && slurmd || return 1
	for i in $(seq 30); do
		sinfo -h -o %T 2>/dev/null | grep -qx idle && return 0
		sleep 0.5
	done
	return 1
}
