// SPDX-License-Identifier: GPL-2.0-only
/* nnp.ko: the one place the tracepoints of nnp_trace.h are defined. */
#define CREATE_TRACE_POINTS
#include "nnp_trace.h"
