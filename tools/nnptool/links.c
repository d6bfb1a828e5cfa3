// SPDX-License-Identifier: MIT
/*
 * nnptool links: every device's inter-chip link ports, peers and counters,
 * and how long each port's sending side was busy on the modeled clock.
 */
#include <inttypes.h>
#include <string.h>

#include "nnptool.h"

static const char *state_name(uint32_t state)
{
	if (!(state & NNP_LINK_WIRED))
		return "unwired";
	return state & NNP_LINK_UP ? "up" : "down";
}

/*
 * Port @i of device @dev, chip @chip; @busy: its modeled transmit busy
 * time in ns, or NULL from a device without a modeled clock.
 */
static void print_port(const struct nnptool_opts *o, int dev, uint32_t chip,
		       unsigned int i, const struct nnp_port_info *p,
		       const uint64_t *busy, int *first)
{
	char peer[24] = "-", tx_busy[24] = "-";

	if (p->state & NNP_LINK_WIRED)
		snprintf(peer, sizeof(peer), "%" PRIu32 ".%" PRIu32, p->peer_chip,
			 p->peer_port);
	if (o->json) {
		printf("%s{\"dev\": %d, \"chip\": %" PRIu32 ", \"port\": %u, "
		       "\"state\": \"%s\", \"peer\": \"%s\", \"tx_bytes\": %" PRIu64
		       ", \"rx_bytes\": %" PRIu64 ", \"tx_packets\": %" PRIu64
		       ", \"rx_packets\": %" PRIu64 ", \"errors\": %" PRIu64,
		       *first ? "" : ", ", dev, chip, i, state_name(p->state), peer,
		       p->tx_bytes, p->rx_bytes, p->tx_packets, p->rx_packets,
		       p->errors);
		if (busy)
			printf(", \"tx_busy_ns\": %" PRIu64, *busy);
		printf("}");
		*first = 0;
		return;
	}
	if (busy)
		snprintf(tx_busy, sizeof(tx_busy), "%" PRIu64, *busy);
	printf("%-4d %5" PRIu32 " %4u %-8s %-9s %14" PRIu64 " %14" PRIu64
	       " %8" PRIu64 " %14s\n", dev, chip, i, state_name(p->state), peer,
	       p->tx_bytes, p->rx_bytes, p->errors, tx_busy);
}

int cmd_links(struct nnptool_opts *o, int argc, char **argv)
{
	static const struct nnptool_cmd cmd = { .name = "links", .args = "[--json]" };
	int count, d, first = 1;
	nnp_result_t r;

	d = nnptool_getopt(&cmd, o, argc, argv);
	if (d != NNPTOOL_OPTS_DONE)
		return nnptool_opts_exit(d);
	r = nnp_device_count(&count);
	if (r != NNP_SUCCESS)
		return nnptool_fail("links", r);
	if (o->json)
		printf("{\"ports\": [");
	else
		printf("%-4s %5s %4s %-8s %-9s %14s %14s %8s %14s\n", "DEV", "CHIP",
		       "PORT", "STATE", "PEER", "TX BYTES", "RX BYTES", "ERRORS",
		       "TX BUSY NS");
	for (d = 0; d < count; d++) {
		struct nnp_port_info ports[NNP_MAX_PORTS];
		struct nnp_device_model model;
		struct nnp_device_info info;
		unsigned int n = 0, i;
		bool modeled = false;
		nnp_device_t *dev;

		r = nnp_device_open(d, &dev);
		if (r == NNP_SUCCESS) {
			r = nnp_device_get_info(dev, &info);
			if (r == NNP_SUCCESS)
				r = nnp_device_get_ports(dev, ports, NNP_MAX_PORTS, &n);
			if (r == NNP_SUCCESS)
				r = nnptool_model(dev, &model, &modeled);
			nnp_device_close(dev);
		}
		if (r != NNP_SUCCESS) {
			if (o->json)
				printf("]}\n");
			return nnptool_fail("links", r);
		}
		for (i = 0; i < n && i < NNP_MAX_PORTS; i++)
			print_port(o, d, info.chip_id, i, &ports[i],
				   modeled && i < model.num_ports ?
				   &model.port_tx_busy_ns[i] : NULL, &first);
	}
	if (o->json)
		printf("]}\n");
	return NNPTOOL_EXIT_OK;
}
