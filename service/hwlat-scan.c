/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hwlat-scan: runs one bounded hardware latency scan with the hwlat_detector
 * module and writes every reported window to the journal as it arrives,
 * then one summary entry (docs/interfaces.md, hwlat-scan(8)).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-id128.h>

#include "scan-config.h"
#include "deadline.h"
#include "detector.h"
#include "gate.h"
#include "hwlat-journal.h"
#include "hwlat_abi.h"
#include "journal-entry.h"
#include "locked-settings.h"
#include "module.h"
#include "openmetrics.h"
#include "parse.h"
#include "identity.h"
#include "platform.h"
#include "sampled.h"
#include "smi-total.h"
#include "stats.h"
#include "progress.h"
#include "stream.h"
#include "tracer.h"
#include "log.h"
#include "macro.h"

#ifndef PACKAGE_VERSION
#error "PACKAGE_VERSION must be defined (config.h or -D)"
#endif

enum {
	EXIT_HARDLIMIT = 1,   /* max latency above --hardlimit */
	EXIT_USAGE = 2,       /* bad option, config key or value */
	EXIT_BUSY = 3,        /* another scan holds the detector, the tracer is in use */
	EXIT_NO_DETECTOR = 4, /* debugfs or module missing, load failed; no hwlat tracer */
	EXIT_FAILED = 5,      /* the scan itself failed */
	EXIT_FAIL_IF = 6,     /* a --fail-if condition holds */
	EXIT_NOT_APPLIED = 7, /* scanned, but not with every requested setting */
};

/* Time allowed for the stream to reach EOF after enable=0, beyond a window. */
#define DRAIN_GRACE_NS (2 * NSEC_PER_SEC)
/* Beyond the drain, for restoring the settings and writing the summary. */
#define FINISH_MARGIN_NS (30 * NSEC_PER_SEC)
/* Bad stream lines are each counted; only the first few are each logged. */
#define BAD_LINE_MESSAGES_MAX 10

typedef enum action {
	ACTION_SCAN,
	ACTION_CHECK_CONFIG,
	ACTION_LOAD_MODULE,
	ACTION_UNLOAD_MODULE,
	ACTION_HELP,
	ACTION_VERSION,
} action;

typedef struct scan_options {
	action action;
	const char *config_path;
	bool config_explicit;
	const char *detector_dir;
	const char *tracefs_dir;
	const char *journal_export;
	const char *platform_root;
	bool quiet;
	bool unit; /* run by hwlat-scan.service (--unit) */
	struct {
		const char *key;
		const char *value;
	} overrides[64];
	size_t n_overrides;
} scan_options;

typedef struct scan {
	char scan_id[SD_ID128_STRING_MAX];
	uint64_t threshold_ns;
	FILE *export;
	journal_entry entry;
	bool broken; /* a line failed: stop journaling, keep draining */
	uint64_t samples;
	uint64_t max_ns;
	smi_source smi_src;
	smi_tally smi;
	uint64_t nmi_total;
	uint64_t last_seq;
	uint64_t seq_gaps;
	struct stats stats; /* percentiles etc. for --fail-if */
	/* Per CPU, for openmetrics_file only (NULL: no window of that CPU). */
	bool per_cpu;
	struct stats *cpu_stats[HWLAT_MAX_CPUS];
	uint64_t skipped_lines; /* malformed, too long, cut: counted, not journaled */
	progress progress;
	/*
	 * Settings from module parameters (debugfs refused writes): the stream
	 * holds windows from before the scan, discarded, and its numbers do
	 * not start at 1, so the first line's seq is no gap.
	 */
	bool discard;
	uint64_t discarded;
	bool seq_known;
	/* Issue 15: the kernel's hwlat tracer samples (trace_pipe lines). */
	bool tracer;
	uint64_t lost_events;	/* "[LOST n EVENTS]" lines of trace_pipe */
	uint64_t foreign_lines; /* lines of other tracers or events */
	/* Issue 14: the module's `sampled` at the end (and start, when locked). */
	sampled_time sampled;
	sampled_time sampled_start;
	int sampled_start_r;
} scan;

static void help(void)
{
	printf("Usage: hwlat-scan [OPTIONS]\n"
	       "\n"
	       "Runs one bounded hardware latency scan with the hwlat_detector module\n"
	       "and writes every sample, then a summary, to the journal.\n"
	       "\n"
	       "  --duration=SPAN     how long to scan (default 120s; bare number: seconds)\n"
	       "  --threshold=SPAN    report gaps longer than this (bare number: us)\n"
	       "  --width=SPAN        sampling time per window (bare number: us)\n"
	       "  --window=SPAN       window period (bare number: us)\n"
	       "  --mode=MODE         none, round-robin, per-cpu or stop-machine\n"
	       "  --cpus=LIST         CPUs the samplers may use, e.g. 0-3,6\n"
	       "  --hardlimit=SPAN    exit with status 1 when the max latency exceeds it\n"
	       "                      (nanosecond precision: 1500ns)\n"
	       "  --fail-if=COND      exit with status 6 when COND holds, e.g. 'p99>20us',\n"
	       "                      'smi>0' (repeatable; replaces fail_if of the config;\n"
	       "                      FACT: max, pN, smi, smi-rate, nmi, unexplained,\n"
	       "                      dropped, samples)\n"
	       "  --backend=BACKEND   module (the hwlat_detector module, default), tracer\n"
	       "                      (the kernel's hwlat tracer in tracefs) or auto (the\n"
	       "                      module when it loads, else the tracer)\n"
	       "  --openmetrics-file=PATH  after the scan, write its figures for Prometheus\n"
	       "                      to PATH (atomically; e.g. in node-exporter's textfile\n"
	       "                      directory /var/lib/prometheus/node-exporter/)\n"
	       "  -C, --config=FILE   configuration file (default %s),\n"
	       "                      then FILE.d/*.conf\n"
	       "      --check-config  check the configuration, print the settings, touch\n"
	       "                      nothing; exit 0 when valid, 2 when not\n"
	       "  -q, --quiet         print no summary or progress\n"
	       "      --load-module   load the module, remember it in /run/hwlat (for the unit)\n"
	       "      --unload-module unload the module if --load-module loaded it\n"
	       "      --unit          run as hwlat-scan.service: the module is loaded by\n"
	       "                      ExecStartPre, the scan id is $INVOCATION_ID\n"
	       "  -h, --help          show this help\n"
	       "  -V, --version       show the version\n"
	       "\n"
	       "Exit status: 0 done, 1 hard limit exceeded, 2 invalid configuration,\n"
	       "3 another scan is running or the kernel's tracer is in use, 4 detector\n"
	       "(module or tracer) unavailable, 5 scan failed,\n"
	       "6 a --fail-if condition holds, 7 scanned with the module's settings, not\n"
	       "the requested ones (debugfs refused writes: kernel lockdown).\n"
	       "See hwlat-scan(8).\n",
	       CONFIG_DEFAULT_PATH);
}

enum {
	ARG_DURATION = 0x100,
	ARG_THRESHOLD,
	ARG_WIDTH,
	ARG_WINDOW,
	ARG_MODE,
	ARG_CPUS,
	ARG_HARDLIMIT,
	ARG_FAIL_IF, /* right after ARG_HARDLIMIT: keys in config_key order */
	ARG_OPENMETRICS_FILE,
	ARG_BACKEND, /* the last config key */
	ARG_LOAD,
	ARG_UNLOAD,
	ARG_UNIT,
	ARG_DETECTOR_DIR,
	ARG_TRACEFS_DIR,
	ARG_JOURNAL_EXPORT,
	ARG_PLATFORM_ROOT,
	ARG_CHECK_CONFIG,
};

static int parse_argv(int argc, char *argv[], scan_options *o)
{
	static const struct option longopts[] = {
		{ "duration", required_argument, NULL, ARG_DURATION },
		{ "threshold", required_argument, NULL, ARG_THRESHOLD },
		{ "width", required_argument, NULL, ARG_WIDTH },
		{ "window", required_argument, NULL, ARG_WINDOW },
		{ "mode", required_argument, NULL, ARG_MODE },
		{ "cpus", required_argument, NULL, ARG_CPUS },
		{ "hardlimit", required_argument, NULL, ARG_HARDLIMIT },
		{ "fail-if", required_argument, NULL, ARG_FAIL_IF },
		{ "openmetrics-file", required_argument, NULL, ARG_OPENMETRICS_FILE },
		{ "backend", required_argument, NULL, ARG_BACKEND },
		{ "config", required_argument, NULL, 'C' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "load-module", no_argument, NULL, ARG_LOAD },
		{ "unload-module", no_argument, NULL, ARG_UNLOAD },
		{ "unit", no_argument, NULL, ARG_UNIT },
		{ "check-config", no_argument, NULL, ARG_CHECK_CONFIG },
		/* For tests, documented in hwlat-scan(8), not in --help. */
		{ "detector-dir", required_argument, NULL, ARG_DETECTOR_DIR },
		{ "tracefs-dir", required_argument, NULL, ARG_TRACEFS_DIR },
		{ "journal-export", required_argument, NULL, ARG_JOURNAL_EXPORT },
		{ "platform-root", required_argument, NULL, ARG_PLATFORM_ROOT },
		{}
	};
	int c;

	o->action = ACTION_SCAN;
	o->config_path = CONFIG_DEFAULT_PATH;

	while ((c = getopt_long(argc, argv, "C:qhV", longopts, NULL)) >= 0) {
		switch (c) {
		case ARG_DURATION ... ARG_BACKEND:
			if (o->n_overrides >= ELEMENTSOF(o->overrides)) {
				log_msg("too many options");
				return -E2BIG;
			}
			o->overrides[o->n_overrides].key =
				config_key_name((config_key)(c - ARG_DURATION));
			o->overrides[o->n_overrides].value = optarg;
			o->n_overrides++;
			break;
		case 'C':
			o->config_path = optarg;
			o->config_explicit = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			o->action = ACTION_HELP;
			break;
		case 'V':
			o->action = ACTION_VERSION;
			break;
		case ARG_LOAD:
			o->action = ACTION_LOAD_MODULE;
			break;
		case ARG_UNLOAD:
			o->action = ACTION_UNLOAD_MODULE;
			break;
		case ARG_UNIT:
			o->unit = true;
			break;
		case ARG_CHECK_CONFIG:
			o->action = ACTION_CHECK_CONFIG;
			break;
		case ARG_DETECTOR_DIR:
			o->detector_dir = optarg;
			break;
		case ARG_TRACEFS_DIR:
			o->tracefs_dir = optarg;
			break;
		case ARG_JOURNAL_EXPORT:
			o->journal_export = optarg;
			break;
		case ARG_PLATFORM_ROOT:
			o->platform_root = optarg;
			break;
		default:
			log_msg("try 'hwlat-scan --help'");
			return -EINVAL;
		}
	}
	if (optind < argc) {
		log_msg("unexpected argument '%s' (try 'hwlat-scan --help')",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static int load_config(const scan_options *o, scan_config *c)
{
	bool gates_replaced = false;
	size_t i;
	int r;

	config_init(c);
	r = config_load(c, o->config_path, o->config_explicit);
	if (r < 0)
		return r;
	for (i = 0; i < o->n_overrides; i++) {
		/* The command line's --fail-if replace the file's fail_if. */
		if (strcmp(o->overrides[i].key, "fail_if") == 0 && !gates_replaced) {
			c->gates.n = 0;
			gates_replaced = true;
		}
		r = config_set(c, o->overrides[i].key, o->overrides[i].value,
			       "command line");
		if (r < 0)
			return r;
	}
	/* Both given: decide now, before anything is touched. */
	if (c->set[CONFIG_WIDTH] && c->set[CONFIG_WINDOW]) {
		r = config_check_bounds(c, 0, 0);
		if (r < 0)
			return r;
	}
	return config_check_cpus_online(c, "/sys/devices/system/cpu/online");
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

/* For a message: printable ASCII as is, other bytes as \\xNN, cut at 120. */
static char *escape_text(const char *text, size_t len, char *buf, size_t size)
{
	size_t i, o = 0;

	for (i = 0; i < len && o + 8 < size && o < 120; i++) {
		unsigned char ch = (unsigned char)text[i];

		if (ch >= 0x20 && ch < 0x7f && ch != '\\')
			buf[o++] = (char)ch;
		else
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", ch);
	}
	if (i < len)
		o += (size_t)snprintf(buf + o, size - o, "...");
	buf[o] = '\0';
	return buf;
}

/* A stream line that cannot be a sample: count it, say it, go on. */
static void skip_line(scan *s, const char *what, const char *text, size_t len)
{
	char esc[160];

	s->skipped_lines++;
	if (s->skipped_lines <= BAD_LINE_MESSAGES_MAX)
		log_msg("skipping %s in the detector's stream: '%s'", what,
			escape_text(text, len, esc, sizeof(esc)));
	if (s->skipped_lines == BAD_LINE_MESSAGES_MAX)
		log_msg("further unreadable stream lines are counted, not shown");
}

static void on_bad_line(line_problem why, const char *text, size_t len, void *userdata)
{
	scan *s = userdata;

	/* Before the scan: whatever it was, it is no part of it. */
	if (s->discard) {
		s->discarded++;
		return;
	}
	switch (why) {
	case LINE_TOO_LONG:
		skip_line(s, "a line longer than " STRINGIFY(STREAM_LINE_MAX) " bytes", text, len);
		break;
	case LINE_HAS_NUL:
		skip_line(s, "a line with a NUL byte", text, len);
		break;
	case LINE_CUT_AT_EOF:
		skip_line(s, "a partial last line (the stream ended in the middle of it)",
			  text, len);
		break;
	}
}

/* The statistics of the scan, and per CPU when metrics are written. */
static int count_window(scan *s, const hwlat_sample *smp, uint64_t lat)
{
	const struct stats_window w = {
		.latency_ns = lat,
		.count = smp->count,
		.nmi_count = smp->nmi_count,
		.smi_count_known = smp->smi_count_known,
		.smi_count = smp->smi_count,
		.smi_ns_known = smp->smi_ns_known,
		.smi_ns = smp->smi_ns,
	};
	struct stats **cpu = &s->cpu_stats[smp->cpu];
	int r = stats_add_window(&s->stats, &w, 0);

	if (r < 0 || !s->per_cpu)
		return r;
	if (!*cpu) {
		*cpu = malloc(sizeof(**cpu));
		if (!*cpu)
			return -ENOMEM;
		stats_init(*cpu, 0, 0);
	}
	return stats_add_window(*cpu, &w, 0);
}

static void scan_stats_done(scan *s)
{
	stats_done(&s->stats);
	for (size_t c = 0; c < HWLAT_MAX_CPUS; c++)
		if (s->cpu_stats[c]) {
			stats_done(s->cpu_stats[c]);
			free(s->cpu_stats[c]);
			s->cpu_stats[c] = NULL;
		}
}

/*
 * A trace_pipe line: 0 and *smp for a sample, 1 for a line that is none
 * (lost events, counted; another tracer's, ignored), -EINVAL.
 */
static int on_tracer_line(scan *s, const char *line, hwlat_sample *smp)
{
	uint64_t lost = 0;
	char esc[160];
	int r = tracer_parse_line(line, smp, &lost);

	if (r == TRACER_LINE_LOST) {
		s->lost_events += lost;
		log_msg("the kernel's trace buffer lost %llu events: '%s'", (unsigned long long)lost,
			escape_text(line, strlen(line), esc, sizeof(esc)));
		return 1;
	}
	if (r == TRACER_LINE_OTHER) {
		if (s->foreign_lines++ == 0)
			log_msg("ignoring lines of other tracers or events in trace_pipe, e.g. '%s'",
				escape_text(line, strlen(line), esc, sizeof(esc)));
		return 1;
	}
	return r < 0 ? r : 0;
}

/* Handles one stream line: parse, account, journal. */
static int on_line(const char *line, void *userdata)
{
	scan *s = userdata;
	hwlat_sample smp;
	uint64_t lat;
	int r;

	if (s->broken)
		return 0;
	if (s->discard) {
		s->discarded++;
		return 0;
	}
	r = s->tracer ? on_tracer_line(s, line, &smp) : stream_parse_line(line, &smp);
	if (r > 0)
		return 0;
	if (r < 0) {
		skip_line(s, "a malformed line", line, strlen(line));
		return 0;
	}
	if (!s->seq_known)
		s->seq_known = true;
	else if (smp.seq <= s->last_seq)
		log_msg("stream sequence went back from %llu to %llu",
			(unsigned long long)s->last_seq,
			(unsigned long long)smp.seq);
	else
		s->seq_gaps += smp.seq - s->last_seq - 1;
	s->last_seq = smp.seq;

	lat = hwlat_sample_latency_ns(&smp);
	s->samples++;
	if (lat > s->max_ns)
		s->max_ns = lat;
	smi_source_apply(&s->smi_src, &smp);
	smi_tally_add(&s->smi, &smp);
	s->nmi_total += smp.nmi_count;
	r = count_window(s, &smp, lat);
	if (r < 0) {
		s->broken = true;
		return log_error_errno(r, "cannot count sample %llu", (unsigned long long)smp.seq);
	}

	r = journal_entry_sample_of(&s->entry, s->scan_id, s->threshold_ns,
				    s->tracer ? HWLAT_BACKEND_TRACER : HWLAT_BACKEND_MODULE, &smp);
	if (r >= 0)
		r = journal_entry_send(&s->entry, s->export);
	if (r < 0) {
		s->broken = true;
		return log_error_errno(r, "cannot write sample %llu to the journal",
				 (unsigned long long)smp.seq);
	}
	return 0;
}

typedef enum sample_end {
	END_COMPLETED,
	END_SIGNAL,
	END_EOF,   /* someone else disabled the detector */
	END_ERROR,
} sample_end;

/* Reads the stream until the deadline, a signal, EOF or an error. */
static sample_end sample_loop(scan *s, line_reader *lr, int stream_fd,
			      int sig_fd, uint64_t deadline)
{
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = stream_fd, .events = POLLIN },
			{ .fd = sig_fd, .events = POLLIN },
		};
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		long r;
		int n;

		if (now >= deadline)
			return END_COMPLETED;
		progress_update(&s->progress, now, s->samples, s->max_ns);
		n = poll(p, 2, poll_timeout_ms(now, deadline,
					       s->progress.on ? PROGRESS_INTERVAL_MS : POLL_MAX_WAIT_MS));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_error_errno(-errno, "poll failed");
			return END_ERROR;
		}
		if (p[1].revents) {
			struct signalfd_siginfo si;

			if (read(sig_fd, &si, sizeof(si)) == sizeof(si))
				log_msg("received %s, stopping the scan",
					strsignal((int)si.ssi_signo));
			return END_SIGNAL;
		}
		if (!p[0].revents)
			continue;
		r = line_reader_read(lr, stream_fd, on_line, s);
		if (r == -EAGAIN || r == -EINTR)
			continue;
		if (r == 0)
			return END_EOF;
		if (r < 0) {
			if (!s->broken)
				log_error_errno((int)r, "cannot read the detector's stream");
			return END_ERROR;
		}
	}
}

/* After enable=0: reads what is buffered until EOF or the deadline. */
static int drain(scan *s, line_reader *lr, int stream_fd, uint64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = stream_fd, .events = POLLIN };
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		long r;

		if (now >= deadline) {
			log_msg("the detector's stream did not end after enable=0");
			return -ETIMEDOUT;
		}
		if (poll(&p, 1, poll_timeout_ms(now, deadline, POLL_MAX_WAIT_MS)) < 0) {
			if (errno == EINTR)
				continue;
			return log_error_errno(-errno, "poll failed");
		}
		if (!p.revents)
			continue;
		r = line_reader_read(lr, stream_fd, on_line, s);
		if (r == -EAGAIN || r == -EINTR)
			continue;
		if (r == 0)
			return 0;
		if (r < 0) {
			/* The journal failed: keep reading to EOF, journal nothing. */
			if (s->broken)
				continue;
			return log_error_errno((int)r, "cannot read the detector's stream");
		}
	}
}

/*
 * Every signal whose default action would end the scan, other than the ones
 * a fault raises, ends it like SIGTERM: SIGHUP (the terminal went away),
 * SIGINT, SIGQUIT, SIGUSR1/2, SIGALRM, real-time signals... so that the
 * detector is never left enabled. SIGPIPE is ignored instead (main()).
 */
static int signalfd_setup(sigset_t *old)
{
	static const int keep[] = {
		SIGKILL, SIGSTOP, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS,
		SIGABRT, SIGCHLD, SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU, SIGWINCH,
		SIGURG, SIGPIPE,
	};
	sigset_t mask;
	size_t i;
	int fd;

	sigfillset(&mask);
	for (i = 0; i < ELEMENTSOF(keep); i++)
		sigdelset(&mask, keep[i]);
	if (sigprocmask(SIG_BLOCK, &mask, old) < 0)
		return log_error_errno(-errno, "cannot block signals");
	fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return log_error_errno(-errno, "cannot create a signalfd");
	return fd;
}

/* A DMI string as the terminal may show it: control bytes as '?'. */
static const char *printable(const char *s, char *buf, size_t size)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < size; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

/* "hwlat-scan: machine: ..." (issue 14): the identity in the summary. */
static void print_identity(const machine_identity *id)
{
	char a[IDENTITY_STR_MAX], b[IDENTITY_STR_MAX], c[IDENTITY_STR_MAX];

	if (!id)
		return;
	printf("hwlat-scan: machine: %s", printable(id->sys_vendor, a, sizeof(a)));
	printf(" %s, board", printable(id->product_name, a, sizeof(a)));
	printf(" %s %s", printable(id->board_vendor, a, sizeof(a)),
	       printable(id->board_name, b, sizeof(b)));
	printf(", BIOS %s %s %s", printable(id->bios_vendor, a, sizeof(a)),
	       printable(id->bios_version, b, sizeof(b)), printable(id->bios_date, c, sizeof(c)));
	printf(", microcode %s", printable(id->microcode, a, sizeof(a)));
	if (id->cpu_count_known)
		printf(", %llu CPUs\n", (unsigned long long)id->cpu_count);
	else
		printf(", CPU count unavailable\n");
}

/* "hwlat-scan: time sampled 0.900 s on 2 CPUs" (issue 14). */
static void print_sampled(const sampled_time *t)
{
	unsigned int n = 0;

	if (!t) {
		printf("hwlat-scan: time sampled unavailable\n");
		return;
	}
	for (unsigned int cpu = 0; cpu < HWLAT_MAX_CPUS; cpu++)
		n += cpu_set_has(&t->listed, cpu);
	printf("hwlat-scan: time sampled %llu.%03llu s on %u CPU%s\n",
	       (unsigned long long)(t->total_ns / NSEC_PER_SEC),
	       (unsigned long long)(t->total_ns % NSEC_PER_SEC / NSEC_PER_MSEC), n,
	       n == 1 ? "" : "s");
}

/* Returns a negative errno when stdout cannot take it (EPIPE). */
static int print_summary(const scan_summary *sum, uint64_t seq_gaps,
			 const smi_tally *smi, const smi_total *smi_total)
{
	char a[32], b[32], c[32], floor[32] = HWLAT_UNAVAILABLE;

	if (!sum->floor_unavailable)
		snprintf(floor, sizeof(floor), "%llu ns", (unsigned long long)sum->floor_ns);
	printf("hwlat-scan: scan %s %s after %llu.%03llu s (threshold %s, width %s, window %s, mode %s, CPUs %s)\n",
	       sum->scan_id, sum->status,
	       (unsigned long long)(sum->duration_ns / NSEC_PER_SEC),
	       (unsigned long long)(sum->duration_ns % NSEC_PER_SEC / NSEC_PER_MSEC),
	       format_latency(sum->threshold_ns, a, sizeof(a)),
	       format_latency(sum->width_ns, b, sizeof(b)),
	       format_latency(sum->window_ns, c, sizeof(c)), sum->mode, sum->cpus);
	printf("hwlat-scan: %llu samples, max latency %s, %llu dropped (%llu seen as sequence gaps), %llu NMIs, detection floor %s\n",
	       (unsigned long long)sum->samples,
	       sum->samples ? format_latency(sum->max_ns, a, sizeof(a)) : "-",
	       (unsigned long long)sum->dropped, (unsigned long long)seq_gaps,
	       (unsigned long long)sum->nmi_total, floor);
	if (sum->backend && strcmp(sum->backend, HWLAT_BACKEND_TRACER) == 0)
		printf("hwlat-scan: backend tracer: the kernel's hwlat tracer sampled (no SMI counts, no detection floor)\n");
	fputs("hwlat-scan: SMIs: ", stdout);
	smi_print(stdout, smi, smi_total, sum->cpus);
	printf("\nhwlat-scan: platform: hypervisor %s, clocksource %s, TSC stable %s",
	       sum->hypervisor, sum->clocksource, sum->tsc_stable);
	if (sum->cpus_excluded && sum->cpus_excluded[0])
		printf(", CPUs left out of the default set %s", sum->cpus_excluded);
	putchar('\n');
	print_identity(sum->identity);
	if (sum->settings_not_applied)
		printf("hwlat-scan: settings from the module's parameters (debugfs refused writes); not in force: %s\n",
		       sum->settings_not_applied);
	else if (sum->settings_source &&
		 strcmp(sum->settings_source, HWLAT_SETTINGS_SOURCE_PARAMETERS) == 0)
		printf("hwlat-scan: settings from the module's parameters (debugfs refused writes)\n");
	print_sampled(sum->sampled);
	if (sum->skipped_lines)
		printf("hwlat-scan: %llu unreadable stream lines skipped\n",
		       (unsigned long long)sum->skipped_lines);
	if (sum->hardlimit_ns && sum->max_ns > sum->hardlimit_ns)
		printf("hwlat-scan: max latency %s exceeds the hard limit %s\n",
		       format_latency(sum->max_ns, a, sizeof(a)),
		       format_latency(sum->hardlimit_ns, b, sizeof(b)));
	if (fflush(stdout) != 0 || ferror(stdout))
		return -(errno ? errno : EIO);
	return 0;
}

/* What the module's `smi` file says about counting SMIs. */
static void read_smi_source(detector *d, smi_source *ret)
{
	char buf[SMI_REASON_MAX];
	int r = detector_read(d, "smi", buf, sizeof(buf));

	if (r == -ENOENT) {
		smi_source_parse(NULL, ret);
		return;
	}
	if (r < 0) {
		log_error_errno(r, "cannot read %s/smi", d->path);
		memset(ret, 0, sizeof(*ret));
		snprintf(ret->reason, sizeof(ret->reason), "cannot read the module's smi file: %s",
			 strerror(-r));
		return;
	}
	smi_source_parse(buf, ret);
}

/*
 * The module's `cpus_excluded` into buf; NULL when it has no such file or
 * the scan named its CPUs (then nothing was left out by default).
 */
static const char *read_cpus_excluded(detector *d, const scan_config *cfg, char *buf,
				      size_t size)
{
	cpu_set_bits set;
	int r;

	if (cfg->set[CONFIG_CPUS])
		return NULL;
	r = detector_read(d, "cpus_excluded", buf, size);
	if (r == -ENOENT)
		return NULL;
	if (r < 0) {
		log_error_errno(r, "cannot read %s/cpus_excluded", d->path);
		return NULL;
	}
	strip(buf);
	if (buf[0] && parse_cpulist(buf, &set) < 0) {
		log_msg("%s/cpus_excluded: expected a cpulist, read '%s'; not recorded", d->path,
			buf);
		return NULL;
	}
	return buf;
}

/*
 * The time the module sampled during the scan (issue 14), read once it no
 * longer samples (or, under module parameters, its growth since the start):
 * NULL, "unavailable", when it cannot be known (the reason logged). A scan
 * that never started sampled nothing.
 */
static const sampled_time *scan_sampled(scan *s, detector *d, bool started, bool is_locked)
{
	char path[sizeof(d->path) + sizeof(SAMPLED_FILE) + 1];
	int r;

	if (!started) {
		memset(&s->sampled, 0, sizeof(s->sampled));
		return &s->sampled;
	}
	snprintf(path, sizeof(path), "%s/%s", d->path, SAMPLED_FILE);
	r = sampled_read(d, &s->sampled);
	if (r == -ENOENT)
		log_msg("%s does not exist: the %s module is older than this hwlat-scan, the time "
			"sampled is unavailable (rebuild the module: dkms autoinstall)",
			path, MODULE_NAME);
	if (r < 0)
		return NULL;
	if (is_locked && (s->sampled_start_r < 0 ||
			  sampled_since(&s->sampled, &s->sampled_start, path) < 0))
		return NULL;
	return &s->sampled;
}

/*
 * Evaluates the fail_if conditions over the scan; says each outcome (the
 * failed ones on stderr, the others with the summary). Returns how many
 * failed.
 */
static size_t check_gates(const scan_config *cfg, const scan *s, const scan_summary *sum,
			  bool quiet)
{
	struct gate_result res[GATE_MAX_CONDITIONS];
	struct gate_facts f = {
		.stats = &s->stats,
		.smi = sum->smi_total,
		.smi_known = sum->smi_total_known,
		.smi_why = sum->smi_unavailable,
		.dropped = sum->dropped,
		/* smi-rate: per hour sampled, as the SMI total was counted. */
		.sampled_ns = sum->sampled ? sampled_smi_ns(sum->sampled, sum->smi_method) : 0,
		.sampled_known = sum->sampled != NULL,
		.sampled_why = "the time sampled is unavailable (said above)",
	};
	size_t failed = gate_eval_all(&cfg->gates, &f, res);
	char line[320];

	for (size_t i = 0; i < cfg->gates.n; i++) {
		gate_describe(&cfg->gates.g[i], &f, &res[i], line, sizeof(line));
		if (res[i].failed)
			log_msg("%s", line);
		else if (!quiet)
			printf("hwlat-scan: %s\n", line);
	}
	fflush(stdout);
	return failed;
}

/* openmetrics_file (issue 14): the scan's figures for Prometheus. */
static int write_metrics(const char *path, const scan *s, const scan_summary *sum)
{
	static const double percentiles[] = { 50, 90, 99, 99.9 };
	const struct openmetrics_facts x = {
		.all = &s->stats,
		.cpu = s->cpu_stats,
		.percentiles = percentiles,
		.n_percentiles = ELEMENTSOF(percentiles),
		.scans = 1,
		.smi_known = sum->smi_total_known,
		.smi_total = sum->smi_total,
		.dropped = sum->dropped,
		.duration_known = true,
		.duration_ns = sum->duration_ns,
		.sampled_known = sum->sampled != NULL,
		.sampled_ns = sum->sampled ? sum->sampled->total_ns : 0,
		.cpu_sampled_ns = sum->sampled ? sum->sampled->ns : NULL,
		.have_threshold = true,
		.threshold_ns = sum->threshold_ns,
		.have_last = true,
		.last_end_ns = sum->start_ns + sum->duration_ns,
		.last_status = sum->status,
	};
	int r = openmetrics_write_file(path, &x);

	if (r < 0)
		return log_error_errno(r, "cannot write the OpenMetrics file %s", path);
	return 0;
}

/*
 * --load-module (the unit's ExecStartPre) follows the configured backend:
 * with tracer nothing is loaded; with auto a module that cannot be loaded
 * is no failure, the scan then uses the tracer.
 */
static int action_load_module(const scan_options *o, scan_backend backend)
{
	char mnt[4096];
	bool loaded;
	int r;

	if (backend == BACKEND_TRACER) {
		log_msg("backend tracer: not loading the %s module", MODULE_NAME);
		return 0;
	}

	/* With a (fake) detector directory, debugfs is not needed. */
	if (!o->detector_dir && debugfs_find(mnt, sizeof(mnt)) == -ENOENT) {
		if (debugfs_available() == 0) {
			debugfs_log_unavailable();
			return EXIT_NO_DETECTOR;
		}
		if (debugfs_mount() < 0)
			return EXIT_NO_DETECTOR;
	}
	r = module_load(&loaded);
	if (r < 0 && backend == BACKEND_AUTO) {
		log_msg("backend auto: the %s module cannot be loaded (said above); the scan will "
			"use the kernel's hwlat tracer", MODULE_NAME);
		return 0;
	}
	if (r < 0)
		return EXIT_NO_DETECTOR;
	if (!loaded)
		return module_marker_take() < 0 ? EXIT_FAILED : 0;
	return module_marker_write() < 0 ? EXIT_FAILED : 0;
}

static int action_unload_module(void)
{
	int r = module_marker_take();

	if (r < 0)
		return EXIT_FAILED;
	if (r == 0)
		return 0;
	return module_unload() < 0 ? EXIT_NO_DETECTOR : 0;
}

/* What to undo on the way out. */
typedef struct cleanup {
	bool mounted_debugfs;
	bool loaded_module;
	detector det;
	bool changed; /* settings or enable were written */
	detector_settings saved, state;
	bool saved_enabled;
} cleanup;

static int undo(cleanup *c)
{
	int ret = 0;

	if (c->changed) {
		if (detector_change(&c->det, &c->state, &c->saved) < 0)
			ret = -EIO;
		if (c->saved_enabled && detector_write(&c->det, "enable", "1") < 0) {
			log_msg("cannot re-enable the detector as it was before the scan");
			ret = -EIO;
		}
	}
	if (c->loaded_module && module_unload() < 0)
		ret = -EIO;
	detector_close(&c->det);
	if (c->mounted_debugfs && debugfs_umount() < 0)
		ret = -EIO;
	return ret;
}

static int open_detector(const scan_options *o, cleanup *c)
{
	char path[4096 + 32], mnt[4096];
	bool interactive = !o->unit;
	int r;

	if (o->detector_dir) {
		snprintf(path, sizeof(path), "%s", o->detector_dir);
	} else {
		r = debugfs_find(mnt, sizeof(mnt));
		if (r == -ENOENT && debugfs_available() == 0) {
			debugfs_log_unavailable();
			return EXIT_NO_DETECTOR;
		}
		if (r == -ENOENT && interactive) {
			if (debugfs_mount() < 0)
				return EXIT_NO_DETECTOR;
			c->mounted_debugfs = true;
			snprintf(mnt, sizeof(mnt), "%s", DEBUGFS_DEFAULT_MOUNT);
		} else if (r == -ENOENT) {
			log_msg("debugfs is not mounted (mount it on %s)",
				DEBUGFS_DEFAULT_MOUNT);
			return EXIT_NO_DETECTOR;
		} else if (r < 0) {
			return EXIT_NO_DETECTOR;
		}
		snprintf(path, sizeof(path), "%s/%s", mnt, DETECTOR_DIR_NAME);

		if (interactive) {
			r = module_load(&c->loaded_module);
			if (r < 0)
				return EXIT_NO_DETECTOR;
		}
	}

	r = detector_open(&c->det, path);
	if (r == -ENOENT && !o->detector_dir && module_is_loaded()) {
		log_msg("%s does not exist although the %s module is loaded: it could not create "
			"its debugfs files (its load message in 'dmesg' says why)", path, MODULE_NAME);
		return EXIT_NO_DETECTOR;
	}
	if (r == -ENOENT && !o->detector_dir) {
		log_msg("%s does not exist: the %s module is not loaded%s", path,
			MODULE_NAME,
			interactive ? "" : " (the unit's ExecStartPre=+hwlat-scan --load-module loads it)");
		return EXIT_NO_DETECTOR;
	}
	if (r < 0) {
		log_error_errno(r, "cannot open the detector directory %s", path);
		return EXIT_NO_DETECTOR;
	}
	r = detector_lock(&c->det);
	if (r == -EWOULDBLOCK) {
		log_msg("another hwlat-scan is already running on %s; not starting a second scan",
			path);
		return EXIT_BUSY;
	}
	if (r < 0) {
		log_error_errno(r, "cannot lock %s", path);
		return EXIT_FAILED;
	}
	return 0;
}

/* The detector's settings with the configured ones put in. */
static int wanted_settings(const scan_config *cfg, const detector_settings *cur,
			   detector_settings *want)
{
	*want = *cur;
	if (cfg->set[CONFIG_THRESHOLD])
		want->threshold_us = cfg->threshold_ns / NSEC_PER_USEC;
	if (cfg->set[CONFIG_WIDTH])
		want->width_us = cfg->width_ns / NSEC_PER_USEC;
	if (cfg->set[CONFIG_WINDOW])
		want->window_us = cfg->window_ns / NSEC_PER_USEC;
	if (cfg->set[CONFIG_MODE]) {
		if (!cur->has_mode) {
			log_msg("invalid key 'mode': this detector has no mode file");
			return -EINVAL;
		}
		snprintf(want->mode, sizeof(want->mode), "%s", cfg->mode);
	}
	if (cfg->set[CONFIG_CPUS]) {
		if (!cur->has_cpus) {
			log_msg("invalid key 'cpus': this detector has no cpus file");
			return -EINVAL;
		}
		snprintf(want->cpus, sizeof(want->cpus), "%s", cfg->cpus);
	}
	return 0;
}

/*
 * Under --unit: the unit's TimeoutStartSec= covers the default duration
 * only; tell systemd how long this scan will take from now (it extends the
 * start timeout to at least that, NotifyAccess=main).
 */
static void extend_start_timeout(const scan_options *o, uint64_t duration_ns, uint64_t window_us)
{
	uint64_t usec = (duration_ns + window_us * NSEC_PER_USEC + DRAIN_GRACE_NS +
			 FINISH_MARGIN_NS) / NSEC_PER_USEC;
	int r;

	if (!o->unit)
		return;
	r = sd_notifyf(0, "EXTEND_TIMEOUT_USEC=%llu", (unsigned long long)usec);
	if (r < 0)
		log_error_errno(r, "cannot tell systemd the scan's duration (EXTEND_TIMEOUT_USEC)");
}

/* Without an export file, the entries need journald: check before starting. */
static int check_journal(FILE *export)
{
	int r;

	if (export)
		return 0;
	r = journal_check_socket();
	if (r < 0) {
		log_error_errno(r, "cannot write to the journal at %s (is systemd-journald running?); not starting the scan",
			  JOURNAL_SOCKET);
		return r;
	}
	return 0;
}

/*
 * The detector's settings in force and whether it samples: from its
 * setting files, or, where debugfs refuses to open enable for writing
 * (kernel lockdown), from the module's parameters (*ret_locked, l). *ret_lifted
 * tells whether the module's per-mode bounds are lifted or unknown (a
 * module without allow_high_duty has none). Returns 0 or an exit status.
 */
static int settings_in_force(cleanup *c, locked_settings *l, bool *ret_locked,
			     bool *ret_lifted)
{
	char buf[16];
	bool known;
	int r;

	/*
	 * Lockdown refuses every setting file; without enable nothing can be
	 * started or stopped. A refusal of another file alone is no lockdown:
	 * the write fails and says so.
	 */
	*ret_locked = false;
	r = detector_probe_write(&c->det, "enable");
	if (r == -EPERM || r == -EACCES) {
		r = locked_settings_read(&c->det, "enable", r, l);
		if (r < 0)
			return EXIT_NO_DETECTOR;
		*ret_locked = true;
		*ret_lifted = l->params.allow_high_duty;
		c->saved = l->params.settings;
		c->saved_enabled = l->params.enabled;
		return 0;
	}

	r = detector_read_settings(&c->det, &c->saved);
	if (r < 0)
		return EXIT_NO_DETECTOR;
	r = detector_read(&c->det, "enable", buf, sizeof(buf));
	if (r < 0) {
		log_error_errno(r, "cannot read %s/enable", c->det.path);
		return EXIT_NO_DETECTOR;
	}
	c->saved_enabled = strcmp(strip(buf), "1") == 0;
	*ret_lifted = module_allow_high_duty(&known) || !known;
	return 0;
}

/*
 * Reads what the stream holds now, without waiting. Returns 0, 1 at EOF
 * (the detector was disabled), or a negative errno (logged).
 */
static int read_buffered(scan *s, line_reader *lr, int stream_fd)
{
	for (;;) {
		long r = line_reader_read(lr, stream_fd, on_line, s);

		if (r == -EINTR)
			continue;
		if (r == -EAGAIN)
			return 0;
		if (r == 0)
			return 1;
		if (r < 0) {
			if (s->broken)
				continue;
			return log_error_errno((int)r, "cannot read the detector's stream");
		}
	}
}

/*
 * With the module's settings the detector samples since it was loaded:
 * the windows it buffered before now are no part of this scan. Returns
 * the detector's dropped count now (the scan's is what it adds).
 */
static uint64_t start_locked(scan *s, line_reader *lr, int stream_fd, detector *d)
{
	uint64_t dropped = 0;

	s->discard = true;
	read_buffered(s, lr, stream_fd);
	s->discard = false;
	lr->len = 0;
	lr->discarding = false;
	if (s->discarded)
		log_msg("discarded %llu stream lines the detector buffered before the scan started",
			(unsigned long long)s->discarded);
	if (detector_read_u64(d, "dropped", &dropped) < 0)
		dropped = 0;
	return dropped;
}

/* What the summary says about the machine, whichever backend sampled. */
typedef struct machine_facts {
	struct utsname u;
	platform plat;
	machine_identity ident;
} machine_facts;

static void summary_machine(const scan_options *o, machine_facts *m, scan_summary *sum)
{
	uname(&m->u);
	platform_read(o->platform_root, &m->plat);
	identity_read(o->platform_root, &m->ident);
	sum->kernel = m->u.release;
	sum->cpu_model = m->plat.cpu_model;
	sum->hypervisor = m->plat.hypervisor;
	sum->clocksource = m->plat.clocksource;
	sum->tsc_stable = m->plat.tsc_stable;
	sum->identity = &m->ident;
}

/*
 * The end of every scan, once the detector or tracer is restored: the
 * summary entry, the printed summary, the fail_if conditions, the metrics
 * file and the exit status, whichever backend sampled.
 */
static int finish_scan(const scan_options *o, const scan_config *cfg, scan *s, scan_summary *sum,
		       sample_end end, const smi_total *smi_total, FILE *export)
{
	int r, ret;

	sum->status = end == END_COMPLETED ? HWLAT_STATUS_COMPLETED :
		     end == END_SIGNAL ? HWLAT_STATUS_INTERRUPTED :
					 HWLAT_STATUS_FAILED;
	r = journal_entry_summary(&s->entry, sum);
	if (r >= 0)
		r = journal_entry_send(&s->entry, export);
	if (r < 0) {
		log_error_errno(r, "cannot write the summary to the journal");
		end = END_ERROR;
	}

	if (!o->quiet) {
		r = print_summary(sum, s->seq_gaps, &s->smi, smi_total);
		if (r < 0)
			log_error_errno(r, "cannot print the summary on standard output (it is in the journal)");
	}

	/* A latency equal to the hard limit passes: only above it fails. */
	if (end == END_ERROR || end == END_EOF)
		ret = EXIT_FAILED;
	else if (cfg->hardlimit_ns && s->max_ns > cfg->hardlimit_ns)
		ret = EXIT_HARDLIMIT;
	else
		ret = 0;
	/* A failed scan is not judged: its figures are incomplete. */
	if (ret != EXIT_FAILED && cfg->gates.n > 0 &&
	    check_gates(cfg, s, sum, o->quiet) > 0 && ret == 0)
		ret = EXIT_FAIL_IF;
	/* Figures of other settings than asked for never pass as they were. */
	if (ret == 0 && sum->settings_not_applied)
		ret = EXIT_NOT_APPLIED;
	/* Also for a failed scan: its status is what monitoring must see. */
	if (cfg->openmetrics_file[0] && write_metrics(cfg->openmetrics_file, s, sum) < 0)
		ret = EXIT_FAILED;
	return ret;
}

/*
 * A scan with the hwlat_detector module. c holds the opened detector
 * (open_detector()); it is restored and closed here.
 */
static int run_module_scan(const scan_options *o, const scan_config *cfg, int sig_fd, scan *s,
			   line_reader *lr, FILE *export, cleanup *cp)
{
	_cleanup_close_ int stream_fd = -1;
	cleanup c = *cp;
	detector_settings want, used;
	locked_settings locked = {};
	bool is_locked, bounds_lifted;
	uint64_t dropped_at_start = 0;
	scan_summary sum = {};
	smi_total smi_total;
	machine_facts m;
	char clock_name[64], excluded[4096];
	uint64_t enabled_at, deadline, stopped_at, v, unexplained;
	sample_end end;
	bool started = false;
	int r, ret;

	ret = settings_in_force(&c, &locked, &is_locked, &bounds_lifted);
	if (ret != 0)
		goto out;
	read_smi_source(&c.det, &s->smi_src);
	r = config_check_bounds(cfg, c.saved.width_us * NSEC_PER_USEC,
				c.saved.window_us * NSEC_PER_USEC);
	if (r >= 0)
		r = config_check_mode_bounds(cfg, c.saved.has_mode ? c.saved.mode : NULL,
					     c.saved.width_us * NSEC_PER_USEC,
					     c.saved.window_us * NSEC_PER_USEC, bounds_lifted);
	if (r >= 0)
		r = wanted_settings(cfg, &c.saved, &want);
	if (r < 0) {
		ret = EXIT_USAGE;
		goto out;
	}
	if (is_locked && locked_settings_compare(&locked, cfg, &want) < 0) {
		ret = EXIT_NO_DETECTOR;
		goto out;
	}
	if (check_journal(export) < 0) {
		ret = EXIT_FAILED;
		goto out;
	}

	stream_fd = openat(c.det.dir_fd, "stream", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (stream_fd < 0) {
		if (errno == EBUSY) {
			log_msg("%s/stream is open by another reader; not starting",
				c.det.path);
			ret = EXIT_BUSY;
		} else {
			log_error_errno(-errno, "cannot open %s/stream", c.det.path);
			ret = EXIT_NO_DETECTOR;
		}
		goto out;
	}

	s->export = export;
	s->seq_known = !is_locked;
	c.state = c.saved;
	if (is_locked) {
		dropped_at_start = start_locked(s, lr, stream_fd, &c.det);
		/* It samples since the load: the scan's part is the growth. */
		s->sampled_start_r = sampled_read(&c.det, &s->sampled_start);
		extend_start_timeout(o, cfg->duration_ns, c.state.window_us);
		r = 0;
		goto sampling;
	}
	/* From here on, the detector is changed: undo() restores it. */
	c.changed = true;
	if (c.saved_enabled) {
		r = detector_write(&c.det, "enable", "0");
		if (r < 0) {
			log_error_errno(r, "cannot stop the detector");
			ret = EXIT_FAILED;
			goto out;
		}
	}
	r = detector_change(&c.det, &c.state, &want);
	if (r >= 0) {
		extend_start_timeout(o, cfg->duration_ns, c.state.window_us);
		r = detector_write(&c.det, "enable", "1");
		if (r < 0)
			log_error_errno(r, "cannot enable the detector");
	}
sampling:
	enabled_at = now_ns(CLOCK_MONOTONIC);
	sum.start_ns = now_ns(CLOCK_REALTIME);
	s->threshold_ns = c.state.threshold_us * NSEC_PER_USEC;
	if (r < 0) {
		/* Nothing sampled: still one summary, "failed", then restore. */
		log_msg("the scan could not start; restoring the previous settings");
		stopped_at = enabled_at;
		end = END_ERROR;
		goto summary;
	}
	deadline = enabled_at + cfg->duration_ns;
	started = true;
	progress_start(&s->progress, progress_wanted(o->quiet, o->unit), enabled_at,
		       cfg->duration_ns);

	end = sample_loop(s, lr, stream_fd, sig_fd, deadline);

	if (is_locked) {
		/* The detector keeps sampling: take what it holds, no EOF. */
		stopped_at = now_ns(CLOCK_MONOTONIC);
		progress_stop(&s->progress);
		if (end != END_EOF) {
			r = read_buffered(s, lr, stream_fd);
			if (r == 1)
				end = END_EOF;
			else if (r < 0 && end == END_COMPLETED)
				end = END_ERROR;
		}
		goto finished;
	}
	r = detector_write(&c.det, "enable", "0");
	stopped_at = now_ns(CLOCK_MONOTONIC);
	progress_stop(&s->progress);
	if (r < 0) {
		log_error_errno(r, "cannot disable the detector");
		end = END_ERROR;
	} else if (end != END_EOF) {
		r = drain(s, lr, stream_fd,
			  stopped_at + c.state.window_us * NSEC_PER_USEC + DRAIN_GRACE_NS);
		if (r < 0 && end == END_COMPLETED)
			end = END_ERROR;
	}
finished:
	if (end == END_EOF)
		log_msg("the detector's stream ended before the scan did: was it disabled by someone else?");
	/* Every readable sample is journaled, but the maximum may be missing. */
	if (s->broken || s->skipped_lines)
		end = END_ERROR;

summary:
	/* The scan's settings, for the summary: undo() changes c.state. */
	used = c.state;
	summary_machine(o, &m, &sum);
	if (detector_read(&c.det, "clock", clock_name, sizeof(clock_name)) < 0)
		snprintf(clock_name, sizeof(clock_name), "unknown");
	strip(clock_name);
	sum.scan_id = s->scan_id;
	sum.threshold_ns = used.threshold_us * NSEC_PER_USEC;
	sum.width_ns = used.width_us * NSEC_PER_USEC;
	sum.window_ns = used.window_us * NSEC_PER_USEC;
	sum.hardlimit_ns = cfg->hardlimit_ns;
	sum.mode = used.has_mode ? used.mode : "unknown";
	sum.cpus = used.has_cpus ? used.cpus : "unknown";
	sum.cpus_excluded = read_cpus_excluded(&c.det, cfg, excluded, sizeof(excluded));
	sum.clock = clock_name;
	sum.duration_ns = stopped_at - enabled_at;
	sum.samples = s->samples;
	sum.max_ns = s->max_ns;
	/* Before enable=1 these files still describe an earlier run. */
	if (started && detector_read_u64(&c.det, "dropped", &v) >= 0)
		/* Under module parameters it counts since the load. */
		sum.dropped = !is_locked ? v : v >= dropped_at_start ? v - dropped_at_start : 0;
	else
		sum.dropped = s->seq_gaps;
	sum.settings_source = is_locked ? HWLAT_SETTINGS_SOURCE_PARAMETERS :
					  HWLAT_SETTINGS_SOURCE_DEBUGFS;
	sum.settings_not_applied = is_locked && locked.not_applied[0] ? locked.not_applied : NULL;
	smi_total_compute(&s->smi, &s->smi_src, sum.mode, &smi_total);
	sum.smi_total_known = smi_total.known;
	sum.smi_total = smi_total.total;
	sum.smi_method = smi_total.method;
	sum.smi_unavailable = smi_total.reason;
	sum.nmi_total = s->nmi_total;
	sum.floor_ns = started && detector_read_u64(&c.det, "floor", &v) >= 0 ? v : 0;
	sum.skipped_lines = s->skipped_lines;
	/* The detector is disabled (or, locked, no longer read): its sums are final. */
	sum.sampled = scan_sampled(s, &c.det, started, is_locked);
	/* A skipped line's number is a gap too, but no lost window. */
	unexplained = s->seq_gaps > s->skipped_lines ? s->seq_gaps - s->skipped_lines : 0;
	if (sum.dropped < unexplained)
		log_msg("the stream showed %llu lost windows but the detector counts %llu dropped",
			(unsigned long long)unexplained,
			(unsigned long long)sum.dropped);

	/* Restore first: nothing below may keep the detector running. */
	close(stream_fd);
	stream_fd = -1;
	r = undo(&c);
	if (r < 0) {
		log_msg("the detector's previous settings could not all be restored");
		end = END_ERROR;
	}

	return finish_scan(o, cfg, s, &sum, end, &smi_total, export);

out:
	if (stream_fd >= 0) {
		close(stream_fd);
		stream_fd = -1;
	}
	if (undo(&c) < 0 && ret == 0)
		ret = EXIT_FAILED;
	return ret;
}

/* Why the tracer counts no SMIs, in the summary. */
#define TRACER_SMI_REASON "the kernel's hwlat tracer does not count SMIs"

/*
 * The tracer's settings with the configured ones put in, checked against
 * the bounds. Returns 0 or an exit status (the reason logged).
 */
static int tracer_wanted(const scan_config *cfg, const tracer_state *cur, tracer_state *want)
{
	int r;

	r = config_check_bounds(cfg, cur->width_us * NSEC_PER_USEC,
				cur->window_us * NSEC_PER_USEC);
	if (r < 0)
		return EXIT_USAGE;
	*want = *cur;
	if (cfg->set[CONFIG_MODE]) {
		if (!cur->has_mode) {
			log_msg("invalid key 'mode': this kernel's hwlat tracer has no mode file "
				"(hwlat_detector/mode: Linux 5.14 and later)");
			return EXIT_USAGE;
		}
		if (strcmp(cfg->mode, HWLAT_MODE_STOP_MACHINE_NAME) == 0) {
			log_msg("invalid mode '%s' for backend tracer: the kernel's hwlat tracer has "
				"%s, %s and %s", cfg->mode, HWLAT_MODE_NONE_NAME,
				HWLAT_MODE_ROUND_ROBIN_NAME, HWLAT_MODE_PER_CPU_NAME);
			return EXIT_USAGE;
		}
		snprintf(want->mode, sizeof(want->mode), "%s", cfg->mode);
	}
	/* tracing_thresh 0 means the tracer's default; say which. */
	want->threshold_us = cfg->set[CONFIG_THRESHOLD] ? cfg->threshold_ns / NSEC_PER_USEC :
			     cur->threshold_us ? cur->threshold_us :
						 TRACER_DEFAULT_THRESHOLD_US;
	if (cfg->set[CONFIG_WIDTH])
		want->width_us = cfg->width_ns / NSEC_PER_USEC;
	if (cfg->set[CONFIG_WINDOW])
		want->window_us = cfg->window_ns / NSEC_PER_USEC;
	if (cfg->set[CONFIG_CPUS]) {
		r = cpumask_from_cpulist(cfg->cpus, want->cpumask, sizeof(want->cpumask));
		if (r < 0) {
			log_error_errno(r, "cannot turn cpus '%s' into a tracing_cpumask", cfg->cpus);
			return EXIT_USAGE;
		}
	}
	snprintf(want->current, sizeof(want->current), "%s", TRACER_NAME);
	want->tracing_on = true;
	return 0;
}

/*
 * Opens tracefs, checks that the hwlat tracer exists and is free, takes
 * the lock and reads the state to restore. Returns 0 or an exit status.
 */
static int open_tracer(const scan_options *o, tracer *t, tracer_state *saved)
{
	int r;

	if (tracer_open(t, o->tracefs_dir) < 0)
		return EXIT_NO_DETECTOR;
	r = tracer_available(t);
	if (r < 0)
		return EXIT_NO_DETECTOR;
	if (r == 0) {
		log_msg("the kernel has no hwlat tracer: %s/available_tracers does not list it "
			"(CONFIG_HWLAT_TRACER; on Debian only linux-image-rt-amd64 builds it in)",
			t->dir.path);
		return EXIT_NO_DETECTOR;
	}
	r = tracer_lock(t);
	if (r == -EWOULDBLOCK) {
		log_msg("another hwlat-scan is already using the kernel's tracer in %s; "
			"not starting a second scan", t->dir.path);
		return EXIT_BUSY;
	}
	if (r < 0) {
		log_error_errno(r, "cannot lock %s", t->dir.path);
		return EXIT_FAILED;
	}
	if (tracer_read_state(t, saved) < 0)
		return EXIT_NO_DETECTOR;
	if (strcmp(saved->current, TRACER_IDLE) != 0) {
		log_msg("the kernel's tracer is busy: %s/current_tracer is '%s', not '%s'; not "
			"starting (write %s to it once its user is done)",
			t->dir.path, saved->current, TRACER_IDLE, TRACER_IDLE);
		return EXIT_BUSY;
	}
	return 0;
}

/*
 * A scan with the kernel's hwlat tracer (tracer.c): its settings in
 * tracefs, the samples from trace_pipe, the same journal entries as the
 * module's with what the tracer cannot tell marked unavailable. The state
 * found is restored on every way out.
 */
static int run_tracer_scan(const scan_options *o, const scan_config *cfg, int sig_fd, scan *s,
			   line_reader *lr, FILE *export)
{
	_cleanup_close_ int pipe_fd = -1;
	tracer t = { .dir = { .dir_fd = -1 } };
	tracer_state saved, state, want, used;
	scan_summary sum = {};
	smi_total smi_total;
	machine_facts m;
	char cpus[4096];
	uint64_t enabled_at, stopped_at;
	sample_end end = END_ERROR;
	bool changed = false;
	int r, ret;

	s->tracer = true;
	s->seq_known = true; /* the tracer numbers from 1 when it starts */
	s->export = export;
	smi_source_parse(NULL, &s->smi_src);
	snprintf(s->smi_src.reason, sizeof(s->smi_src.reason), "%s", TRACER_SMI_REASON);

	ret = open_tracer(o, &t, &saved);
	if (ret != 0)
		goto out;
	ret = tracer_wanted(cfg, &saved, &want);
	if (ret != 0)
		goto out;
	if (check_journal(export) < 0) {
		ret = EXIT_FAILED;
		goto out;
	}
	log_msg("scanning with the kernel's hwlat tracer in %s", t.dir.path);

	/* From here on, the tracer is changed: restored below. */
	state = saved;
	changed = true;
	r = tracer_change(&t, &state, &want);
	if (r == -EBUSY && strcmp(state.current, TRACER_IDLE) == 0) {
		/* Nothing sampled yet: a refusal like a busy tracer, no summary. */
		log_msg("the kernel refuses to change %s/current_tracer while someone reads "
			"its trace_pipe; not starting", t.dir.path);
		ret = EXIT_BUSY;
		goto out;
	}
	/* trace_pipe only once hwlat is the tracer (and closed before it is not). */
	if (r >= 0) {
		pipe_fd = openat(t.dir.dir_fd, "trace_pipe", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (pipe_fd < 0)
			r = log_error_errno(-errno, "cannot open %s/trace_pipe", t.dir.path);
	}
	if (r >= 0)
		extend_start_timeout(o, cfg->duration_ns, state.window_us);
	enabled_at = now_ns(CLOCK_MONOTONIC);
	sum.start_ns = now_ns(CLOCK_REALTIME);
	/* The settings as the kernel holds them (tracing_thresh 0: its default). */
	if (r < 0 || tracer_read_state(&t, &used) < 0)
		used = state;
	s->threshold_ns = used.threshold_us * NSEC_PER_USEC;
	if (r < 0) {
		log_msg("the scan could not start; restoring the tracer as it was");
		stopped_at = enabled_at;
	} else {
		progress_start(&s->progress, progress_wanted(o->quiet, o->unit), enabled_at,
			       cfg->duration_ns);
		end = sample_loop(s, lr, pipe_fd, sig_fd, enabled_at + cfg->duration_ns);
		/* Stop recording, then take what the buffer holds. */
		r = tracer_set_on(&t, &state, false);
		stopped_at = now_ns(CLOCK_MONOTONIC);
		progress_stop(&s->progress);
		if (r < 0)
			end = END_ERROR;
		else if (end != END_EOF && read_buffered(s, lr, pipe_fd) < 0 &&
			 end == END_COMPLETED)
			end = END_ERROR;
		if (end == END_EOF)
			log_msg("trace_pipe ended before the scan did");
		if (s->broken || s->skipped_lines)
			end = END_ERROR;
	}

	/* Restore first: nothing below may keep the tracer running. */
	close(pipe_fd);
	pipe_fd = -1;
	changed = false;
	if (tracer_change(&t, &state, &saved) < 0) {
		log_msg("the tracer's previous state could not all be restored (%s)", t.dir.path);
		end = END_ERROR;
	}

	summary_machine(o, &m, &sum);
	sum.backend = HWLAT_BACKEND_TRACER;
	sum.scan_id = s->scan_id;
	sum.threshold_ns = used.threshold_us * NSEC_PER_USEC;
	sum.width_ns = used.width_us * NSEC_PER_USEC;
	sum.window_ns = used.window_us * NSEC_PER_USEC;
	sum.hardlimit_ns = cfg->hardlimit_ns;
	sum.mode = used.has_mode ? used.mode : "unknown";
	sum.cpus = cpulist_from_cpumask(used.cpumask, cpus, sizeof(cpus)) >= 0 ? cpus : "unknown";
	sum.clock = HWLAT_UNAVAILABLE;
	sum.duration_ns = stopped_at - enabled_at;
	sum.samples = s->samples;
	sum.max_ns = s->max_ns;
	/* Sequence numbers the pipe never showed; the buffer's own count if higher. */
	sum.dropped = s->lost_events > s->seq_gaps ? s->lost_events : s->seq_gaps;
	sum.settings_source = HWLAT_SETTINGS_SOURCE_TRACEFS;
	smi_total_compute(&s->smi, &s->smi_src, sum.mode, &smi_total);
	sum.smi_total_known = smi_total.known;
	sum.smi_total = smi_total.total;
	sum.smi_method = smi_total.method;
	sum.smi_unavailable = smi_total.reason;
	sum.nmi_total = s->nmi_total;
	sum.floor_unavailable = true;
	sum.skipped_lines = s->skipped_lines;
	ret = finish_scan(o, cfg, s, &sum, end, &smi_total, export);
	tracer_close(&t);
	return ret;

out:
	if (pipe_fd >= 0) {
		close(pipe_fd);
		pipe_fd = -1;
	}
	if (changed && tracer_change(&t, &state, &saved) < 0 && ret == 0)
		ret = EXIT_FAILED;
	tracer_close(&t);
	return ret;
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

static int run_scan(const scan_options *o, const scan_config *cfg, int sig_fd)
{
	_cleanup_fclose_ FILE *export = NULL;
	_cleanup_free_ scan *s = NULL;
	_cleanup_free_ line_reader *lr = NULL;
	cleanup c = { .det = { .dir_fd = -1 } };
	int ret;

	s = calloc(1, sizeof(*s));
	lr = calloc(1, sizeof(*lr));
	if (!s || !lr) {
		log_msg("out of memory");
		return EXIT_FAILED;
	}
	stats_init(&s->stats, 0, 0);
	s->per_cpu = cfg->openmetrics_file[0] != '\0';
	scan_id_init(o->unit, s->scan_id);
	lr->on_bad = on_bad_line;

	if (o->journal_export) {
		export = fopen(o->journal_export, "we");
		if (!export) {
			log_error_errno(-errno, "cannot create %s", o->journal_export);
			return EXIT_FAILED;
		}
	}

	if (cfg->backend == BACKEND_TRACER) {
		ret = run_tracer_scan(o, cfg, sig_fd, s, lr, export);
	} else {
		ret = open_detector(o, &c);
		if (ret == EXIT_NO_DETECTOR && cfg->backend == BACKEND_AUTO &&
		    tracer_fallback_allowed(o)) {
			/* Unmount what open_detector() mounted, unload what it loaded. */
			undo(&c);
			log_msg("backend auto: the hwlat_detector module cannot be used (said above); "
				"scanning with the kernel's hwlat tracer instead");
			ret = run_tracer_scan(o, cfg, sig_fd, s, lr, export);
		} else if (ret != 0) {
			if (undo(&c) < 0 && ret == 0)
				ret = EXIT_FAILED;
		} else {
			if (cfg->backend == BACKEND_AUTO)
				log_msg("backend auto: using the hwlat_detector module (%s)",
					c.det.path);
			ret = run_module_scan(o, cfg, sig_fd, s, lr, export, &c);
		}
	}
	scan_stats_done(s);
	return ret;
}

/* The backend of the configuration; module when it does not load (the scan says why). */
static scan_backend configured_backend(const scan_options *o)
{
	_cleanup_free_ scan_config *cfg = malloc(sizeof(*cfg));

	if (!cfg || load_config(o, cfg) < 0)
		return BACKEND_MODULE;
	return cfg->backend;
}

static int check_config(const scan_config *cfg)
{
	config_print(cfg, stdout);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		log_error_errno(-(errno ? errno : EIO), "cannot print the configuration");
		return EXIT_FAILED;
	}
	return 0;
}

/* debugfs files are root's (0600) and modules need root: say so first. */
static int need_root(void)
{
	if (geteuid() == 0)
		return 0;
	log_msg("must be run as root (the detector's debugfs files and the kernel module are root's)");
	return -EPERM;
}

int main(int argc, char *argv[])
{
	_cleanup_close_ int sig_fd = -1;
	_cleanup_free_ scan_config *cfg = NULL;
	scan_options o = {};

	log_set_program("hwlat-scan");
	/* A closed stdout or stderr is an EPIPE error, never a killed scan. */
	signal(SIGPIPE, SIG_IGN);

	if (parse_argv(argc, argv, &o) < 0)
		return EXIT_USAGE;

	switch (o.action) {
	case ACTION_HELP:
		help();
		return 0;
	case ACTION_VERSION:
		printf("hwlat-scan %s\n", PACKAGE_VERSION);
		return 0;
	case ACTION_LOAD_MODULE:
		if (need_root() < 0)
			return EXIT_NO_DETECTOR;
		return action_load_module(&o, configured_backend(&o));
	case ACTION_UNLOAD_MODULE:
		if (need_root() < 0)
			return EXIT_NO_DETECTOR;
		return action_unload_module();
	case ACTION_SCAN:
	case ACTION_CHECK_CONFIG:
		break;
	}

	cfg = malloc(sizeof(*cfg));
	if (!cfg) {
		log_msg("out of memory");
		return EXIT_FAILED;
	}
	if (load_config(&o, cfg) < 0)
		return EXIT_USAGE;
	if (o.action == ACTION_CHECK_CONFIG)
		return check_config(cfg);

	/* A fake detector (tests) is the caller's; the real one is root's. */
	if (!o.detector_dir && need_root() < 0)
		return EXIT_NO_DETECTOR;

	sig_fd = signalfd_setup(NULL);
	if (sig_fd < 0)
		return EXIT_FAILED;

	return run_scan(&o, cfg, sig_fd);
}
