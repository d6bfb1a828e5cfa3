// SPDX-License-Identifier: MIT
/*
 * nnptool metrics: every device's telemetry in the Prometheus text format
 * (version 0.0.4), for node-exporter's textfile collector: HELP and TYPE
 * before each metric's samples, labelled device="INDEX". With -o FILE the
 * text goes to a new file beside FILE, renamed over it once complete, so
 * the collector never reads half a file.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "nnptool.h"

#define MAX_DEVS	64

enum metric_kind { PER_DEVICE, PER_SENSOR, PER_PORT };

struct metric {
	const char *name, *type, *help;
	enum metric_kind kind;
	/* Writes the value of device @s (port @p) after the labels. */
	void (*value)(FILE *f, const struct dev_sample *s, unsigned int p);
};

static void v_info(FILE *f, const struct dev_sample *s, unsigned int p)
{
	(void)s, (void)p;
	fputs("1", f);
}

static void v_mem_total(FILE *f, const struct dev_sample *s, unsigned int p)
{
	(void)p;
	fprintf(f, "%" PRIu64, s->info.mem_size);
}

static void v_mem_used(FILE *f, const struct dev_sample *s, unsigned int p)
{
	(void)p;
	fprintf(f, "%" PRIu64, s->mem_used);
}

static void v_busy(FILE *f, const struct dev_sample *s, unsigned int p)
{
	(void)p;
	fprintf(f, "%" PRIu64 ".%09" PRIu64, s->busy_ns / 1000000000u,
		s->busy_ns % 1000000000u);
}

static void v_resets(FILE *f, const struct dev_sample *s, unsigned int p)
{
	(void)p;
	fprintf(f, "%" PRIu64, s->resets);
}

static void v_temp(FILE *f, const struct dev_sample *s, unsigned int p)
{
	(void)p;
	fprintf(f, "%" PRIu64 ".%03" PRIu64, s->temp_mc / 1000, s->temp_mc % 1000);
}

static void v_power(FILE *f, const struct dev_sample *s, unsigned int p)
{
	(void)p;
	fprintf(f, "%" PRIu64 ".%06" PRIu64, s->power_uw / 1000000,
		s->power_uw % 1000000);
}

static void v_link_up(FILE *f, const struct dev_sample *s, unsigned int p)
{
	fputs(s->ports[p].state & NNP_LINK_UP ? "1" : "0", f);
}

static void v_tx(FILE *f, const struct dev_sample *s, unsigned int p)
{
	fprintf(f, "%" PRIu64, s->ports[p].tx_bytes);
}

static void v_rx(FILE *f, const struct dev_sample *s, unsigned int p)
{
	fprintf(f, "%" PRIu64, s->ports[p].rx_bytes);
}

static void v_errors(FILE *f, const struct dev_sample *s, unsigned int p)
{
	fprintf(f, "%" PRIu64, s->ports[p].errors);
}

static const struct metric metrics[] = {
	{ "nnp_device_info", "gauge",
	  "Device identity in labels; the value is always 1.", PER_DEVICE, v_info },
	{ "nnp_memory_total_bytes", "gauge",
	  "Device memory of the chip.", PER_DEVICE, v_mem_total },
	{ "nnp_memory_used_bytes", "gauge",
	  "Device memory allocated now.", PER_DEVICE, v_mem_used },
	{ "nnp_busy_seconds_total", "counter",
	  "Time a user command was executing, since the device's last reset.",
	  PER_DEVICE, v_busy },
	{ "nnp_resets_total", "counter",
	  "Resets of the device since the driver bound to it.", PER_DEVICE,
	  v_resets },
	{ "nnp_temperature_celsius", "gauge",
	  "Die temperature (hwmon temp1_input).", PER_SENSOR, v_temp },
	{ "nnp_power_watts", "gauge",
	  "Power over the device's last telemetry window (hwmon power1_input).",
	  PER_SENSOR, v_power },
	{ "nnp_link_up", "gauge",
	  "1 if the inter-chip link on the port is up, 0 if it is down.",
	  PER_PORT, v_link_up },
	{ "nnp_link_transmit_bytes_total", "counter",
	  "Payload bytes sent on the port.", PER_PORT, v_tx },
	{ "nnp_link_receive_bytes_total", "counter",
	  "Payload bytes received on the port.", PER_PORT, v_rx },
	{ "nnp_link_errors_total", "counter",
	  "Sends that found the link down, and arrivals dropped, on the port.",
	  PER_PORT, v_errors },
};

/* Label values here are numbers, addresses and serials: no escaping needed. */
static void labels(FILE *f, const struct metric *m, const struct dev_sample *s,
		   unsigned int p)
{
	char fw[16], pci[64];

	fprintf(f, "%s{device=\"%d\"", m->name, s->index);
	if (m->value == v_info) {
		fw_version_str(s->info.fw_version, fw, sizeof(fw));
		dev_pci_address(s->sysfs, pci, sizeof(pci));
		fprintf(f, ",chip=\"%" PRIu32 "\",pci=\"%s\",serial=\"%s\","
			"firmware=\"%s\"", s->info.chip_id, pci, s->info.serial, fw);
	}
	if (m->kind == PER_PORT)
		fprintf(f, ",port=\"%u\",peer=\"%" PRIu32 ".%" PRIu32 "\"", p,
			s->ports[p].peer_chip, s->ports[p].peer_port);
	fputs("} ", f);
}

static void write_text(FILE *f, const struct dev_sample *s, int n)
{
	const struct metric *m;
	unsigned int p;
	int d;

	for (m = metrics; m < metrics + sizeof(metrics) / sizeof(*metrics); m++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help,
			m->name, m->type);
		for (d = 0; d < n; d++) {
			if (m->kind == PER_SENSOR && !s[d].has_sensors)
				continue;
			for (p = 0; p < (m->kind == PER_PORT ? s[d].nports : 1); p++) {
				/* Unwired ports have no link to report. */
				if (m->kind == PER_PORT &&
				    !(s[d].ports[p].state & NNP_LINK_WIRED))
					continue;
				labels(f, m, &s[d], p);
				m->value(f, &s[d], p);
				fputc('\n', f);
			}
		}
	}
}

static void write_json(FILE *f, const struct dev_sample *s, int n)
{
	struct json_object *doc = jo_obj(NULL, NULL), *devs, *d, *ports, *o;
	const struct nnp_port_info *port;
	unsigned int p;
	int i;

	devs = jo_arr(doc, "devices");
	for (i = 0; i < n; i++) {
		d = jo_obj(devs, NULL);
		jo_int(d, "index", s[i].index);
		jo_u64(d, "chip_id", s[i].info.chip_id);
		jo_u64(d, "memory_total_bytes", s[i].info.mem_size);
		jo_u64(d, "memory_used_bytes", s[i].mem_used);
		jo_u64(d, "busy_ns", s[i].busy_ns);
		jo_u64(d, "resets", s[i].resets);
		if (s[i].has_sensors) {
			jo_u64(d, "temperature_mc", s[i].temp_mc);
			jo_u64(d, "power_uw", s[i].power_uw);
		}
		ports = jo_arr(d, "ports");
		for (p = 0; p < s[i].nports; p++) {
			port = &s[i].ports[p];
			o = jo_obj(ports, NULL);
			jo_u64(o, "port", p);
			jo_bool(o, "up", port->state & NNP_LINK_UP);
			jo_u64(o, "tx_bytes", port->tx_bytes);
			jo_u64(o, "rx_bytes", port->rx_bytes);
			jo_u64(o, "errors", port->errors);
		}
	}
	jo_line(f, doc);
}

/* What one run of nnptool metrics writes. */
struct sampled {
	bool json;
	const struct dev_sample *s;
	int n;
};

static void write_sampled(FILE *f, const void *arg)
{
	const struct sampled *d = arg;

	if (d->json)
		write_json(f, d->s, d->n);
	else
		write_text(f, d->s, d->n);
}

int cmd_metrics(struct nnptool_opts *o, int argc, char **argv)
{
	static struct dev_sample s[MAX_DEVS];
	struct sampled sampled;
	const char *out = NULL;
	int count, d, c, ret;
	nnp_result_t r;

	c = nnptool_output_opt("metrics", "[--json] [-o FILE]", o, argc, argv,
			       &out);
	if (c >= 0)
		return c;
	r = nnp_device_count(&count);
	if (r != NNP_SUCCESS)
		return nnptool_fail("metrics", r);
	if (count > MAX_DEVS)
		count = MAX_DEVS;
	for (d = 0; d < count; d++) {
		ret = dev_sample(d, &s[d]);
		if (ret)
			return ret;
	}
	sampled = (struct sampled){ .json = o->json, .s = s, .n = count };
	if (out)
		return nnptool_write_file("metrics", out, write_sampled, &sampled);
	write_sampled(stdout, &sampled);
	return NNPTOOL_EXIT_OK;
}
