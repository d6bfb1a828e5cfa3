/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nnp.ko tracepoints (events/nnp/ in tracefs): the admin queue's commands
 * and completions, user queue interrupts, and QUEUE_WAIT sleeps.
 */
#if !defined(__NNP_TRACE_H__) || defined(TRACE_HEADER_MULTI_READ)
#define __NNP_TRACE_H__

#include <linux/tracepoint.h>
#include <linux/types.h>

#include "nnp_drv.h"

#undef TRACE_SYSTEM
#define TRACE_SYSTEM nnp

TRACE_EVENT(nnp_admin_submit,
	    TP_PROTO(struct nnp_device *ndev, u8 opcode, u16 cid, u32 tail),
	    TP_ARGS(ndev, opcode, cid, tail),
	    TP_STRUCT__entry(__string(dev, dev_name(ndev->drm.dev))
			     __field(u8, opcode)
			     __field(u16, cid)
			     __field(u32, tail)),
	    TP_fast_assign(__assign_str(dev);
			   __entry->opcode = opcode;
			   __entry->cid = cid;
			   __entry->tail = tail;),
	    TP_printk("%s opcode=0x%02x cid=%u tail=%u", __get_str(dev),
		      __entry->opcode, __entry->cid, __entry->tail)
);

/* @ret: the errno the submitter gets; @status is 0 if no completion came. */
TRACE_EVENT(nnp_admin_complete,
	    TP_PROTO(struct nnp_device *ndev, u8 opcode, u16 cid, u16 status,
		     u32 result, int ret),
	    TP_ARGS(ndev, opcode, cid, status, result, ret),
	    TP_STRUCT__entry(__string(dev, dev_name(ndev->drm.dev))
			     __field(u8, opcode)
			     __field(u16, cid)
			     __field(u16, status)
			     __field(u32, result)
			     __field(int, ret)),
	    TP_fast_assign(__assign_str(dev);
			   __entry->opcode = opcode;
			   __entry->cid = cid;
			   __entry->status = status;
			   __entry->result = result;
			   __entry->ret = ret;),
	    TP_printk("%s opcode=0x%02x cid=%u status=%u result=%u ret=%d",
		      __get_str(dev), __entry->opcode, __entry->cid,
		      __entry->status, __entry->result, __entry->ret)
);

TRACE_EVENT(nnp_queue_irq,
	    TP_PROTO(struct nnp_device *ndev, u32 qid),
	    TP_ARGS(ndev, qid),
	    TP_STRUCT__entry(__string(dev, dev_name(ndev->drm.dev))
			     __field(u32, qid)),
	    TP_fast_assign(__assign_str(dev);
			   __entry->qid = qid;),
	    TP_printk("%s qid=%u", __get_str(dev), __entry->qid)
);

TRACE_EVENT(nnp_queue_wait_begin,
	    TP_PROTO(struct nnp_device *ndev, u32 qid, u32 cq_index, u32 phase,
		     s64 timeout_ns),
	    TP_ARGS(ndev, qid, cq_index, phase, timeout_ns),
	    TP_STRUCT__entry(__string(dev, dev_name(ndev->drm.dev))
			     __field(u32, qid)
			     __field(u32, cq_index)
			     __field(u32, phase)
			     __field(s64, timeout_ns)),
	    TP_fast_assign(__assign_str(dev);
			   __entry->qid = qid;
			   __entry->cq_index = cq_index;
			   __entry->phase = phase;
			   __entry->timeout_ns = timeout_ns;),
	    TP_printk("%s qid=%u cq_index=%u phase=%u timeout_ns=%lld",
		      __get_str(dev), __entry->qid, __entry->cq_index,
		      __entry->phase, __entry->timeout_ns)
);

TRACE_EVENT(nnp_queue_wait_end,
	    TP_PROTO(struct nnp_device *ndev, u32 qid, u32 cq_index, int ret),
	    TP_ARGS(ndev, qid, cq_index, ret),
	    TP_STRUCT__entry(__string(dev, dev_name(ndev->drm.dev))
			     __field(u32, qid)
			     __field(u32, cq_index)
			     __field(int, ret)),
	    TP_fast_assign(__assign_str(dev);
			   __entry->qid = qid;
			   __entry->cq_index = cq_index;
			   __entry->ret = ret;),
	    TP_printk("%s qid=%u cq_index=%u ret=%d", __get_str(dev),
		      __entry->qid, __entry->cq_index, __entry->ret)
);

#endif /* __NNP_TRACE_H__ */

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE nnp_trace
#include <trace/define_trace.h>
