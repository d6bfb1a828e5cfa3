// SPDX-License-Identifier: MIT
/* nnptool list: one line (or one JSON object) per nnp device. */
#include <inttypes.h>

#include "json_out.h"
#include "nnptool.h"

static void json_device(struct json_object *devs, int index,
			const struct nnp_device_info *in)
{
	struct json_object *d = jo_obj(devs, NULL);
	char fw[16], pci[64];
	int numa;

	fw_version_str(in->fw_version, fw, sizeof(fw));
	dev_location(in->path, pci, sizeof(pci), &numa);
	jo_int(d, "index", index);
	jo_str(d, "path", in->path);
	jo_str(d, "pci_address", pci);
	jo_int(d, "numa_node", numa);
	jo_u64(d, "chip_id", in->chip_id);
	jo_u64(d, "mem_size", in->mem_size);
	jo_u64(d, "icl_ports", in->num_icl_ports);
	jo_str(d, "fw_version", fw);
	jo_str(d, "serial", in->serial);
}

int cmd_list(struct nnptool_opts *o, int argc, char **argv)
{
	static const struct nnptool_cmd cmd = { .name = "list", .args = "[--json]" };
	struct json_object *doc = NULL, *devs = NULL;
	nnp_result_t r;
	int count, i;

	i = nnptool_getopt(&cmd, o, argc, argv);
	if (i != NNPTOOL_OPTS_DONE)
		return nnptool_opts_exit(i);
	r = nnp_device_count(&count);
	if (r != NNP_SUCCESS)
		return nnptool_fail("list", r);

	if (o->json) {
		doc = jo_obj(NULL, NULL);
		devs = jo_arr(doc, "devices");
	} else {
		printf("%-4s %-18s %6s %10s %6s %-9s %-12s %4s %s\n", "DEV", "NODE",
		       "CHIP", "MEMORY", "PORTS", "FIRMWARE", "PCI", "NUMA",
		       "SERIAL");
	}
	for (i = 0; i < count; i++) {
		struct nnp_device_info in = { .size = sizeof(in) };
		nnp_device_t *dev;
		char fw[16], pci[64];
		int numa;

		r = nnp_device_open(i, &dev);
		if (r == NNP_SUCCESS) {
			r = nnp_device_get_info(dev, &in);
			nnp_device_close(dev);
		}
		if (r != NNP_SUCCESS) {
			if (doc)
				jo_line(stdout, doc);
			return nnptool_fail("list", r);
		}
		if (doc) {
			json_device(devs, i, &in);
			continue;
		}
		fw_version_str(in.fw_version, fw, sizeof(fw));
		dev_location(in.path, pci, sizeof(pci), &numa);
		printf("%-4d %-18s %6" PRIu32 " %6" PRIu64 " MiB %6" PRIu32
		       " %-9s %-12s %4d %s\n", i, in.path, in.chip_id,
		       in.mem_size >> 20, in.num_icl_ports, fw, pci, numa,
		       in.serial);
	}
	if (doc)
		jo_line(stdout, doc);
	return NNPTOOL_EXIT_OK;
}
