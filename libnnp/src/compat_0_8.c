// SPDX-License-Identifier: MIT
/*
 * The calls programs built against libnnp 0.8 or earlier are linked with.
 * In 0.9 the structs these fill or read gained a leading size member
 * (nnp.h), and the calls by those names a new symbol version
 * (LIBNNP_0.9); a program built before still binds to the old versions,
 * which land here and fill (or read) the old layout. That layout is the
 * 0.9 struct less its leading size: every member after it sits 8 bytes
 * earlier (no member is aligned to more than 8), up to the last member
 * 0.9 had.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "log.h"

/* The bytes of @type's 0.8 layout: from @first to the end of @last. */
#define SPAN_0_8(type, first, last) \
	(NNP_END_OF(type, last) - offsetof(type, first))

_Static_assert(offsetof(struct nnp_device_info, path) == sizeof(size_t) &&
	       offsetof(struct nnp_port_info, state) == sizeof(size_t) &&
	       offsetof(struct nnp_device_model, now_ns) == sizeof(size_t) &&
	       offsetof(struct nnp_device_counters, host_dma_bytes) == sizeof(size_t) &&
	       offsetof(struct nnp_stream_error, seq) == sizeof(size_t) &&
	       offsetof(nnp_event_t, stream) == sizeof(size_t),
	       "0.8's layouts are 0.9's less the leading size");

nnp_result_t nnp_device_get_info_0_8(nnp_device_t *dev, void *info);
nnp_result_t nnp_device_get_ports_0_8(nnp_device_t *dev, void *ports,
				      unsigned int max, unsigned int *count);
nnp_result_t nnp_device_get_model_0_8(nnp_device_t *dev, void *model);
nnp_result_t nnp_device_get_counters_0_8(nnp_device_t *dev, void *counters);
nnp_result_t nnp_stream_error_0_8(const nnp_stream_t *s, void *err);
nnp_result_t nnp_event_record_0_8(nnp_stream_t *s, void *ev);
nnp_result_t nnp_event_query_0_8(const void *ev);
nnp_result_t nnp_event_synchronize_0_8(const void *ev, int64_t timeout_ns);

__asm__(".symver nnp_device_get_info_0_8, nnp_device_get_info@LIBNNP_0");
__asm__(".symver nnp_device_get_ports_0_8, nnp_device_get_ports@LIBNNP_0");
__asm__(".symver nnp_device_get_model_0_8, nnp_device_get_model@LIBNNP_0.5");
__asm__(".symver nnp_device_get_counters_0_8, nnp_device_get_counters@LIBNNP_0.6");
__asm__(".symver nnp_stream_error_0_8, nnp_stream_error@LIBNNP_0");
__asm__(".symver nnp_event_record_0_8, nnp_event_record@LIBNNP_0");
__asm__(".symver nnp_event_query_0_8, nnp_event_query@LIBNNP_0");
__asm__(".symver nnp_event_synchronize_0_8, nnp_event_synchronize@LIBNNP_0");

/* @res as the 0.9 call gave it; if it is @filled, @len bytes of @from to @old. */
static nnp_result_t old_layout(nnp_result_t res, nnp_result_t filled, void *old,
			       const void *from, size_t len)
{
	if (res == filled)
		memcpy(old, from, len);
	return res;
}

nnp_result_t nnp_device_get_info_0_8(nnp_device_t *dev, void *info)
{
	struct nnp_device_info in = { .size = sizeof(in) };

	return old_layout(nnp_device_get_info(dev, info ? &in : NULL), NNP_SUCCESS,
			  info, in.path, SPAN_0_8(struct nnp_device_info, path, fw_build));
}

nnp_result_t nnp_device_get_ports_0_8(nnp_device_t *dev, void *ports,
				      unsigned int max, unsigned int *count)
{
	const size_t old = SPAN_0_8(struct nnp_port_info, state, errors);
	struct nnp_port_info *p = calloc(max ? max : 1, sizeof(*p));
	nnp_result_t res;
	unsigned int i;

	if (!p)
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no host memory for %u ports", max);
	p[0].size = sizeof(*p);
	res = nnp_device_get_ports(dev, max && ports ? p : NULL, max, count);
	for (i = 0; res == NNP_SUCCESS && i < max && i < *count; i++)
		memcpy((char *)ports + i * old, &p[i].state, old);
	free(p);
	return res;
}

nnp_result_t nnp_device_get_model_0_8(nnp_device_t *dev, void *model)
{
	struct nnp_device_model m = { .size = sizeof(m) };

	return old_layout(nnp_device_get_model(dev, model ? &m : NULL), NNP_SUCCESS,
			  model, &m.now_ns,
			  SPAN_0_8(struct nnp_device_model, now_ns, port_tx_busy_ns));
}

nnp_result_t nnp_device_get_counters_0_8(nnp_device_t *dev, void *counters)
{
	struct nnp_device_counters c = { .size = sizeof(c) };

	return old_layout(nnp_device_get_counters(dev, counters ? &c : NULL), NNP_SUCCESS,
			  counters, &c.host_dma_bytes,
			  SPAN_0_8(struct nnp_device_counters, host_dma_bytes, mem_objects));
}

nnp_result_t nnp_stream_error_0_8(const nnp_stream_t *s, void *err)
{
	struct nnp_stream_error e = { .size = sizeof(e) };

	/* It fills err only for a stream that failed. */
	return old_layout(nnp_stream_error(s, err ? &e : NULL), NNP_ERROR_COMMAND_FAILED,
			  err, &e.seq, SPAN_0_8(struct nnp_stream_error, seq, what));
}

#define EVENT_0_8	SPAN_0_8(nnp_event_t, stream, seq)

nnp_result_t nnp_event_record_0_8(nnp_stream_t *s, void *ev)
{
	nnp_event_t e = NNP_EVENT_INIT;

	return old_layout(nnp_event_record(s, ev ? &e : NULL), NNP_SUCCESS,
			  ev, &e.stream, EVENT_0_8);
}

/* A 0.8 event @old as 0.9's; NULL stays NULL, for the 0.9 call's error. */
static const nnp_event_t *event_0_9(const void *old, nnp_event_t *e)
{
	if (!old)
		return NULL;
	memcpy(&e->stream, old, EVENT_0_8);
	return e;
}

nnp_result_t nnp_event_query_0_8(const void *ev)
{
	nnp_event_t e = NNP_EVENT_INIT;

	return nnp_event_query(event_0_9(ev, &e));
}

nnp_result_t nnp_event_synchronize_0_8(const void *ev, int64_t timeout_ns)
{
	nnp_event_t e = NNP_EVENT_INIT;

	return nnp_event_synchronize(event_0_9(ev, &e), timeout_ns);
}
