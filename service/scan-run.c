/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * run_scan(): one scan, whichever backend samples (backend.h). It opens the
 * backend the configuration names (with backend auto, the module, else the
 * kernel's tracer), then drives it: prepare, start, read the stream until
 * the duration is over or a signal ends it, stop, drain, summarize,
 * restore, and the end (scan-end.h), the restore always before anything
 * that could fail or wait.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-id128.h>

#include "backend.h"
#include "deadline.h"
#include "log.h"
#include "macro.h"
#include "scan-end.h"
#include "scan-lock.h"

void scan_extend_timeout(const scan_options *o, uint64_t duration_ns, uint64_t window_us)
{
	uint64_t usec = (duration_ns + window_us * NSEC_PER_USEC + DRAIN_GRACE_NS +
			 FINISH_MARGIN_NS) / NSEC_PER_USEC;
	int r;

	/* The monitor has no duration: its unit's start ends at READY=1. */
	if (!o->unit || o->monitor)
		return;
	r = sd_notifyf(0, "EXTEND_TIMEOUT_USEC=%llu", (unsigned long long)usec);
	if (r < 0)
		log_error_errno(r, "cannot tell systemd the scan's duration (EXTEND_TIMEOUT_USEC)");
}

/*
 * The scan id is the unit's invocation id only under --unit: a scan run by
 * hand from another service (a CI job, cloud-init) inherits that service's
 * INVOCATION_ID, and two such scans must not share an id.
 */
static void scan_id_init(bool unit, char buf[static SD_ID128_STRING_MAX])
{
	const char *inv = unit ? getenv("INVOCATION_ID") : NULL;
	sd_id128_t id;

	if (inv && sd_id128_from_string(inv, &id) >= 0) {
		sd_id128_to_string(id, buf);
		return;
	}
	if (inv)
		log_msg("ignoring malformed INVOCATION_ID '%s'", inv);
	if (sd_id128_randomize(&id) < 0)
		id = (sd_id128_t){};
	sd_id128_to_string(id, buf);
}

/* Without an export file, the entries need journald: checked before starting. */
static int check_journal(FILE *export)
{
	int r;

	if (export)
		return 0;
	r = journal_check_socket();
	if (r < 0) {
		log_error_errno(r, "cannot write to the journal at %s (is systemd-journald running?); not starting the scan",
				JOURNAL_SOCKET);
		return -EIO;
	}
	return 0;
}

/* What one run of a backend holds. */
typedef struct scan_run {
	const scan_options *o;
	const scan_config *cfg;
	scan_backend *b;
	scan_tally *t;
	scan_reader rd;
	scan_summary sum;
	uint64_t enabled_at, stopped_at; /* CLOCK_MONOTONIC */
	bool started;
} scan_run;

/* Samples until the duration is over, then stops and drains: how it ended. */
static sample_end sample(scan_run *run, int sig_fd)
{
	const backend_ops *ops = run->b->ops;
	sample_end end;
	int r;

	progress_start(&run->rd.progress, progress_wanted(run->o->quiet, run->o->unit),
		       run->enabled_at, run->cfg->duration_ns);
	end = reader_sample(&run->rd, run->b->stream_fd, sig_fd,
			    run->enabled_at + run->cfg->duration_ns);
	r = ops->stop(run->b);
	run->stopped_at = now_ns(CLOCK_MONOTONIC);
	progress_stop(&run->rd.progress);
	if (r < 0) {
		end = END_ERROR;
	} else if (end != END_EOF) {
		r = ops->drain(run->b, &run->rd, run->stopped_at);
		if (r > 0)
			end = END_EOF;
		else if (r < 0 && end == END_COMPLETED)
			end = END_ERROR;
	}
	if (end == END_EOF)
		log_msg("%s", ops->eof_message);
	/* Every readable sample is journaled, but the maximum may be missing. */
	if (run->t->broken || run->t->skipped_lines)
		end = END_ERROR;
	return end;
}

/* The summary's fields the tally and the run know, for any backend. */
static void summarize(scan_run *run, smi_total *smi_total)
{
	scan_summary *sum = &run->sum;
	const scan_tally *t = run->t;

	run->b->ops->summarize(run->b, t, run->started, sum);
	sum->backend = run->b->ops->name;
	sum->scan_id = t->scan_id;
	sum->hardlimit_ns = run->cfg->hardlimit_ns;
	sum->duration_ns = run->stopped_at - run->enabled_at;
	sum->samples = t->samples;
	sum->max_ns = t->max_ns;
	smi_total_compute(&t->smi, &t->smi_src, sum->mode, smi_total);
	sum->smi_total_known = smi_total->known;
	sum->smi_total = smi_total->total;
	sum->smi_method = smi_total->method;
	sum->smi_unavailable = smi_total->reason;
	sum->nmi_total = t->nmi_total;
	sum->skipped_lines = t->skipped_lines;
}

/*
 * One scan with an opened backend. A scan refused before it began changes
 * nothing and writes no summary; one that began always writes its summary,
 * "failed" when it could not start.
 */
static int run_backend(scan_run *run, int sig_fd)
{
	const backend_ops *ops = run->b->ops;
	machine_facts m;
	smi_total smi_total;
	sample_end end = END_ERROR;
	int r;

	run->t->backend = ops->name;
	reader_init(&run->rd, run->t, ops->parse_line, run->b);
	run->b->cfg = run->cfg;
	r = ops->prepare(run->b, run->t);
	if (r >= 0)
		r = check_journal(run->t->export);
	if (r >= 0)
		r = ops->start(run->b, &run->rd);
	if (r < 0) {
		ops->restore(run->b, false);
		return r;
	}
	run->enabled_at = run->stopped_at = now_ns(CLOCK_MONOTONIC);
	run->sum.start_ns = now_ns(CLOCK_REALTIME);
	run->started = r == 0;
	if (run->started)
		end = sample(run, sig_fd);
	summary_machine(run->o, &m, &run->sum);
	summarize(run, &smi_total);
	/* Restore first: nothing below may keep the detector running. */
	if (ops->restore(run->b, true) < 0)
		end = END_ERROR;
	return scan_finish(run->o, run->cfg, run->t, &run->sum, end, &smi_total);
}

/* Whether auto may fall back to the tracer: a fake detector, only to a fake tracefs. */
static bool tracer_fallback_allowed(const scan_options *o)
{
	if (!o->detector_dir || o->tracefs_dir)
		return true;
	log_msg("backend auto: no fallback to the kernel's tracer with --detector-dir but no "
		"--tracefs-dir");
	return false;
}

/*
 * The backend the configuration names, opened; with auto, the module when
 * it can be used, else the tracer. NULL and *ret_r when none can be.
 */
static scan_backend *open_backend(const scan_options *o, backend_kind kind, uint64_t wait_ns,
				  int *ret_r)
{
	scan_backend *b = kind == BACKEND_TRACER ? tracer_backend_new() : module_backend_new();
	bool fallback;
	int r;

	if (!b) {
		*ret_r = -ENOMEM;
		return NULL;
	}
	b->o = o;
	/* The monitor holds only the module; it gives way to a scan. */
	b->lock_wait_ns = kind == BACKEND_TRACER ? 0 : wait_ns;
	r = b->ops->open(b);
	if (r >= 0) {
		if (kind == BACKEND_AUTO)
			log_msg("backend auto: using the hwlat_detector module (%s)", b->path);
		return b;
	}
	fallback = r == -ENODEV && kind == BACKEND_AUTO && tracer_fallback_allowed(o);
	/* Unmount what open mounted, unload what it loaded. */
	b->ops->restore(b, false);
	b->ops->free(b);
	if (fallback) {
		log_msg("backend auto: the hwlat_detector module cannot be used (said above); "
			"scanning with the kernel's hwlat tracer instead");
		return open_backend(o, BACKEND_TRACER, 0, ret_r);
	}
	*ret_r = r;
	return NULL;
}

/*
 * The scan's lock beside the monitor (scan-lock.h), held until exit; with
 * a test's fake detector only where HWLAT_RUN_DIR names its own place.
 * Returns the time a held detector is waited for, or -EBUSY.
 */
static int take_scan_lock(const scan_options *o, int *ret_fd, uint64_t *ret_wait_ns)
{
	int r;

	*ret_wait_ns = 0;
	*ret_fd = -1;
	if ((o->detector_dir || o->tracefs_dir) && !getenv("HWLAT_RUN_DIR"))
		return 0;
	r = scan_lock_take(ret_fd);
	if (r == -EBUSY)
		return r;
	/* Without it the scan runs as before: refused while the detector is held. */
	if (r >= 0)
		*ret_wait_ns = SCAN_LOCK_WAIT_NS;
	return 0;
}

int run_scan(const scan_options *o, const scan_config *cfg, int sig_fd)
{
	_cleanup_close_ int lock_fd = -1;
	_cleanup_fclose_ FILE *export = NULL;
	_cleanup_free_ scan_tally *t = calloc(1, sizeof(*t));
	char id[SD_ID128_STRING_MAX];
	scan_run run = { .o = o, .cfg = cfg, .t = t };
	uint64_t wait_ns;
	int r;

	if (!t) {
		log_msg("out of memory");
		return -ENOMEM;
	}
	scan_id_init(o->unit, id);
	if (o->journal_export) {
		export = fopen(o->journal_export, "we");
		if (!export) {
			log_error_errno(-errno, "cannot create %s", o->journal_export);
			return -EIO;
		}
	}
	tally_init(t, id, cfg->openmetrics_file[0] != '\0', export);
	/* fail_if's rate(>SIZE): the windows above each size, counted exactly. */
	r = gate_count_sizes(&cfg->gates, &t->stats);
	if (r < 0) {
		tally_done(t);
		return log_error_errno(r, "cannot count the windows above the fail_if sizes");
	}
	r = take_scan_lock(o, &lock_fd, &wait_ns);
	run.b = r < 0 ? NULL : open_backend(o, cfg->backend, wait_ns, &r);
	if (run.b) {
		r = run_backend(&run, sig_fd);
		run.b->ops->free(run.b);
	}
	tally_done(t);
	return r;
}
