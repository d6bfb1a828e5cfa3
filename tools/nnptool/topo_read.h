/* SPDX-License-Identifier: MIT */
/*
 * The devices of this host and the links between them, read once from
 * libnnp and sysfs, for nnptool topo's matrix and nnptool gres's lines.
 */
#ifndef NNPTOOL_TOPO_READ_H
#define NNPTOOL_TOPO_READ_H

#include <stdbool.h>
#include <stdint.h>

#include <nnp/nnp.h>

#define MAX_DEVS	64
#define MAX_OUT		(MAX_DEVS * NNP_MAX_PORTS)

/* A wired port: to a chip of another host, or one of this host's that is down. */
struct out_link {
	int dev;
	unsigned int port;
	uint32_t peer_chip, peer_port;
	bool up;
};

struct topo {
	int n;
	uint32_t chip[MAX_DEVS];
	int numa[MAX_DEVS];
	char path[MAX_DEVS][64];	/* device node */
	int links[MAX_DEVS][MAX_DEVS];	/* links up between two devices */
	int hops[MAX_DEVS][MAX_DEVS];	/* -1: no path */
	int nout;
	struct out_link out[MAX_OUT];	/* to chips of other hosts */
	int ndown;
	struct out_link down[MAX_OUT];	/* between this host's chips, down */
};

/*
 * Fill @t from this host's devices, for command @cmd: an exit code. Past
 * MAX_DEVS devices, the first MAX_DEVS, or with @all_or_none an error.
 */
int topo_read(struct topo *t, const char *cmd, bool all_or_none);

#endif /* NNPTOOL_TOPO_READ_H */
