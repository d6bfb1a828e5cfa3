/* SPDX-License-Identifier: MIT */
/* nnp-sim's option values: sizes, counts and lists of chip counts. */
#ifndef NNP_SIM_ARGS_H
#define NNP_SIM_ARGS_H

#include <stdint.h>

#define MAX_CHIPS	1024
#define MAX_RUNS	16

/* A size with an optional K, M or G (binary) suffix; 0 or -1. */
int parse_size(const char *arg, uint64_t *v);
int parse_u32(const char *arg, uint32_t *v);
/* "N[,N...]": up to MAX_RUNS counts of 1..MAX_CHIPS into @chips; 0 or -1. */
int parse_chips(const char *arg, unsigned int *chips, unsigned int *nruns);

#endif /* NNP_SIM_ARGS_H */
