// SPDX-License-Identifier: MIT
/* nnptool list: one line (or one JSON object) per nnp device. */
#include <inttypes.h>

#include "nnptool.h"

static void json_device(FILE *f, int index, const struct nnp_device_info *in)
{
	char fw[16], pci[64];
	int numa;

	fw_version_str(in->fw_version, fw, sizeof(fw));
	dev_location(in->path, pci, sizeof(pci), &numa);
	fprintf(f, "{\"index\": %d, \"path\": ", index);
	json_string(f, in->path);
	fprintf(f, ", \"pci_address\": ");
	json_string(f, pci);
	fprintf(f, ", \"numa_node\": %d", numa);
	fprintf(f, ", \"chip_id\": %" PRIu32 ", \"mem_size\": %" PRIu64
		", \"icl_ports\": %" PRIu32 ", \"fw_version\": ",
		in->chip_id, in->mem_size, in->num_icl_ports);
	json_string(f, fw);
	fprintf(f, ", \"serial\": ");
	json_string(f, in->serial);
	fputc('}', f);
}

int cmd_list(struct nnptool_opts *o, int argc, char **argv)
{
	static const struct nnptool_cmd cmd = { .name = "list", .args = "[--json]" };
	nnp_result_t r;
	int count, i;

	i = nnptool_getopt(&cmd, o, argc, argv);
	if (i != NNPTOOL_OPTS_DONE)
		return nnptool_opts_exit(i);
	r = nnp_device_count(&count);
	if (r != NNP_SUCCESS)
		return nnptool_fail("list", r);

	if (o->json)
		printf("{\"devices\": [");
	else
		printf("%-4s %-18s %6s %10s %6s %-9s %-12s %4s %s\n", "DEV", "NODE",
		       "CHIP", "MEMORY", "PORTS", "FIRMWARE", "PCI", "NUMA",
		       "SERIAL");
	for (i = 0; i < count; i++) {
		struct nnp_device_info in;
		nnp_device_t *dev;
		char fw[16], pci[64];
		int numa;

		r = nnp_device_open(i, &dev);
		if (r == NNP_SUCCESS) {
			r = nnp_device_get_info(dev, &in);
			nnp_device_close(dev);
		}
		if (r != NNP_SUCCESS) {
			if (o->json)
				printf("]}\n");
			return nnptool_fail("list", r);
		}
		if (o->json) {
			printf(i ? ", " : "");
			json_device(stdout, i, &in);
			continue;
		}
		fw_version_str(in.fw_version, fw, sizeof(fw));
		dev_location(in.path, pci, sizeof(pci), &numa);
		printf("%-4d %-18s %6" PRIu32 " %6" PRIu64 " MiB %6" PRIu32
		       " %-9s %-12s %4d %s\n", i, in.path, in.chip_id,
		       in.mem_size >> 20, in.num_icl_ports, fw, pci, numa,
		       in.serial);
	}
	if (o->json)
		printf("]}\n");
	return NNPTOOL_EXIT_OK;
}
