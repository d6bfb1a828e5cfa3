// SPDX-License-Identifier: MIT
/* The devices of this host and their links: see topo_read.h. */
#include <stdio.h>
#include <string.h>

#include "nnptool.h"
#include "topo_read.h"

static int dev_of_chip(const struct topo *t, uint32_t chip)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (t->chip[i] == chip)
			return i;
	return -1;
}

/* Breadth-first from each device over the pairs joined by a link. */
static void topo_hops(struct topo *t)
{
	int queue[MAX_DEVS], s, i, head, tail;

	for (s = 0; s < t->n; s++) {
		for (i = 0; i < t->n; i++)
			t->hops[s][i] = -1;
		t->hops[s][s] = 0;
		queue[0] = s;
		for (head = 0, tail = 1; head < tail; head++) {
			int u = queue[head];

			for (i = 0; i < t->n; i++) {
				if (t->links[u][i] && t->hops[s][i] < 0) {
					t->hops[s][i] = t->hops[s][u] + 1;
					queue[tail++] = i;
				}
			}
		}
	}
}

/* Device @i's wired ports into @t: links up, and the rest by where they go. */
static void add_ports(struct topo *t, int i, const struct dev_sample *s)
{
	unsigned int p;

	for (p = 0; p < s->nports; p++) {
		const struct nnp_port_info *port = &s->ports[p];
		int peer = dev_of_chip(t, port->peer_chip);
		struct out_link l = {
			.dev = i, .port = p, .peer_chip = port->peer_chip,
			.peer_port = port->peer_port,
			.up = port->state & NNP_LINK_UP,
		};

		if (!(port->state & NNP_LINK_WIRED) || peer == i)
			continue;
		if (peer < 0)
			t->out[t->nout++] = l;
		else if (l.up)
			t->links[i][peer]++;
		else
			t->down[t->ndown++] = l;
	}
}

int topo_read(struct topo *t, const char *cmd, bool all_or_none)
{
	static struct dev_sample s[MAX_DEVS];
	nnp_result_t r;
	int count, i, ret;

	memset(t, 0, sizeof(*t));
	r = nnp_device_count(&count);
	if (r != NNP_SUCCESS)
		return nnptool_fail(cmd, r);
	if (count > MAX_DEVS && all_or_none) {
		fprintf(stderr, "nnptool: %s: %d devices, more than the %d it describes\n",
			cmd, count, MAX_DEVS);
		return NNPTOOL_EXIT_ERROR;
	}
	t->n = count < MAX_DEVS ? count : MAX_DEVS;
	for (i = 0; i < t->n; i++) {
		ret = dev_sample(i, &s[i]);
		if (ret)
			return ret;
		t->chip[i] = s[i].info.chip_id;
		t->numa[i] = dev_numa_node(s[i].sysfs);
		snprintf(t->path[i], sizeof(t->path[i]), "%s", s[i].info.path);
	}
	for (i = 0; i < t->n; i++)
		add_ports(t, i, &s[i]);
	topo_hops(t);
	return NNPTOOL_EXIT_OK;
}
