/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hwlat-scan --monitor; see monitor.h. A session is one stretch of
 * sampling with the detector held: open, prepare and start the module
 * backend, then one tick a second (the scan lock, the stream, the totals)
 * until a pause (a scan wants the detector, the detector went away), a
 * reload or the end, which stop, drain and restore it. Intervals run
 * across sessions: a pause is a gap in an interval, never sampled time.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-id128.h>

#include "backend.h"
#include "deadline.h"
#include "hwlat-journal.h"
#include "log.h"
#include "macro.h"
#include "module.h"
#include "monitor-entry.h"
#include "monitor-metrics.h"
#include "monitor.h"
#include "scan-lock.h"
#include "smi-msr.h"

typedef struct monitor {
	const scan_options *o;
	scan_options bo;     /* the backend's: never loads or unloads the module */
	scan_config *cfg;    /* the whole configuration (owned) */
	scan_config *scfg;   /* the scan configuration of its monitor_ keys (owned) */
	scan_backend *b;     /* NULL while paused */
	detector det;	     /* a second handle on b's directory, for the totals */
	char det_path[4096]; /* where the detector was: where it comes back */
	scan_tally *t;
	scan_reader rd;
	tally_journal_hooks hooks;
	bool paused;
	pause_reason why;
	uint64_t paused_since; /* CLOCK_MONOTONIC: when the pause began */
	uint64_t paused_at;    /* from when it is not yet in an interval */
	cpu_values last_sampled, last_skipped;
	uint64_t last_dropped;
	monitor_interval iv;
	uint64_t iv_start, iv_end; /* CLOCK_MONOTONIC */
	uint64_t next_metrics;
	uint64_t watchdog_ns, next_ping; /* 0: systemd asked for no watchdog */
	monitor_totals tot;
	smi_msr smi;
	bool metrics_failed;
	char id[SD_ID128_STRING_MAX];
} monitor;

int monitor_scan_config(const scan_config *cfg, bool allow_high_duty, scan_config *ret)
{
	const struct monitor_keys *k = &cfg->monitor;
	int r;

	config_init(ret);
	ret->threshold_ns = k->threshold_ns;
	ret->width_ns = k->width_ns;
	ret->window_ns = k->window_ns;
	snprintf(ret->mode, sizeof(ret->mode), "%s", k->mode);
	ret->set[CONFIG_THRESHOLD] = ret->set[CONFIG_WIDTH] = ret->set[CONFIG_WINDOW] = true;
	ret->set[CONFIG_MODE] = true;
	if (k->cpus[0]) {
		snprintf(ret->cpus, sizeof(ret->cpus), "%s", k->cpus);
		ret->set[CONFIG_CPUS] = true;
	}
	ret->backend = BACKEND_MODULE;
	r = config_check_bounds(ret, 0, 0);
	if (r >= 0)
		r = config_check_mode_bounds(ret, NULL, 0, 0, allow_high_duty);
	if (r >= 0)
		r = config_check_cpus_online(ret, "/sys/devices/system/cpu/online");
	if (r < 0)
		log_msg("the monitor_ settings (monitor_width %llu us, monitor_window %llu us, "
			"monitor_mode %s) are refused: said above",
			(unsigned long long)(k->width_ns / NSEC_PER_USEC),
			(unsigned long long)(k->window_ns / NSEC_PER_USEC), k->mode);
	return r;
}

/* The hooks of the tally: the interval decides what is journaled. */
static bool keep_entry(void *data, const hwlat_sample *s)
{
	return monitor_interval_sample(&((monitor *)data)->iv, s);
}

static void entry_unsent(void *data, const hwlat_sample *s)
{
	monitor_interval_unjournal(&((monitor *)data)->iv, s);
}

/* The module's totals files and dropped count, grown into the interval. */
static void read_totals(monitor *m)
{
	cpu_values now;
	uint64_t d;

	if (cpu_values_read(&m->det, &cpu_values_sampled, &now) >= 0 &&
	    cpu_values_accumulate(&m->iv.sampled, &m->last_sampled, &now))
		log_msg("the detector's sampled time went down: it was restarted by someone else");
	if (cpu_values_read(&m->det, &cpu_values_skipped, &now) >= 0)
		cpu_values_accumulate(&m->iv.skipped, &m->last_skipped, &now);
	if (detector_read_u64(&m->det, "dropped", &d) >= 0) {
		m->iv.dropped += d >= m->last_dropped ? d - m->last_dropped : d;
		m->last_dropped = d;
	}
}

/* The totals a session starts from (enable=1 just reset them, or lockdown). */
static void read_baseline(monitor *m)
{
	memset(&m->last_sampled, 0, sizeof(m->last_sampled));
	memset(&m->last_skipped, 0, sizeof(m->last_skipped));
	if (cpu_values_read(&m->det, &cpu_values_sampled, &m->last_sampled) < 0)
		memset(&m->last_sampled, 0, sizeof(m->last_sampled));
	if (cpu_values_read(&m->det, &cpu_values_skipped, &m->last_skipped) < 0)
		memset(&m->last_skipped, 0, sizeof(m->last_skipped));
	if (detector_read_u64(&m->det, "dropped", &m->last_dropped) < 0)
		m->last_dropped = 0;
}

/* Ends b (restored unless the detector is gone) and frees it. */
static void drop_backend(monitor *m, bool restore)
{
	if (!restore)
		module_backend_forget(m->b);
	m->b->ops->restore(m->b, true);
	m->b->ops->free(m->b);
	m->b = NULL;
	detector_close(&m->det);
}

/*
 * Opens, prepares and starts the module backend with the monitor's
 * settings. 0 once sampling; -EBUSY while a scan holds the detector,
 * -ENODEV without one, -EINVAL for settings it refuses, -EIO when the
 * change or the start failed (all said, the detector as it was).
 */
static int session_start(monitor *m)
{
	scan_backend *b = module_backend_new();
	int r;

	if (!b)
		return -ENOMEM;
	b->o = &m->bo;
	r = b->ops->open(b);
	if (r >= 0) {
		snprintf(m->det_path, sizeof(m->det_path), "%s", b->path);
		b->cfg = m->scfg;
		m->t->backend = b->ops->name;
		reader_init(&m->rd, m->t, b->ops->parse_line, b);
		r = b->ops->prepare(b, m->t);
	}
	if (r >= 0) {
		r = b->ops->start(b, &m->rd);
		if (r == BACKEND_START_FAILED)
			r = -EIO;
	}
	if (r < 0) {
		b->ops->restore(b, false);
		b->ops->free(b);
		return r;
	}
	backend_close_stream(b); /* opened each tick: the module can be unloaded */
	m->b = b;
	if (detector_open(&m->det, m->det_path) < 0)
		log_msg("cannot open %s a second time: the time sampled is not counted", m->det_path);
	read_baseline(m);
	return 0;
}

/* The stream, open for one read (or to drain); -errno as open() says. */
static int open_stream(monitor *m)
{
	char path[sizeof(m->det_path) + 16];
	int fd;

	snprintf(path, sizeof(path), "%s/stream", m->det_path);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Stops sampling, takes what the stream still holds and the final totals. */
static void session_stop(monitor *m)
{
	const scan_backend *b = m->b;
	int fd;

	if (b->ops->stop(m->b) < 0)
		return;
	fd = open_stream(m);
	if (fd >= 0) {
		reader_drain(&m->rd, fd,
			     now_ns(CLOCK_MONOTONIC) + m->scfg->window_ns + DRAIN_GRACE_NS);
		close(fd);
	}
	read_totals(m);
}

/* The SMIs since the last reading into the interval (unknown once one fails). */
static void count_smis(monitor *m)
{
	uint64_t d;

	if (smi_msr_delta(&m->smi, &d))
		m->iv.smis += d;
	else
		m->iv.smi_known = false;
}

/*
 * The module's totals and the SMI count, read when they are reported (the
 * metrics file, an interval's end), not every tick: a tick's cost is what
 * an always-on monitor pays at every wake. A session's end reads them too
 * (session_stop()); only a module unloaded under it loses the growth since
 * the last reading, which undercounts the time sampled and never the gaps.
 */
static void take_readings(monitor *m)
{
	if (m->b)
		read_totals(m);
	count_smis(m);
}

/*
 * The metrics file: the closed intervals' counters and the one in
 * progress up to now, so that the counters move every
 * MONITOR_METRICS_PERIOD_NS whatever the interval.
 */
static void write_metrics(monitor *m)
{
	const char *path = m->cfg->monitor.openmetrics_file;
	monitor_totals now = m->tot;
	int r;

	take_readings(m);
	monitor_totals_add(&now, &m->iv);
	r = monitor_metrics_write_file(path, &now);

	if (r < 0 && !m->metrics_failed)
		log_error_errno(r, "cannot write the monitor's metrics file %s; trying again at "
				"each interval", path);
	else if (r >= 0 && m->metrics_failed)
		log_msg("wrote the monitor's metrics file %s again", path);
	m->metrics_failed = r < 0;
}

/* Not sampling from now on, for why (said). */
static void enter_pause(monitor *m, pause_reason why)
{
	static const char *const says[_PAUSE_REASON_MAX] = {
		[PAUSE_SCAN] = "a one-shot scan wants the detector; pausing until it is done",
		[PAUSE_DETECTOR] = "the detector went away (module unloaded, or disabled by "
				   "someone else); pausing until it is back",
	};

	log_msg("%s", says[why]);
	m->paused = true;
	m->why = why;
	m->paused_since = m->paused_at = now_ns(CLOCK_MONOTONIC);
	m->iv.pauses[why]++;
	m->tot.paused = true;
	write_metrics(m);
}

static void pause_monitor(monitor *m, pause_reason why, bool graceful)
{
	if (graceful)
		session_stop(m);
	drop_backend(m, graceful);
	enter_pause(m, why);
}

/* The pause so far into the interval (the rest goes to the next one). */
static void account_pause(monitor *m, uint64_t now)
{
	m->iv.paused_ns[m->why] += now - m->paused_at;
	m->paused_at = now;
}

/* One tick while sampling: the scan lock, then the stream. */
static void tick_sampling(monitor *m)
{
	int fd, r;

	if (scan_lock_held() > 0) {
		pause_monitor(m, PAUSE_SCAN, true);
		return;
	}
	fd = open_stream(m);
	if (fd == -ENOENT || fd == -ENODEV) {
		pause_monitor(m, PAUSE_DETECTOR, false);
		return;
	}
	if (fd < 0) {
		log_error_errno(fd, "cannot open %s/stream; trying again", m->det_path);
		return;
	}
	r = reader_read_until(&m->rd, fd, now_ns(CLOCK_MONOTONIC) + MONITOR_READ_NS);
	close(fd);
	/* The end of the stream: someone stopped the detector, or unloads it. */
	if (r != 0)
		pause_monitor(m, PAUSE_DETECTOR, access(m->det_path, F_OK) == 0);
}

/* One tick while paused: resumes once what made it pause is over. */
static void tick_paused(monitor *m)
{
	char took[32];
	uint64_t now;
	int r;

	if (m->why == PAUSE_SCAN && scan_lock_held() > 0)
		return;
	if (m->why == PAUSE_DETECTOR && access(m->det_path, F_OK) < 0)
		return;
	r = session_start(m);
	if (r < 0)
		return; /* said; tried again next tick */
	now = now_ns(CLOCK_MONOTONIC);
	account_pause(m, now);
	log_msg("resumed after a pause of %s (%s)",
		format_latency(now - m->paused_since, took, sizeof(took)),
		pause_reason_name(m->why));
	m->paused = false;
	m->tot.paused = false;
	write_metrics(m);
}

static void interval_begin(monitor *m, uint64_t number)
{
	const struct monitor_keys *k = &m->cfg->monitor;
	uint64_t skip;

	monitor_interval_start(&m->iv, number, now_ns(CLOCK_REALTIME), k->threshold_ns,
			       k->sample_budget);
	m->iv_start = now_ns(CLOCK_MONOTONIC);
	m->iv_end = m->iv_start + k->interval_ns;
	m->tot.threshold_ns = k->threshold_ns;
	/* Its SMIs are counted from the last reading, or from a first one now. */
	if (!m->smi.have_last)
		smi_msr_delta(&m->smi, &skip);
	m->iv.smi_known = m->smi.have_last;
}

/*
 * Journals the interval's summary, adds it to the counters and begins the
 * next one (empty); then the metrics file.
 */
static void interval_end(monitor *m, const char *why)
{
	const scan_config *c = m->scfg;
	const interval_context ctx = {
		.scan_id = m->id,
		.width_ns = c->width_ns,
		.window_ns = c->window_ns,
		.mode = c->mode,
		.cpus = c->set[CONFIG_CPUS] ? c->cpus : "default",
		.smi_cpu = m->smi.cpu,
		.smi_unavailable = m->smi.reason,
		.end = why,
	};
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	int r;

	if (m->paused)
		account_pause(m, now);
	m->iv.duration_ns = now - m->iv_start;
	take_readings(m);
	r = journal_entry_interval(&m->t->entry, &m->iv, &ctx);
	if (r >= 0)
		r = journal_entry_send_patient(&m->t->entry, m->t->export,
					       MONITOR_JOURNAL_PATIENCE_NS);
	if (r < 0)
		log_error_errno(r, "cannot journal the summary of interval %llu (its counters are "
				"in the metrics file)", (unsigned long long)m->iv.number);
	monitor_totals_close(&m->tot, &m->iv);
	interval_begin(m, m->iv.number + 1);
	write_metrics(m);
}

/*
 * A new configuration, checked whole before anything changes. The
 * interval so far ends with the old one; a detector that refuses the new
 * settings gets the old ones back. Returns 0 or a negative errno (said).
 */
static int reload(monitor *m)
{
	_cleanup_free_ scan_config *cfg = malloc(sizeof(*cfg));
	_cleanup_free_ scan_config *scfg = malloc(sizeof(*scfg));
	bool known;
	int r;

	log_msg("received SIGHUP: reloading the configuration");
	if (!cfg || !scfg)
		return log_error_errno(-ENOMEM, "cannot reload");
	if (scan_load_config(m->o, cfg) < 0 ||
	    monitor_scan_config(cfg, module_allow_high_duty(&known) || !known, scfg) < 0) {
		log_msg("the new configuration is invalid (said above); going on with the running one");
		return -EINVAL;
	}
	if (m->b) {
		session_stop(m);
		drop_backend(m, true);
	}
	interval_end(m, HWLAT_INTERVAL_END_RELOAD);
	SWAP(m->cfg, cfg);
	SWAP(m->scfg, scfg);
	interval_begin(m, m->iv.number);
	if (m->paused)
		return 0; /* the new settings apply when it resumes */
	r = session_start(m);
	if (r < 0) {
		log_msg("the detector refused the new configuration (said above); going back to the "
			"previous one");
		SWAP(m->cfg, cfg);
		SWAP(m->scfg, scfg);
		m->tot.threshold_ns = m->iv.threshold_ns = m->cfg->monitor.threshold_ns;
		m->iv.budget = m->cfg->monitor.sample_budget;
		if (session_start(m) < 0)
			enter_pause(m, PAUSE_DETECTOR);
		return r;
	}
	log_msg("reloaded the configuration");
	return 0;
}

/* The signal sig_fd reports, or 0 when there was none after all. */
static int take_signal(int sig_fd)
{
	struct signalfd_siginfo si;

	if (read(sig_fd, &si, sizeof(si)) != sizeof(si))
		return 0;
	return (int)si.ssi_signo;
}

/*
 * systemd's watchdog, pinged at half its period as sd_watchdog_enabled(3)
 * advises, not every tick: each ping is a socket and a message.
 */
static void watchdog_init(monitor *m)
{
	uint64_t usec;

	if (sd_watchdog_enabled(0, &usec) > 0)
		m->watchdog_ns = usec * NSEC_PER_USEC / 2;
}

static void ping_watchdog(monitor *m, uint64_t now)
{
	if (!m->watchdog_ns || now < m->next_ping)
		return;
	sd_notify(0, "WATCHDOG=1");
	m->next_ping = now + m->watchdog_ns;
}

/*
 * When the loop must wake next: the tick, the interval's end, the metrics
 * file or the watchdog, whichever comes first. An interval ends on time
 * whatever the tick.
 */
static uint64_t earlier(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t next_wake(const monitor *m, uint64_t tick)
{
	uint64_t t = earlier(earlier(tick, m->iv_end), m->next_metrics);

	return m->watchdog_ns ? earlier(t, m->next_ping) : t;
}

/* Waits for the next wake; a signal other than SIGHUP, or 0. */
static int wait_wake(monitor *m, int sig_fd, uint64_t now, uint64_t wake)
{
	struct pollfd p = { .fd = sig_fd, .events = POLLIN };
	int sig;

	if (poll(&p, 1, poll_timeout_ms(now, wake, POLL_MAX_WAIT_MS)) < 0 && errno != EINTR)
		return log_error_errno(-errno, "poll failed");
	if (!p.revents)
		return 0;
	sig = take_signal(sig_fd);
	if (sig == SIGHUP) {
		reload(m);
		return 0;
	}
	return sig;
}

/*
 * Ticks until a signal other than SIGHUP; returns it. Every wake with
 * something due reads the stream first, so that an interval or the
 * metrics file holds the windows queued up to then.
 */
static int loop(monitor *m, int sig_fd)
{
	uint64_t tick = now_ns(CLOCK_MONOTONIC) + MONITOR_TICK_NS;

	for (;;) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		uint64_t wake = next_wake(m, tick);
		int sig;

		if (now < wake) {
			sig = wait_wake(m, sig_fd, now, wake);
			if (sig)
				return sig;
			continue;
		}
		tick = now + MONITOR_TICK_NS;
		if (m->b)
			tick_sampling(m);
		else
			tick_paused(m);
		if (now_ns(CLOCK_MONOTONIC) >= m->iv_end) {
			interval_end(m, HWLAT_INTERVAL_END_TIME);
			m->next_metrics = now + MONITOR_METRICS_PERIOD_NS;
		} else if (now >= m->next_metrics) {
			write_metrics(m);
			m->next_metrics = now + MONITOR_METRICS_PERIOD_NS;
		}
		ping_watchdog(m, now);
	}
}

/* The id of the monitor's entries: the unit's invocation, else a new one. */
static void monitor_id(const scan_options *o, char buf[static SD_ID128_STRING_MAX])
{
	const char *inv = o->unit ? getenv("INVOCATION_ID") : NULL;
	sd_id128_t id;

	if (!inv || sd_id128_from_string(inv, &id) < 0)
		if (sd_id128_randomize(&id) < 0)
			id = (sd_id128_t){};
	sd_id128_to_string(id, buf);
}

/* "1.0 % of one CPU": what the settings cost with interrupts off. */
static void say_cost(const scan_config *c)
{
	/* per-cpu mode holds every sampling CPU: the cost per CPU. */
	bool each = strcmp(c->mode, "per-cpu") == 0;
	uint64_t permille = c->width_ns * 1000 / c->window_ns;

	log_msg("monitoring: threshold %llu us, %llu us of every %llu us, mode %s: %llu.%llu %% of "
		"%s with interrupts off",
		(unsigned long long)(c->threshold_ns / NSEC_PER_USEC),
		(unsigned long long)(c->width_ns / NSEC_PER_USEC),
		(unsigned long long)(c->window_ns / NSEC_PER_USEC), c->mode,
		(unsigned long long)(permille / 10), (unsigned long long)(permille % 10),
		each ? "every sampled CPU" : "one CPU");
}

static int monitor_init(monitor *m, const scan_options *o, const scan_config *cfg)
{
	bool known;

	m->o = o;
	m->bo = *o;
	m->bo.unit = true; /* the module is loaded once, never by a session */
	m->det.dir_fd = -1;
	m->cfg = malloc(sizeof(*m->cfg));
	m->scfg = malloc(sizeof(*m->scfg));
	m->t = calloc(1, sizeof(*m->t));
	if (!m->cfg || !m->scfg || !m->t)
		return log_error_errno(-ENOMEM, "cannot start the monitor");
	*m->cfg = *cfg;
	if (monitor_scan_config(cfg, module_allow_high_duty(&known) || !known, m->scfg) < 0)
		return -EINVAL;
	monitor_id(o, m->id);
	tally_init(m->t, m->id, false, NULL);
	m->hooks = (tally_journal_hooks){ .keep = keep_entry, .unsent = entry_unsent, .data = m };
	m->t->hooks = &m->hooks;
	m->t->journal_patience_ns = MONITOR_JOURNAL_PATIENCE_NS;
	monitor_totals_init(&m->tot, now_ns(CLOCK_REALTIME));
	smi_msr_open(&m->smi, o->platform_root, o->msr_dir);
	if (m->smi.cpu >= 0)
		log_msg("SMIs: MSR_SMI_COUNT of CPU %d, read on it%s%s", m->smi.cpu,
			m->smi.fd < 0 ? ": unavailable, " : "", m->smi.fd < 0 ? m->smi.reason : "");
	else
		log_msg("SMIs: unavailable, %s", m->smi.reason);
	return 0;
}

static void monitor_done(monitor *m)
{
	if (m->t) {
		tally_done(m->t);
		if (m->t->export)
			fclose(m->t->export);
	}
	smi_msr_close(&m->smi);
	detector_close(&m->det);
	free(m->t);
	free(m->scfg);
	free(m->cfg);
}

/* Starts sampling and the first interval; says READY=1 to systemd. */
static int monitor_start(monitor *m)
{
	int r;

	if (m->o->journal_export) {
		m->t->export = fopen(m->o->journal_export, "we");
		if (!m->t->export)
			return log_error_errno(-errno, "cannot create %s", m->o->journal_export);
	} else if (journal_check_socket() < 0) {
		log_msg("cannot write to the journal at %s (is systemd-journald running?); not "
			"starting the monitor", JOURNAL_SOCKET);
		return -EIO;
	}
	r = session_start(m);
	if (r < 0)
		return r;
	say_cost(m->scfg);
	interval_begin(m, 1);
	write_metrics(m);
	m->next_metrics = now_ns(CLOCK_MONOTONIC) + MONITOR_METRICS_PERIOD_NS;
	watchdog_init(m);
	sd_notifyf(0, "READY=1\nSTATUS=monitoring, interval %llu s",
		   (unsigned long long)(m->cfg->monitor.interval_ns / NSEC_PER_SEC));
	return 0;
}

int monitor_run(const scan_options *o, const scan_config *cfg, int sig_fd)
{
	monitor m = {};
	int r, sig;

	r = monitor_init(&m, o, cfg);
	if (r >= 0)
		r = monitor_start(&m);
	if (r < 0) {
		monitor_done(&m);
		return r;
	}
	sig = loop(&m, sig_fd);
	sd_notify(0, "STOPPING=1");
	if (sig > 0)
		log_msg("received %s, stopping the monitor", strsignal(sig));
	r = 0;
	if (m.b) {
		session_stop(&m);
		if (m.b->ops->restore(m.b, true) < 0)
			r = -EIO;
		m.b->ops->free(m.b);
		m.b = NULL;
	}
	interval_end(&m, HWLAT_INTERVAL_END_STOP);
	monitor_done(&m);
	return r < 0 ? r : sig < 0 ? sig : 0;
}
