// SPDX-License-Identifier: MIT
/* nnptool info DEV: everything the driver reports about one device. */
#include <inttypes.h>

#include "json_out.h"
#include "nnptool.h"

static const struct {
	uint64_t bit;
	const char *name;
} caps[] = {
	{ NNP_DEVICE_CAP_ADMIN_QUEUE, "admin-queue" },
	{ NNP_DEVICE_CAP_USER_QUEUES, "user-queues" },
	{ NNP_DEVICE_CAP_ICL, "icl" },
	{ NNP_DEVICE_CAP_COLLECTIVES, "collectives" },
};

#define NCAPS (sizeof(caps) / sizeof(caps[0]))

/* What nnptool shows of a device's resets. */
struct resets {
	uint32_t count;
	const char *last;
};

/* Its modeled clock, if it has one (hardware interface 1.8 on). */
struct model {
	bool valid;
	struct nnp_device_model m;
};

static void print_model_text(const struct model *md)
{
	const struct nnp_device_model *m = &md->m;
	unsigned int i;

	if (!md->valid) {
		printf("modeled clock: none (device or driver too old)\n");
		return;
	}
	printf("modeled clock: %" PRIu64 " ns, %" PRIu64 " commands\n",
	       m->now_ns, m->commands);
	printf("modeled busy:  memory %" PRIu64 " ns, host dma %" PRIu64
	       " ns, port tx", m->hbm_busy_ns, m->pcie_busy_ns);
	for (i = 0; i < m->num_ports; i++)
		printf("%s%u %" PRIu64, i ? ", " : " ", i, m->port_tx_busy_ns[i]);
	printf(" ns\n");
}

static void model_json(struct json_object *doc, const struct model *md)
{
	const struct nnp_device_model *m = &md->m;
	struct json_object *o, *busy;
	unsigned int i;

	if (!md->valid) {
		jo_null(doc, "model");
		return;
	}
	o = jo_obj(doc, "model");
	jo_u64(o, "now_ns", m->now_ns);
	jo_u64(o, "commands", m->commands);
	jo_u64(o, "hbm_busy_ns", m->hbm_busy_ns);
	jo_u64(o, "pcie_busy_ns", m->pcie_busy_ns);
	busy = jo_arr(o, "port_tx_busy_ns");
	for (i = 0; i < m->num_ports; i++)
		jo_u64(busy, NULL, m->port_tx_busy_ns[i]);
}

static void print_text(const struct nnp_device_info *in, const char *fw,
		       const struct resets *rs, const struct model *md)
{
	size_t i;
	int n = 0;

	char pci[64];
	int numa;

	dev_location(in->path, pci, sizeof(pci), &numa);
	printf("node:          %s\n", in->path);
	printf("pci address:   %s\n", pci);
	printf("numa node:     %d\n", numa);
	printf("chip id:       %" PRIu32 "\n", in->chip_id);
	printf("serial:        %s\n", in->serial);
	printf("memory:        %" PRIu64 " bytes (%" PRIu64 " MiB)\n",
	       in->mem_size, in->mem_size >> 20);
	printf("icl ports:     %" PRIu32 "\n", in->num_icl_ports);
	printf("queues:        %" PRIu32 "\n", in->num_queues);
	printf("hw interface:  %" PRIu32 ".%" PRIu32 "\n", in->hw_version >> 16,
	       in->hw_version & 0xffff);
	printf("firmware:      %s (%s)\n", fw, in->fw_build);
	printf("heartbeat:     %" PRIu32 "\n", in->fw_heartbeat);
	printf("resets:        %" PRIu32 " (last: %s)\n", rs->count, rs->last);
	printf("capabilities:");
	for (i = 0; i < NCAPS; i++)
		if (in->caps & caps[i].bit)
			printf("%s%s", n++ ? ", " : " ", caps[i].name);
	printf("%s\n", n ? "" : " none");
	print_model_text(md);
}

static void print_json(const struct nnp_device_info *in, const char *fw,
		       const struct resets *rs, const struct model *md)
{
	struct json_object *doc = jo_obj(NULL, NULL), *caps_json;
	char pci[64], hw[24];
	size_t i;
	int numa;

	dev_location(in->path, pci, sizeof(pci), &numa);
	snprintf(hw, sizeof(hw), "%" PRIu32 ".%" PRIu32, in->hw_version >> 16,
		 in->hw_version & 0xffff);
	jo_str(doc, "path", in->path);
	jo_str(doc, "pci_address", pci);
	jo_int(doc, "numa_node", numa);
	jo_u64(doc, "chip_id", in->chip_id);
	jo_str(doc, "serial", in->serial);
	jo_u64(doc, "mem_size", in->mem_size);
	jo_u64(doc, "icl_ports", in->num_icl_ports);
	jo_u64(doc, "queues", in->num_queues);
	jo_str(doc, "hw_version", hw);
	jo_str(doc, "fw_version", fw);
	jo_str(doc, "fw_build", in->fw_build);
	jo_u64(doc, "fw_heartbeat", in->fw_heartbeat);
	jo_u64(doc, "resets", rs->count);
	jo_str(doc, "last_reset_reason", rs->last);
	caps_json = jo_arr(doc, "capabilities");
	for (i = 0; i < NCAPS; i++)
		if (in->caps & caps[i].bit)
			jo_str(caps_json, NULL, caps[i].name);
	model_json(doc, md);
	jo_line(stdout, doc);
}

int cmd_info(struct nnptool_opts *o, int argc, char **argv)
{
	static const struct nnptool_cmd cmd = {
		.name = "info", .args = "[--json] DEV", .min_args = 1, .max_args = 1,
	};
	struct nnp_device_info in = { .size = sizeof(in) };
	struct resets rs;
	struct model md;
	nnp_device_t *dev;
	nnp_result_t r;
	char fw[16];
	int c;

	c = nnptool_getopt(&cmd, o, argc, argv);
	if (c != NNPTOOL_OPTS_DONE)
		return nnptool_opts_exit(c);
	if (nnptool_open(argv[optind], &dev))
		return NNPTOOL_EXIT_ERROR;
	r = nnp_device_get_info(dev, &in);
	if (r == NNP_SUCCESS)
		r = nnp_device_get_resets(dev, &rs.count, &rs.last);
	if (r == NNP_SUCCESS)
		r = nnptool_model(dev, &md.m, &md.valid);
	nnp_device_close(dev);
	if (r != NNP_SUCCESS)
		return nnptool_fail("info", r);
	fw_version_str(in.fw_version, fw, sizeof(fw));
	if (o->json)
		print_json(&in, fw, &rs, &md);
	else
		print_text(&in, fw, &rs, &md);
	return NNPTOOL_EXIT_OK;
}

/* nnptool reset DEV: reset the device now (root only). */
int cmd_reset(struct nnptool_opts *o, int argc, char **argv)
{
	static const struct nnptool_cmd cmd = {
		.name = "reset", .args = "[--json] DEV", .min_args = 1, .max_args = 1,
	};
	struct resets rs;
	nnp_device_t *dev;
	nnp_result_t r;
	const char *spec;
	int c;

	c = nnptool_getopt(&cmd, o, argc, argv);
	if (c != NNPTOOL_OPTS_DONE)
		return nnptool_opts_exit(c);
	spec = argv[optind];
	if (nnptool_open(spec, &dev))
		return NNPTOOL_EXIT_ERROR;
	r = nnp_device_reset(dev);
	nnp_device_close(dev);
	if (r != NNP_SUCCESS)
		return nnptool_fail("reset", r);
	/* The handle that asked is lost with the reset: ask a new one. */
	if (nnptool_open(spec, &dev))
		return NNPTOOL_EXIT_ERROR;
	r = nnp_device_get_resets(dev, &rs.count, &rs.last);
	nnp_device_close(dev);
	if (r != NNP_SUCCESS)
		return nnptool_fail("reset", r);
	if (o->json) {
		struct json_object *doc = jo_obj(NULL, NULL);

		jo_str(doc, "device", spec);
		jo_u64(doc, "resets", rs.count);
		jo_str(doc, "last_reset_reason", rs.last);
		jo_line(stdout, doc);
	} else {
		printf("reset %s: %" PRIu32 " resets\n", spec, rs.count);
	}
	return NNPTOOL_EXIT_OK;
}
