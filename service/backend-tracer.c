/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel's hwlat tracer as a scan's backend (tracer.h): its settings in
 * tracefs, the samples from trace_pipe, the same journal entries as the
 * module's with what the tracer cannot tell marked unavailable. The state
 * found is restored on every way out.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "hwlat-journal.h"
#include "hwlat_abi.h"
#include "log.h"
#include "macro.h"
#include "tracer.h"

/* Why the tracer counts no SMIs, in the summary. */
#define TRACER_SMI_REASON "the kernel's hwlat tracer does not count SMIs"

typedef struct tracer_backend {
	scan_backend base;
	tracer t;
	tracer_state saved, state, want;
	bool changed; /* restore puts saved back */
	tracer_state used; /* as the kernel holds it once started */
	uint64_t lost_events;	/* "[LOST n EVENTS]" lines of trace_pipe */
	uint64_t foreign_lines; /* lines of other tracers or events */
	char cpus[4096];
} tracer_backend;

#define TRACER_BACKEND(b) ((tracer_backend *)(b))

/*
 * Opens tracefs, checks that the hwlat tracer exists and is free, takes
 * the lock and reads the state to restore.
 */
static int tracer_open_backend(scan_backend *b)
{
	tracer_backend *tb = TRACER_BACKEND(b);
	tracer *t = &tb->t;
	int r;

	if (tracer_open(t, b->o->tracefs_dir) < 0)
		return -ENODEV;
	b->path = t->dir.path;
	r = tracer_available(t);
	if (r < 0)
		return -ENODEV;
	if (r == 0) {
		log_msg("the kernel has no hwlat tracer: %s/available_tracers does not list it "
			"(CONFIG_HWLAT_TRACER; on Debian only linux-image-rt-amd64 builds it in)",
			t->dir.path);
		return -ENODEV;
	}
	r = backend_lock(&t->dir, "using the kernel's tracer in", b->lock_wait_ns);
	if (r < 0)
		return r;
	if (tracer_read_state(t, &tb->saved) < 0)
		return -ENODEV;
	if (strcmp(tb->saved.current, TRACER_IDLE) != 0) {
		log_msg("the kernel's tracer is busy: %s/current_tracer is '%s', not '%s'; not "
			"starting (write %s to it once its user is done)",
			t->dir.path, tb->saved.current, TRACER_IDLE, TRACER_IDLE);
		return -EBUSY;
	}
	return 0;
}

/* The mode of the configuration, where the tracer has it. */
static int wanted_mode(const scan_config *cfg, const tracer_state *cur, tracer_state *want)
{
	if (!cfg->set[CONFIG_MODE])
		return 0;
	if (!cur->has_mode) {
		log_msg("invalid key 'mode': this kernel's hwlat tracer has no mode file "
			"(hwlat_detector/mode: Linux 5.14 and later)");
		return -EINVAL;
	}
	if (strcmp(cfg->mode, HWLAT_MODE_STOP_MACHINE_NAME) == 0) {
		log_msg("invalid mode '%s' for backend tracer: the kernel's hwlat tracer has "
			"%s, %s and %s", cfg->mode, HWLAT_MODE_NONE_NAME, HWLAT_MODE_ROUND_ROBIN_NAME,
			HWLAT_MODE_PER_CPU_NAME);
		return -EINVAL;
	}
	snprintf(want->mode, sizeof(want->mode), "%s", cfg->mode);
	return 0;
}

/* The tracer's settings with the configured ones put in, checked against the bounds. */
static int tracer_prepare(scan_backend *b, scan_tally *t)
{
	tracer_backend *tb = TRACER_BACKEND(b);
	const scan_config *cfg = b->cfg;
	const tracer_state *cur = &tb->saved;
	tracer_state *want = &tb->want;

	smi_source_parse(NULL, &t->smi_src);
	snprintf(t->smi_src.reason, sizeof(t->smi_src.reason), "%s", TRACER_SMI_REASON);
	if (config_check_bounds(cfg, cur->width_us * NSEC_PER_USEC,
				cur->window_us * NSEC_PER_USEC) < 0)
		return -EINVAL;
	*want = *cur;
	if (wanted_mode(cfg, cur, want) < 0)
		return -EINVAL;
	/* tracing_thresh 0 means the tracer's default; say which. */
	want->threshold_us = cfg->set[CONFIG_THRESHOLD] ? cfg->threshold_ns / NSEC_PER_USEC :
			     cur->threshold_us ? cur->threshold_us :
						 TRACER_DEFAULT_THRESHOLD_US;
	if (cfg->set[CONFIG_WIDTH])
		want->width_us = cfg->width_ns / NSEC_PER_USEC;
	if (cfg->set[CONFIG_WINDOW])
		want->window_us = cfg->window_ns / NSEC_PER_USEC;
	if (cfg->set[CONFIG_CPUS]) {
		int r = cpumask_from_cpulist(cfg->cpus, want->cpumask, sizeof(want->cpumask));

		if (r < 0) {
			log_error_errno(r, "cannot turn cpus '%s' into a tracing_cpumask", cfg->cpus);
			return -EINVAL;
		}
	}
	snprintf(want->current, sizeof(want->current), "%s", TRACER_NAME);
	want->tracing_on = true;
	return 0;
}

static int tracer_start(scan_backend *b, scan_reader *rd)
{
	tracer_backend *tb = TRACER_BACKEND(b);
	int r;

	log_msg("scanning with the kernel's hwlat tracer in %s", tb->t.dir.path);
	/* The tracer numbers its samples from 1 when it starts. */
	rd->tally->seq_known = true;
	/* From here on, the tracer is changed: restore puts it back. */
	tb->state = tb->saved;
	tb->changed = true;
	r = tracer_change(&tb->t, &tb->state, &tb->want);
	if (r == -EBUSY && strcmp(tb->state.current, TRACER_IDLE) == 0) {
		/* Nothing sampled yet: a refusal like a busy tracer, no summary. */
		log_msg("the kernel refuses to change %s/current_tracer while someone reads "
			"its trace_pipe; not starting", tb->t.dir.path);
		return -EBUSY;
	}
	/* trace_pipe only once hwlat is the tracer (and closed before it is not). */
	if (r >= 0) {
		b->stream_fd = openat(tb->t.dir.dir_fd, "trace_pipe",
				      O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (b->stream_fd < 0)
			r = log_error_errno(-errno, "cannot open %s/trace_pipe", tb->t.dir.path);
	}
	if (r >= 0)
		scan_extend_timeout(tb->base.o, tb->base.cfg->duration_ns, tb->state.window_us);
	/* The settings as the kernel holds them (tracing_thresh 0: its default). */
	if (r < 0 || tracer_read_state(&tb->t, &tb->used) < 0)
		tb->used = tb->state;
	rd->tally->threshold_ns = tb->used.threshold_us * NSEC_PER_USEC;
	if (r < 0) {
		log_msg("the scan could not start; restoring the tracer as it was");
		return BACKEND_START_FAILED;
	}
	return 0;
}

/* A trace_pipe line: lost events are counted, other tracers' lines ignored. */
static int tracer_parse(void *b, const char *line, hwlat_sample *ret)
{
	tracer_backend *tb = b;
	uint64_t lost = 0;
	char esc[160];
	int r = tracer_parse_line(line, ret, &lost);

	if (r == TRACER_LINE_LOST) {
		tb->lost_events += lost;
		log_msg("the kernel's trace buffer lost %llu events: '%s'", (unsigned long long)lost,
			escape_text(line, strlen(line), esc, sizeof(esc)));
		return 1;
	}
	if (r == TRACER_LINE_OTHER) {
		if (tb->foreign_lines++ == 0)
			log_msg("ignoring lines of other tracers or events in trace_pipe, e.g. '%s'",
				escape_text(line, strlen(line), esc, sizeof(esc)));
		return 1;
	}
	return r < 0 ? r : 0;
}

/* Stop recording, then take what the buffer holds. */
static int tracer_stop(scan_backend *b)
{
	tracer_backend *tb = TRACER_BACKEND(b);

	return tracer_set_on(&tb->t, &tb->state, false);
}

static int tracer_drain(scan_backend *b, scan_reader *rd, uint64_t stopped_at)
{
	(void)stopped_at;
	/* trace_pipe does not end when tracing stops: its end says nothing more. */
	return reader_read_buffered(rd, b->stream_fd) < 0 ? -EIO : 0;
}

static void tracer_summarize(scan_backend *b, const scan_tally *t, bool started,
			     scan_summary *sum)
{
	tracer_backend *tb = TRACER_BACKEND(b);
	const tracer_state *used = &tb->used;

	(void)started;
	backend_summary_settings(sum, used->threshold_us, used->width_us, used->window_us,
				 used->has_mode ? used->mode : NULL);
	sum->cpus = cpulist_from_cpumask(used->cpumask, tb->cpus, sizeof(tb->cpus)) >= 0 ?
			    tb->cpus :
			    "unknown";
	sum->clock = HWLAT_UNAVAILABLE;
	/* Sequence numbers the pipe never showed; the buffer's own count if higher. */
	sum->dropped = tb->lost_events > t->seq_gaps ? tb->lost_events : t->seq_gaps;
	sum->settings_source = HWLAT_SETTINGS_SOURCE_TRACEFS;
	sum->floor_unavailable = true;
}

static int tracer_restore(scan_backend *b, bool final)
{
	tracer_backend *tb = TRACER_BACKEND(b);

	backend_close_stream(b);
	if (!tb->changed)
		return 0;
	tb->changed = false;
	if (tracer_change(&tb->t, &tb->state, &tb->saved) < 0) {
		if (final)
			log_msg("the tracer's previous state could not all be restored (%s)",
				tb->t.dir.path);
		return -EIO;
	}
	return 0;
}

static void tracer_free(scan_backend *b)
{
	tracer_close(&TRACER_BACKEND(b)->t);
	free(b);
}

static const backend_ops tracer_ops = {
	.name = HWLAT_BACKEND_TRACER, .eof_message = "trace_pipe ended before the scan did",
	.open = tracer_open_backend, .prepare = tracer_prepare, .start = tracer_start,
	.parse_line = tracer_parse, .stop = tracer_stop, .drain = tracer_drain,
	.summarize = tracer_summarize, .restore = tracer_restore, .free = tracer_free,
};

scan_backend *tracer_backend_new(void)
{
	tracer_backend *tb = backend_new(sizeof(*tb), &tracer_ops);

	if (tb)
		tb->t.dir.dir_fd = -1;
	return tb ? &tb->base : NULL;
}
