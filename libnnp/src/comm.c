// SPDX-License-Identifier: MIT
/*
 * libnnp communicators: learn every rank's chip and ports (from this
 * process's devices, or from the job's rendezvous), plan one ring over the
 * links that are up, and make each chip its rank on that ring.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xf86drm.h>
#include <nnp_accel.h>

#include "bootstrap.h"
#include "comm.h"
#include "group.h"
#include "job_rank.h"
#include "route_plan.h"
#include "internal.h"
#include "split.h"
#include "log.h"
#include "names.h"
#include "trace.h"

/*
 * A rank that is late (rank 0 writing a checkpoint, a slow data loader)
 * is not dead: a collective waits this long for it. Dead links and chips
 * are found by link-down and the aborts, not by this timer.
 */
#define DEFAULT_COLL_TIMEOUT_S	(30u * 60)

/*
 * Each wait of a communicator's commands for a peer, in ms, from
 * NNP_COLL_TIMEOUT_S (whole seconds): 0 waits for ever, for a runtime
 * whose own watchdog calls nnp_comm_abort(), as with NCCL; past what the
 * device counts (49 days), its longest; anything else, the default.
 */
static uint32_t coll_timeout_ms(void)
{
	const uint32_t most = (DRM_NNP_COMM_TIMEOUT_NEVER - 1) / 1000;
	const char *s = getenv("NNP_COLL_TIMEOUT_S");
	unsigned long long v;
	char *end;

	if (!s || !*s || strspn(s, "0123456789") != strlen(s))
		return DEFAULT_COLL_TIMEOUT_S * 1000;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (!v && !errno)
		return DRM_NNP_COMM_TIMEOUT_NEVER;
	return (errno || v > most ? most : (uint32_t)v) * 1000;
}

/*
 * Whether the communicator's small allreduces alike in a group run as one
 * (hardware interface 1.25): as its config asked (@asked 0 or 1), else as
 * NNP_GROUP_FUSION says (1; unset or 0, each runs on its own, as NCCL's
 * do). It asks every rank to group them alike.
 */
static nnp_result_t group_fusion_on(nnp_device_t *dev, int asked, bool *on)
{
	const char *s = getenv("NNP_GROUP_FUSION");
	uint32_t minor = nnp_device_hw_minor(dev);

	*on = false;
	if (asked < 0 && s && *s && strcmp(s, "0")) {
		if (strcmp(s, "1"))
			return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
					"NNP_GROUP_FUSION=%s: 1, or 0 (the default)", s);
		asked = 1;
	}
	*on = asked == 1 && minor >= 25;
	if (asked == 1 && !*on)
		nnp_log(NNP_LOG_INFO, "%s: hardware interface 1.%u runs no group as one (1.25 does): each allreduce on its own",
			dev->path, minor);
	return NNP_SUCCESS;
}

nnp_result_t nnp_comm_rank_info(nnp_device_t *dev, struct nnp_rank_info *ri)
{
	struct nnp_port_info ports[NNP_MAX_PORTS] = { { .size = sizeof(ports[0]) } };
	struct nnp_device_info info = { .size = sizeof(info) };
	nnp_result_t res = nnp_device_get_info(dev, &info);
	unsigned int p;

	if (res == NNP_SUCCESS)
		res = nnp_device_get_ports(dev, ports, NNP_MAX_PORTS, &ri->nports);
	if (res != NNP_SUCCESS)
		return res;
	ri->chip = info.chip_id;
	if (ri->nports > NNP_MAX_PORTS)
		ri->nports = NNP_MAX_PORTS;
	for (p = 0; p < ri->nports; p++) {
		ri->ports[p].state = ports[p].state;
		ri->ports[p].peer_chip = ports[p].peer_chip;
		ri->ports[p].peer_port = ports[p].peer_port;
	}
	return NNP_SUCCESS;
}

/*
 * A link wired but down as a rank of a job joins may be bouncing: a chip
 * in another chassis being reset (its driver loading, say) takes its links
 * down at both ends for a moment. The rendezvous plans the ring from the
 * port table a rank brings, so give such links LINK_SETTLE_MS to come back
 * first; one still down then is planned around.
 */
#define LINK_SETTLE_MS	250

static bool wired_down(const struct nnp_rank_info *ri)
{
	unsigned int p;

	for (p = 0; p < ri->nports; p++)
		if ((ri->ports[p].state & NNP_LINK_WIRED) &&
		    !(ri->ports[p].state & NNP_LINK_UP))
			return true;
	return false;
}

static nnp_result_t rank_info_settled(nnp_device_t *dev, struct nnp_rank_info *ri)
{
	const struct timespec nap = { 0, 10 * 1000000 };
	int64_t until = nnp_now_ns() + LINK_SETTLE_MS * 1000000ll;
	nnp_result_t res;

	while ((res = nnp_comm_rank_info(dev, ri)) == NNP_SUCCESS &&
	       wired_down(ri) && nnp_now_ns() < until)
		nanosleep(&nap, NULL);
	return res;
}

/*
 * Where point-to-point messages go: to each peer out of this chip's first
 * up port towards it, from it on the port its own first choice lands on.
 */
static int links_to_peers(nnp_comm_t *m, const struct nnp_rank_info *all)
{
	uint32_t me = (uint32_t)m->rank, p;

	m->send_port = calloc((size_t)m->nranks, sizeof(int));
	m->recv_port = calloc((size_t)m->nranks, sizeof(int));
	if (!m->send_port || !m->recv_port)
		return -1;
	for (p = 0; p < (uint32_t)m->nranks; p++) {
		int back = nnp_rank_port_to(all, p, me);

		m->send_port[p] = p == me ? -1 : nnp_rank_port_to(all, me, p);
		m->recv_port[p] = p == me || back < 0 ? -1 :
				  (int)all[p].ports[back].peer_port;
	}
	return 0;
}

/* Free @m; what the tracer buffered of it goes to its file. */
static void comm_free(nnp_comm_t *m)
{
	/* Its view's answers read it: they end first. */
	nnp_job_link_end(m->job);
	nnp_trace_flush();
	free(m->send_port);
	free(m->recv_port);
	free(m->routes);
	free(m->all);
	free(m->shrunk);
	free(m->init);
	free(m->transits);
	free(m);
}

_Static_assert(NNP_ALGO_AUTO == DRM_NNP_ALGO_AUTO &&
	       NNP_ALGO_RING == DRM_NNP_ALGO_RING &&
	       NNP_ALGO_BIDIR == DRM_NNP_ALGO_BIDIR &&
	       NNP_ALGO_RINGS == DRM_NNP_ALGO_RINGS &&
	       NNP_ALGO_TORUS == DRM_NNP_ALGO_TORUS,
	       "NNP_ALGO's algorithms are the driver's");

static void dim_to_drm(const struct nnp_dim *d, struct drm_nnp_ring_dim *o)
{
	*o = (struct drm_nnp_ring_dim){
		.n = d->n, .pos = d->pos, .pairs = d->pairs,
		.next_port = { d->next_port[0], d->next_port[1] },
		.prev_port = { d->prev_port[0], d->prev_port[1] },
	};
}

/*
 * Give communicator @m (rank @rank) the fabric @algo runs on: the torus
 * for torus (and auto, the device's pick, when there is one), else the
 * ring with its port pairs. A driver or device without COMM_TOPOLOGY
 * (driver interface 1.4, hardware 1.7) runs the ring: fine for auto and
 * ring, NNP_ERROR_NOT_SUPPORTED for an algorithm asked for by name.
 */
static nnp_result_t comm_topology(nnp_comm_t *m, uint32_t rank,
				  const struct nnp_topo *topo, enum nnp_algo algo)
{
	struct drm_nnp_comm_topology t = { .comm = m->id, .algo = algo };
	bool torus = topo->w && (algo == NNP_ALGO_AUTO || algo == NNP_ALGO_TORUS);
	int err = EOPNOTSUPP;

	if (torus) {
		dim_to_drm(&topo->torus[rank][0], &t.dim[0]);
		dim_to_drm(&topo->torus[rank][1], &t.dim[1]);
	} else {
		dim_to_drm(&topo->ring[rank], &t.dim[0]);
	}
	/* Before 1.4 the ioctl's number is past the driver's last: EINVAL. */
	if (m->dev->driver_minor >= 4 &&
	    !drmIoctl(m->dev->fd, DRM_IOCTL_NNP_COMM_TOPOLOGY, &t)) {
		nnp_log(NNP_LOG_INFO, "rank %u: allreduce %s on %s: dim 0 %u chips at %u, ports %u/%u%s; dim 1 %u chips at %u, ports %u/%u",
			rank, nnp_algo_names[algo], torus ? "the torus" : "the ring",
			t.dim[0].n, t.dim[0].pos, t.dim[0].next_port[0],
			t.dim[0].prev_port[0], t.dim[0].pairs > 1 ? " and a second pair" : "",
			t.dim[1].n, t.dim[1].pos, t.dim[1].next_port[0],
			t.dim[1].prev_port[0]);
		return NNP_SUCCESS;
	}
	if (m->dev->driver_minor >= 4)
		err = errno;
	if (err == EOPNOTSUPP && (algo == NNP_ALGO_AUTO || algo == NNP_ALGO_RING)) {
		nnp_log(NNP_LOG_INFO, "rank %u: %s has no COMM_TOPOLOGY: allreduce on the ring",
			rank, m->dev->path);
		return NNP_SUCCESS;
	}
	if (err == EOPNOTSUPP)
		return nnp_fail(NNP_ERROR_NOT_SUPPORTED,
				"rank %u: %s cannot run NNP_ALGO=%s: its driver or device has no COMM_TOPOLOGY (driver interface 1.4, hardware interface 1.7)",
				rank, m->dev->path, nnp_algo_names[algo]);
	return nnp_fail(nnp_result_from_errno(err),
			"rank %u: %s refused the %s topology for NNP_ALGO=%s: %s",
			rank, m->dev->path, torus ? "torus" : "ring",
			nnp_algo_names[algo], strerror(err));
}

_Static_assert(NNP_ROUTE_NONE == DRM_NNP_ROUTE_NONE &&
	       NNP_ROUTE_NONE == NNP_HW_ROUTE_NONE,
	       "libnnp's, the driver's and the device's no-route byte agree");

/*
 * Give @m (rank @rank of the @n ranks @all) its routes, for messages to
 * ranks its chip has no link to (driver interface 1.8, hardware 1.12):
 * @given (n bytes), else planned over the ranks' chips; kept in m->routes
 * once the device has them. Without, such messages are NO_PATH, as
 * before routes.
 */
static nnp_result_t comm_routes(nnp_comm_t *m, const struct nnp_rank_info *all,
				uint32_t n, uint32_t rank, const uint8_t *given)
{
	uint8_t *r = malloc(n);
	struct drm_nnp_comm_routes a = {
		.comm = m->id, .nranks = n, .routes = (uintptr_t)r,
	};
	nnp_result_t res = NNP_SUCCESS;
	int err;

	if (!r)
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no host memory for routes of %u ranks", n);
	if (given)
		memcpy(r, given, n);
	else
		res = nnp_route_plan(all, n, rank, NNP_HW_MAX_ROUTED_RANKS, r);
	if (res != NNP_SUCCESS || n < 2 || m->dev->driver_minor < 8) {
		free(r);
		return res;
	}
	if (!drmIoctl(m->dev->fd, DRM_IOCTL_NNP_COMM_ROUTES, &a)) {
		m->routes = r;
		return NNP_SUCCESS;
	}
	err = errno;
	free(r);
	if (err == EOPNOTSUPP) {
		nnp_log(NNP_LOG_INFO, "rank %u: %s has no COMM_ROUTES (hardware interface 1.12): messages only to linked ranks",
			rank, m->dev->path);
		return NNP_SUCCESS;
	}
	return nnp_fail(nnp_result_from_errno(err),
			"rank %u: %s refused the communicator's routes: %s",
			rank, m->dev->path, strerror(err));
}

nnp_result_t nnp_comm_make(nnp_device_t *dev, uint32_t nranks, uint32_t rank,
			   const struct nnp_rank_info *all,
			   const struct nnp_ring *ring,
			   const struct nnp_topo *topo, enum nnp_algo algo,
			   const uint8_t *routes, uint64_t epoch,
			   const struct nnp_comm_opts *o, nnp_comm_t **comm)
{
	struct drm_nnp_comm_create c = {
		.nranks = nranks, .rank = rank, .epoch = epoch,
		.send_port = ring->send_port[rank],
		.recv_port = ring->recv_port[rank],
		.ring = (uintptr_t)ring->order,
		.timeout_ms = o->timeout_ms,
	};
	nnp_result_t res = nnp_trace_open(dev, (int)rank);
	bool fusion;
	nnp_comm_t *m;
	int ret;

	if (res == NNP_SUCCESS)
		res = group_fusion_on(dev, o->group_fusion, &fusion);
	if (res != NNP_SUCCESS)
		return res;
	m = calloc(1, sizeof(*m));
	if (!m)
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no host memory for a communicator");
	*m = (struct nnp_comm){
		.dev = dev, .rank = (int)rank, .nranks = (int)nranks,
		.timeout_ms = o->timeout_ms, .epoch = epoch, .group_fusion = fusion,
		.group_fusion_asked = o->group_fusion,
	};
	/* Checked by the caller as the driver checks it; 0.9 caps both at 32. */
	_Static_assert(sizeof(c.name) == sizeof(m->name), "name sizes differ");
	snprintf(m->name, sizeof(m->name), "%s", o->name);
	memcpy(c.name, m->name, sizeof(c.name));
	m->all = malloc(nranks * sizeof(*all));
	if (!m->all || links_to_peers(m, all)) {
		comm_free(m);
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no host memory for a communicator");
	}
	memcpy(m->all, all, nranks * sizeof(*all));
	ret = drmIoctl(dev->fd, DRM_IOCTL_NNP_COMM_CREATE, &c);
	/* A device before interface 1.4 keeps its own timeout (2 s). */
	if (ret && errno == EOPNOTSUPP && c.timeout_ms) {
		c.timeout_ms = 0;
		ret = drmIoctl(dev->fd, DRM_IOCTL_NNP_COMM_CREATE, &c);
	}
	if (ret) {
		int err = errno;

		comm_free(m);
		if (err == ENOSPC)
			return nnp_fail(NNP_ERROR_BUSY, "rank %u: %s has no free communicator",
					rank, dev->path);
		return nnp_fail(nnp_result_from_errno(err),
				"rank %u: %s refused the communicator (send port %u, receive port %u, epoch %#llx): %s",
				rank, dev->path, c.send_port, c.recv_port,
				(unsigned long long)epoch, strerror(err));
	}
	nnp_log(NNP_LOG_INFO, "rank %u of %u on %s: communicator %u, sends on port %u, receives on port %u, epoch %#llx",
		rank, nranks, dev->path, c.comm, c.send_port, c.recv_port,
		(unsigned long long)epoch);
	m->id = c.comm;
	res = comm_topology(m, rank, topo, algo);
	if (res == NNP_SUCCESS)
		res = comm_routes(m, all, nranks, rank, routes);
	if (res != NNP_SUCCESS) {
		nnp_comm_destroy(m);
		return res;
	}
	*comm = m;
	return NNP_SUCCESS;
}

nnp_result_t nnp_get_unique_id(nnp_unique_id_t *id)
{
	if (!id)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_get_unique_id: id is NULL");
	return nnp_bootstrap_new_id(id);
}

/* nnp_comm_config_t's first version ends with name. */
#define CONFIG_SIZE_0_9	NNP_END_OF(nnp_comm_config_t, name)
/* Does @cfg's size cover @member? */
#define CONFIG_HAS(cfg, member) \
	((cfg)->size >= offsetof(nnp_comm_config_t, member) + sizeof((cfg)->member))

bool nnp_comm_config_blocking(const nnp_comm_config_t *cfg)
{
	return !cfg || !CONFIG_HAS(cfg, blocking) || cfg->blocking;
}

const char *nnp_comm_label(const nnp_comm_t *comm, char *buf, size_t len)
{
	if (!comm || !comm->name[0])
		return "";
	snprintf(buf, len, "comm %s: ", comm->name);
	return buf;
}

void nnp_comm_opts_of(const nnp_comm_t *comm, struct nnp_comm_opts *o)
{
	*o = (struct nnp_comm_opts){
		.timeout_ms = comm->timeout_ms,
		.group_fusion = comm->group_fusion_asked,
	};
	memcpy(o->name, comm->name, sizeof(o->name));
}

nnp_result_t nnp_comm_config_take(const nnp_comm_config_t *cfg, const char *what,
				  const struct nnp_comm_opts *def,
				  struct nnp_comm_opts *o)
{
	static const char allowed[] = "abcdefghijklmnopqrstuvwxyz"
				      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_";
	char label[64];
	size_t n;

	*o = *def;
	if (!cfg)
		return NNP_SUCCESS;
	snprintf(label, sizeof(label), "%s: config", what);
	if (nnp_size_check(cfg->size, CONFIG_SIZE_0_9, sizeof(*cfg), label))
		return NNP_ERROR_INVALID_ARGUMENT;
	if (cfg->timeout_ms < -1 || cfg->timeout_ms >= DRM_NNP_COMM_TIMEOUT_NEVER)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"%s: config timeout_ms %lld: -1 (the default), 0 (for ever) or 1 to %u",
				what, cfg->timeout_ms, DRM_NNP_COMM_TIMEOUT_NEVER - 1);
	if (cfg->timeout_ms >= 0)
		o->timeout_ms = cfg->timeout_ms ? (uint32_t)cfg->timeout_ms :
						  DRM_NNP_COMM_TIMEOUT_NEVER;
	if (CONFIG_HAS(cfg, blocking) && cfg->blocking != 0 && cfg->blocking != 1)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"%s: config blocking %d: 1 (the default) or 0", what,
				cfg->blocking);
	if (CONFIG_HAS(cfg, group_fusion) &&
	    (cfg->group_fusion < -1 || cfg->group_fusion > 1))
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"%s: config group_fusion %d: -1 (the default), 0 or 1",
				what, cfg->group_fusion);
	if (CONFIG_HAS(cfg, group_fusion) && cfg->group_fusion >= 0)
		o->group_fusion = cfg->group_fusion;
	if (!cfg->name)
		return NNP_SUCCESS;
	n = strnlen(cfg->name, NNP_COMM_NAME_MAX);
	if (!n || n == NNP_COMM_NAME_MAX || strspn(cfg->name, allowed) != n)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"%s: config name: 1 to %d letters, digits, '.', '-' and '_'",
				what, NNP_COMM_NAME_MAX - 1);
	memcpy(o->name, cfg->name, n + 1);
	return NNP_SUCCESS;
}

nnp_result_t nnp_comm_init_rank(nnp_comm_t **comm, int nranks,
				const nnp_unique_id_t *id, int rank,
				nnp_device_t *dev)
{
	return nnp_comm_init_rank_config(comm, nranks, id, rank, dev, NULL);
}

nnp_result_t nnp_comm_init_rank_config(nnp_comm_t **comm, int nranks,
				       const nnp_unique_id_t *id, int rank,
				       nnp_device_t *dev,
				       const nnp_comm_config_t *config)
{
	const struct nnp_comm_opts def = {
		.timeout_ms = coll_timeout_ms(), .group_fusion = -1,
	};
	struct nnp_comm_opts o;
	nnp_result_t res;

	res = nnp_comm_config_take(config, "nnp_comm_init_rank_config", &def, &o);
	if (res != NNP_SUCCESS)
		return res;
	if (!comm || !id || !dev || nranks < 1 ||
	    nranks > NNP_BOOTSTRAP_MAX_RANKS || rank < 0 || rank >= nranks)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_comm_init_rank: rank %d of %d (1 to 65535 ranks), or no comm, id or device",
				rank, nranks);
	*comm = NULL;
	if (!nnp_comm_config_blocking(config))
		return nnp_comm_init_async(comm, nranks, id, rank, dev, &o);
	return nnp_comm_init_opts(comm, nranks, id, rank, dev, &o);
}

nnp_result_t nnp_comm_init_opts(nnp_comm_t **comm, int nranks,
				const nnp_unique_id_t *id, int rank,
				nnp_device_t *dev, const struct nnp_comm_opts *o)
{
	struct nnp_rank_info mine, *all = NULL;
	struct nnp_job_link *link = NULL;
	struct nnp_topo topo;
	struct nnp_ring ring;
	enum nnp_algo algo;
	uint64_t epoch;
	nnp_result_t res;

	nnp_log_set_rank(rank);
	res = rank_info_settled(dev, &mine);
	if (res == NNP_SUCCESS)
		res = nnp_bootstrap_join(id, nranks, rank, &mine, &all, &epoch,
					 &link);
	if (res == NNP_SUCCESS)
		res = nnp_comm_plan(all, (uint32_t)nranks, epoch, &ring);
	if (res == NNP_SUCCESS) {
		res = nnp_comm_plan_algo(all, (uint32_t)nranks, &ring, &topo, &algo);
		if (res == NNP_SUCCESS) {
			res = nnp_comm_make(dev, (uint32_t)nranks, (uint32_t)rank,
					    all, &ring, &topo, algo, NULL, epoch, o,
					    comm);
			if (res == NNP_SUCCESS && o->name[0])
				nnp_log(NNP_LOG_INFO, "rank %d: communicator %u is %s",
					rank, (*comm)->id, o->name);
			if (res == NNP_SUCCESS) {
				nnp_comm_job_answer(*comm, link);
				link = NULL;
			}
			nnp_topo_free(&topo);
		}
		nnp_ring_free(&ring);
	}
	nnp_job_link_end(link);
	free(all);
	nnp_log_set_rank(-1);
	return res;
}

nnp_result_t nnp_comm_init_all(nnp_device_t **devs, int n, nnp_comm_t **comms)
{
	const struct nnp_comm_opts o = {
		.timeout_ms = coll_timeout_ms(), .group_fusion = -1,
	};
	struct nnp_rank_info *info;
	uint64_t epoch = nnp_random64();
	struct nnp_ring ring = { 0 };
	struct nnp_topo topo = { 0 };
	nnp_result_t res = NNP_SUCCESS;
	enum nnp_algo algo;
	int r;

	if (!devs || !comms || n < 1 || n > NNP_BOOTSTRAP_MAX_RANKS)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_comm_init_all: %d devices (1 to 65535), or no devices or comms", n);
	for (r = 0; r < n; r++) {
		if (!devs[r])
			return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
					"nnp_comm_init_all: device %d is NULL", r);
		comms[r] = NULL;
	}
	info = calloc((size_t)n, sizeof(*info));
	if (!info)
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no host memory for %d ranks", n);
	for (r = 0; r < n && res == NNP_SUCCESS; r++)
		res = nnp_comm_rank_info(devs[r], &info[r]);
	if (res == NNP_SUCCESS)
		res = nnp_comm_plan(info, (uint32_t)n, epoch, &ring);
	if (res == NNP_SUCCESS)
		res = nnp_comm_plan_algo(info, (uint32_t)n, &ring, &topo, &algo);
	for (r = 0; r < n && res == NNP_SUCCESS; r++)
		res = nnp_comm_make(devs[r], (uint32_t)n, (uint32_t)r, info,
				    &ring, &topo, algo, NULL, epoch, &o, &comms[r]);
	if (res != NNP_SUCCESS)
		for (r = 0; r < n; r++) {
			nnp_comm_destroy(comms[r]);
			comms[r] = NULL;
		}
	nnp_topo_free(&topo);
	nnp_ring_free(&ring);
	free(info);
	return res;
}

void nnp_comm_destroy(nnp_comm_t *comm)
{
	struct drm_nnp_comm_destroy d;

	if (!comm)
		return;
	if (nnp_comm_init_end(comm) != NNP_SUCCESS) {
		comm_free(comm);	/* nothing of it on the device */
		return;
	}
	nnp_group_forget(comm, NULL);
	nnp_split_transits_end(comm);
	d = (struct drm_nnp_comm_destroy){ .comm = comm->id };
	drmIoctl(comm->dev->fd, DRM_IOCTL_NNP_COMM_DESTROY, &d);
	comm_free(comm);
}

nnp_result_t nnp_comm_abort(nnp_comm_t *comm)
{
	struct drm_nnp_comm_destroy d;
	nnp_result_t res = NNP_SUCCESS;

	if (!comm)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_comm_abort: comm is NULL");
	if (nnp_comm_init_end(comm) != NNP_SUCCESS) {
		comm_free(comm);	/* ended before it was made: nothing to abort */
		return NNP_SUCCESS;
	}
	nnp_group_forget(comm, NULL);
	nnp_split_transits_end(comm);
	d = (struct drm_nnp_comm_destroy){
		.comm = comm->id, .flags = DRM_NNP_COMM_DESTROY_ABORT,
	};
	if (drmIoctl(comm->dev->fd, DRM_IOCTL_NNP_COMM_DESTROY, &d)) {
		res = nnp_ioctl_failed(comm->dev, "aborting a communicator", errno);
		nnp_comm_destroy(comm);
		return res;
	}
	comm_free(comm);
	return res;
}

nnp_result_t nnp_comm_get_async_error(nnp_comm_t *comm, nnp_result_t *async_error)
{
	struct drm_nnp_comm_status st;

	if (!comm || !async_error)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_comm_get_async_error: no comm or no async_error");
	/* Being made, or failed to be: that is its state, not this call's. */
	*async_error = nnp_comm_ready(comm, "nnp_comm_get_async_error");
	if (*async_error != NNP_SUCCESS)
		return NNP_SUCCESS;
	st = (struct drm_nnp_comm_status){ .comm = comm->id };
	if (drmIoctl(comm->dev->fd, DRM_IOCTL_NNP_COMM_STATUS, &st))
		return nnp_ioctl_failed(comm->dev, "the communicator status", errno);
	*async_error = st.status ? NNP_ERROR_COMM_FAILED : NNP_SUCCESS;
	if (st.status) {
		/*
		 * Why, as NCCL's ncclGetLastError() says it after
		 * ncclCommGetAsyncError(): the failure this chip met, which an
		 * ABORTED stream command after it does not name.
		 */
		const char *name = nnp_status_name(st.status);
		char label[NNP_COMM_NAME_MAX + 8];

		nnp_fail_once(&comm->failure_logged, NNP_ERROR_COMM_FAILED,
			      "%snnp_comm_get_async_error: rank %d: the communicator failed: %s (%s, status %#x)",
			      nnp_comm_label(comm, label, sizeof(label)), comm->rank,
			      name ? name : "device error",
			      nnp_status_text((uint16_t)st.status), st.status);
	}
	return NNP_SUCCESS;
}

int nnp_comm_rank(const nnp_comm_t *comm)
{
	return comm ? comm->rank : -1;
}

int nnp_comm_count(const nnp_comm_t *comm)
{
	return comm ? comm->nranks : -1;
}

int nnp_comm_id(const nnp_comm_t *comm)
{
	return comm ? (int)comm->id : -1;
}
