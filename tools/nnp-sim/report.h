/* SPDX-License-Identifier: MIT */
/* nnp-sim's output: a table or JSON on stdout, and a gnuplot plot. */
#ifndef NNP_SIM_REPORT_H
#define NNP_SIM_REPORT_H

#include <stdio.h>

#include "topo.h"

struct report {
	bool json;
	unsigned int runs;	/* begun so far */
	unsigned int rows;	/* of the current run */
	const struct nnp_fw_config *model;
	bool timing_only;
	const char *plot_dir;
	FILE *dat;		/* the plot's data, one block per run */
	enum topo_kind kind;
	const char *coll;	/* the collective swept */
	char chips[128];	/* the runs' chip counts, for the plot's key */
};

void report_open(struct report *r, bool json, const char *plot_dir,
		 bool timing_only, const struct nnp_fw_config *model,
		 const char *coll);
void report_begin(struct report *r, const struct topo *t, unsigned int n,
		  uint32_t algo);
/*
 * The collective of @bytes on @n chips took @ns modeled ns; its busbw is
 * @bus times its algbw.
 */
void report_row(struct report *r, unsigned int n, uint64_t bytes, uint64_t ns,
		double bus);
void report_end(struct report *r);
/* Finish the output and draw the plot; -1 if that failed. */
int report_close(struct report *r);

#endif /* NNP_SIM_REPORT_H */
