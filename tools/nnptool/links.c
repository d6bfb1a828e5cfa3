// SPDX-License-Identifier: MIT
/*
 * nnptool links: every device's inter-chip link ports, peers and counters,
 * and how long each port's sending side was busy on the modeled clock.
 */
#include <inttypes.h>
#include <string.h>

#include "json_out.h"
#include "nnptool.h"

static const char *state_name(uint32_t state)
{
	if (!(state & NNP_LINK_WIRED))
		return "unwired";
	return state & NNP_LINK_UP ? "up" : "down";
}

/*
 * Port @i of device @dev, chip @chip, into @ports (JSON) or as a row;
 * @busy: its modeled transmit busy time in ns, or NULL from a device
 * without a modeled clock.
 */
static void print_port(struct json_object *ports, int dev, uint32_t chip,
		       unsigned int i, const struct nnp_port_info *p,
		       const uint64_t *busy)
{
	char peer[24] = "-", tx_busy[24] = "-";

	if (p->state & NNP_LINK_WIRED)
		snprintf(peer, sizeof(peer), "%" PRIu32 ".%" PRIu32, p->peer_chip,
			 p->peer_port);
	if (ports) {
		struct json_object *o = jo_obj(ports, NULL);

		jo_int(o, "dev", dev);
		jo_u64(o, "chip", chip);
		jo_u64(o, "port", i);
		jo_str(o, "state", state_name(p->state));
		jo_str(o, "peer", peer);
		jo_u64(o, "tx_bytes", p->tx_bytes);
		jo_u64(o, "rx_bytes", p->rx_bytes);
		jo_u64(o, "tx_packets", p->tx_packets);
		jo_u64(o, "rx_packets", p->rx_packets);
		jo_u64(o, "errors", p->errors);
		if (busy)
			jo_u64(o, "tx_busy_ns", *busy);
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
	struct each_device e;
	nnp_result_t r;
	int d;

	d = nnptool_each_device_start(&cmd, o, argc, argv, "ports", &e);
	if (d >= 0)
		return d;
	if (!e.doc) {
		printf("%-4s %5s %4s %-8s %-9s %14s %14s %8s %14s\n", "DEV", "CHIP",
		       "PORT", "STATE", "PEER", "TX BYTES", "RX BYTES", "ERRORS",
		       "TX BUSY NS");
	}
	for (d = 0; d < e.count; d++) {
		struct nnp_port_info port[NNP_MAX_PORTS] = { { .size = sizeof(port[0]) } };
		struct nnp_device_model model = { .size = sizeof(model) };
		struct nnp_device_info info = { .size = sizeof(info) };
		unsigned int n = 0, i;
		bool modeled = false;
		nnp_device_t *dev;

		r = nnp_device_open(d, &dev);
		if (r == NNP_SUCCESS) {
			r = nnp_device_get_info(dev, &info);
			if (r == NNP_SUCCESS)
				r = nnp_device_get_ports(dev, port, NNP_MAX_PORTS, &n);
			if (r == NNP_SUCCESS)
				r = nnptool_model(dev, &model, &modeled);
			nnp_device_close(dev);
		}
		if (r != NNP_SUCCESS) {
			if (e.doc)
				jo_line(stdout, e.doc);
			return nnptool_fail("links", r);
		}
		for (i = 0; i < n && i < NNP_MAX_PORTS; i++)
			print_port(e.arr, d, info.chip_id, i, &port[i],
				   modeled && i < model.num_ports ?
				   &model.port_tx_busy_ns[i] : NULL);
	}
	if (e.doc)
		jo_line(stdout, e.doc);
	return NNPTOOL_EXIT_OK;
}
