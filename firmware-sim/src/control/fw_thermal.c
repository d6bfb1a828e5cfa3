// SPDX-License-Identifier: MIT
/*
 * Telemetry: busy time, and a model of the chip's power and temperature
 * driven by its activity (docs/hw-interface.md#telemetry).
 *
 * There is no silicon to measure, so the numbers are a pure function of
 * what the chip did: power over a window is the idle power, plus the
 * engines' share for the fraction of the window they were busy, plus an
 * energy per byte moved (device memory, host DMA, links both ways).
 * Temperature relaxes towards the steady state of that power with a time
 * constant, as a die with a heat sink does. The model steps one window at
 * a time, when a telemetry register is read or the heartbeat runs, so how
 * often anyone looks changes nothing but the windows' edges.
 */
#include <math.h>

#include "fw_control.h"

#define NS_PER_MS		1000000ull
#define WINDOW_NS		(NNP_HW_TELEMETRY_WINDOW_MS * NS_PER_MS)
#define POWER_BUSY_UW		90000000.0	/* engines busy all the window */
#define ENERGY_UJ_PER_BYTE	0.004		/* 4 nJ per byte moved */
#define THERMAL_MC_PER_UW	0.0002		/* 0.2 degrees C per watt */
#define TAU_NS			2000000000.0	/* 2 s time constant */

static uint64_t busy_total_locked(const struct nnp_fw *fw, uint64_t now)
{
	const struct nnp_fw_thermal *t = &fw->thermal;

	return t->busy_ns + (fw->executing && now > t->busy_start_ns ?
			     now - t->busy_start_ns : 0);
}

static uint64_t bytes_moved_locked(const struct nnp_fw *fw)
{
	const struct nnp_hw_counters *c = &fw->counters;

	return c->host_dma_bytes + c->local_bytes + c->icl_tx_bytes +
	       c->icl_rx_bytes;
}

void nnp_fw_thermal_init(struct nnp_fw *fw, uint64_t now)
{
	fw->thermal = (struct nnp_fw_thermal){
		.window_start_ns = now,
		.temp_mc = NNP_HW_TEMP_IDLE_MC,
		.power_uw = NNP_HW_POWER_IDLE_UW,
	};
}

void nnp_fw_thermal_reset_locked(struct nnp_fw *fw, uint64_t now)
{
	struct nnp_fw_thermal *t = &fw->thermal;

	/* The counters restart from zero; the die keeps its heat. */
	t->busy_ns = 0;
	t->busy_start_ns = now;
	t->window_busy_ns = 0;
	t->window_bytes = 0;
}

void nnp_fw_busy_begin_locked(struct nnp_fw *fw, uint64_t now)
{
	if (fw->executing++ == 0)
		fw->thermal.busy_start_ns = now;
}

void nnp_fw_busy_end_locked(struct nnp_fw *fw, uint64_t now)
{
	struct nnp_fw_thermal *t = &fw->thermal;

	if (--fw->executing == 0 && now > t->busy_start_ns)
		t->busy_ns += now - t->busy_start_ns;
}

void nnp_fw_thermal_step_locked(struct nnp_fw *fw, uint64_t now)
{
	struct nnp_fw_thermal *t = &fw->thermal;
	uint64_t busy, bytes;
	double dt, power, steady;

	if (now < t->window_start_ns + WINDOW_NS)
		return;
	dt = (double)(now - t->window_start_ns);
	busy = busy_total_locked(fw, now);
	bytes = bytes_moved_locked(fw);
	power = NNP_HW_POWER_IDLE_UW +
		POWER_BUSY_UW * (double)(busy - t->window_busy_ns) / dt +
		ENERGY_UJ_PER_BYTE * 1e9 * (double)(bytes - t->window_bytes) / dt;
	if (power > NNP_HW_POWER_MAX_UW)
		power = NNP_HW_POWER_MAX_UW;
	steady = NNP_HW_TEMP_IDLE_MC +
		 THERMAL_MC_PER_UW * (power - NNP_HW_POWER_IDLE_UW);
	t->temp_mc = steady + (t->temp_mc - steady) * exp(-dt / TAU_NS);
	t->power_uw = (uint32_t)llround(power);
	t->window_start_ns = now;
	t->window_busy_ns = busy;
	t->window_bytes = bytes;
}

bool nnp_fw_is_telemetry_reg(uint32_t offset)
{
	return offset >= NNP_REG_TEMP && offset <= NNP_REG_BUSY_NS_HI;
}

uint32_t nnp_fw_telemetry_read_locked(struct nnp_fw *fw, uint32_t offset,
				      uint64_t now)
{
	nnp_fw_thermal_step_locked(fw, now);
	switch (offset) {
	case NNP_REG_TEMP:
		return (uint32_t)llround(fw->thermal.temp_mc);
	case NNP_REG_POWER:
		return fw->thermal.power_uw;
	case NNP_REG_BUSY_NS_LO:
		return (uint32_t)busy_total_locked(fw, now);
	case NNP_REG_BUSY_NS_HI:
		return (uint32_t)(busy_total_locked(fw, now) >> 32);
	}
	return 0;
}
