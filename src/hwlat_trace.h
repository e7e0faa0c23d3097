/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hwlat_detector: the trace event hwlat_detector:sample, one per window the
 * stream reports, with the stream's fields and its sequence number, so that
 * perf, trace-cmd and bpftrace read the windows natively. It is emitted
 * after the width, never inside it; disabled, it costs one static branch.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM hwlat_detector

#if !defined(_HWLAT_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _HWLAT_TRACE_H

#include <linux/tracepoint.h>

#include "hwlat.h"

TRACE_EVENT(sample,
	    TP_PROTO(const struct hwlat_sample *s),
	    TP_ARGS(s),
	    TP_STRUCT__entry(__field(u64, seq)
			     __field(unsigned int, cpu)
			     __field(s64, sec)
			     __field(u32, nsec)
			     __field(u64, inner_ns)
			     __field(u64, outer_ns)
			     __field(u64, count)
			     __field(u64, nmi_count)
			     __field(u64, nmi_ns)
			     __field(u64, smi_count)
			     __field(u64, smi_ns)
			     __field(bool, smi_known)),
	    TP_fast_assign(__entry->seq = s->seq;
			   __entry->cpu = s->cpu;
			   __entry->sec = s->ts.tv_sec;
			   __entry->nsec = s->ts.tv_nsec;
			   __entry->inner_ns = s->inner_ns;
			   __entry->outer_ns = s->outer_ns;
			   __entry->count = s->count;
			   __entry->nmi_count = s->nmi_count;
			   __entry->nmi_ns = s->nmi_ns;
			   __entry->smi_count = s->smi_count;
			   __entry->smi_ns = s->smi_ns;
			   __entry->smi_known = s->smi_known;),
	    TP_printk("seq=%llu cpu=%u ts=%lld.%09u inner_ns=%llu outer_ns=%llu count=%llu nmi_count=%llu nmi_ns=%llu smi_count=%lld smi_ns=%lld",
		      __entry->seq, __entry->cpu, __entry->sec, __entry->nsec,
		      __entry->inner_ns, __entry->outer_ns, __entry->count,
		      __entry->nmi_count, __entry->nmi_ns,
		      __entry->smi_known ? (s64)__entry->smi_count : -1LL,
		      __entry->smi_known ? (s64)__entry->smi_ns : -1LL)
);

#endif /* _HWLAT_TRACE_H */

/* The event's definitions come from this directory, not the kernel's. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE hwlat_trace
#include <trace/define_trace.h>
