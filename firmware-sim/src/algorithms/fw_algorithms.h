/* SPDX-License-Identifier: MIT */
/*
 * The firmware simulator's allreduce algorithms over several rings at once
 * (bidirectional, multi-ring, torus: fw_algo.c), planned from the
 * communicator's topology and run in steps on the engine's rings. They
 * offer the control plane their ops table, which nnp_fw_create() hands
 * the engine (fw->algo), and nnp_fw_comm_set_topology().
 */
#ifndef NNP_FW_ALGORITHMS_H
#define NNP_FW_ALGORITHMS_H

#include "fw_engines.h"

extern const struct nnp_fw_algo_ops nnp_fw_algorithms;

#endif /* NNP_FW_ALGORITHMS_H */
