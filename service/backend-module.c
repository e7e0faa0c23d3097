/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hwlat_detector module as a scan's backend: its debugfs directory
 * (found, mounted and the module loaded when run by hand), its settings
 * saved, changed and restored, its `stream` read; or, where debugfs
 * refuses the setting files (kernel lockdown), the settings it was loaded
 * with (locked-settings.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "detector.h"
#include "hwlat-journal.h"
#include "locked-settings.h"
#include "log.h"
#include "macro.h"
#include "module.h"
#include "sampled.h"

typedef struct module_backend {
	scan_backend base;
	/* What restore undoes; each flag is cleared once that is undone. */
	bool mounted_debugfs;
	bool loaded_module;
	bool changed; /* settings or enable were written */
	detector det;
	detector_settings saved, state, want;
	bool saved_enabled;
	/* Settings from module parameters (debugfs refused writes). */
	bool is_locked;
	locked_settings locked;
	bool bounds_lifted; /* allow_high_duty, or a module without per-mode bounds */
	uint64_t dropped_at_start;
	/* The per-CPU totals files, at the start (under parameters) and the end. */
	cpu_values sampled, sampled_start;
	int sampled_start_r;
	cpu_values skipped, skipped_start;
	int skipped_start_r;
	/* What the summary points to. */
	detector_settings used;
	char clock[64], excluded[4096];
} module_backend;

#define MODULE_BACKEND(b) ((module_backend *)(b))

/* The debugfs directory of a scan run by hand: mounted and loaded if need be. */
static int find_debugfs_dir(module_backend *m, char *path, size_t size)
{
	bool interactive = !m->base.o->unit;
	char mnt[4096];
	int r;

	r = debugfs_find(mnt, sizeof(mnt));
	if (r == -ENOENT && debugfs_available() == 0) {
		debugfs_log_unavailable();
		return -ENODEV;
	}
	if (r == -ENOENT && interactive) {
		if (debugfs_mount() < 0)
			return -ENODEV;
		m->mounted_debugfs = true;
		snprintf(mnt, sizeof(mnt), "%s", DEBUGFS_DEFAULT_MOUNT);
	} else if (r == -ENOENT) {
		log_msg("debugfs is not mounted (mount it on %s)", DEBUGFS_DEFAULT_MOUNT);
		return -ENODEV;
	} else if (r < 0) {
		return -ENODEV;
	}
	snprintf(path, size, "%s/%s", mnt, DETECTOR_DIR_NAME);
	if (interactive && module_load(&m->loaded_module) < 0)
		return -ENODEV;
	return 0;
}

static int module_open(scan_backend *b)
{
	module_backend *m = MODULE_BACKEND(b);
	const scan_options *o = b->o;
	char path[4096 + 32];
	int r;

	if (o->detector_dir)
		snprintf(path, sizeof(path), "%s", o->detector_dir);
	else if (find_debugfs_dir(m, path, sizeof(path)) < 0)
		return -ENODEV;

	r = detector_open(&m->det, path);
	if (r == -ENOENT && !o->detector_dir && module_is_loaded()) {
		log_msg("%s does not exist although the %s module is loaded: it could not create "
			"its debugfs files (its load message in 'dmesg' says why)", path, MODULE_NAME);
		return -ENODEV;
	}
	if (r == -ENOENT && !o->detector_dir) {
		log_msg("%s does not exist: the %s module is not loaded%s", path, MODULE_NAME,
			o->unit ? " (the unit's ExecStartPre=+hwlat-scan --load-module loads it)" : "");
		return -ENODEV;
	}
	if (r < 0) {
		log_error_errno(r, "cannot open the detector directory %s", path);
		return -ENODEV;
	}
	b->path = m->det.path;
	return backend_lock(&m->det, "running on", b->lock_wait_ns);
}

/*
 * The detector's settings in force and whether it samples: from its
 * setting files, or, where debugfs refuses to open enable for writing
 * (kernel lockdown), from the module's parameters (m->is_locked). Also
 * whether the module's per-mode bounds are lifted or unknown (a module
 * without allow_high_duty has none).
 */
static int settings_in_force(module_backend *m)
{
	char buf[16];
	bool known;
	int r;

	/*
	 * Lockdown refuses every setting file; without enable nothing can be
	 * started or stopped. A refusal of another file alone is no lockdown:
	 * the write fails and says so.
	 */
	r = detector_probe_write(&m->det, "enable");
	if (r == -EPERM || r == -EACCES) {
		if (locked_settings_read(&m->det, "enable", r, &m->locked) < 0)
			return -ENODEV;
		m->is_locked = true;
		m->bounds_lifted = m->locked.params.allow_high_duty;
		m->saved = m->locked.params.settings;
		m->saved_enabled = m->locked.params.enabled;
		return 0;
	}
	if (detector_read_settings(&m->det, &m->saved) < 0)
		return -ENODEV;
	r = detector_read(&m->det, "enable", buf, sizeof(buf));
	if (r < 0) {
		log_error_errno(r, "cannot read %s/enable", m->det.path);
		return -ENODEV;
	}
	m->saved_enabled = strcmp(strip(buf), "1") == 0;
	m->bounds_lifted = module_allow_high_duty(&known) || !known;
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

static int module_prepare(scan_backend *b, scan_tally *t)
{
	module_backend *m = MODULE_BACKEND(b);
	const scan_config *cfg = b->cfg;
	uint64_t width_ns, window_ns;
	int r;

	r = settings_in_force(m);
	if (r < 0)
		return r;
	read_smi_source(&m->det, &t->smi_src);
	width_ns = m->saved.width_us * NSEC_PER_USEC;
	window_ns = m->saved.window_us * NSEC_PER_USEC;
	if (config_check_bounds(cfg, width_ns, window_ns) < 0 ||
	    config_check_mode_bounds(cfg, m->saved.has_mode ? m->saved.mode : NULL, width_ns,
				     window_ns, m->bounds_lifted) < 0 ||
	    wanted_settings(cfg, &m->saved, &m->want) < 0)
		return -EINVAL;
	if (m->is_locked && locked_settings_compare(&m->locked, cfg, &m->want) < 0)
		return -ENODEV;
	return 0;
}

/*
 * With the module's settings the detector samples since it was loaded: the
 * windows it buffered before now are no part of this scan, and its dropped
 * count and time sampled count since the load (the scan's part is what
 * they add). A stream that cannot be read to its present end, or has
 * ended, leaves no way to tell this scan's windows from earlier ones.
 */
static int start_locked(module_backend *m, scan_reader *rd)
{
	int r = reader_discard(rd, m->base.stream_fd);

	if (r > 0)
		log_msg("the detector's stream ended before the scan started: was it disabled by "
			"someone else?");
	if (r != 0) {
		log_msg("the scan could not start");
		return BACKEND_START_FAILED;
	}
	if (detector_read_u64(&m->det, "dropped", &m->dropped_at_start) < 0)
		m->dropped_at_start = 0;
	m->sampled_start_r = cpu_values_read(&m->det, &cpu_values_sampled, &m->sampled_start);
	m->skipped_start_r = cpu_values_read(&m->det, &cpu_values_skipped, &m->skipped_start);
	scan_extend_timeout(m->base.o, m->base.cfg->duration_ns, m->state.window_us);
	return 0;
}

/* Stops a detector found enabled, applies the settings, enables it. */
static int start_changed(module_backend *m)
{
	int r;

	/* From here on, the detector is changed: restore puts it back. */
	m->changed = true;
	if (m->saved_enabled) {
		r = detector_write(&m->det, "enable", "0");
		if (r < 0) {
			log_error_errno(r, "cannot stop the detector");
			return -EIO;
		}
	}
	r = detector_change(&m->det, &m->state, &m->want);
	if (r >= 0) {
		scan_extend_timeout(m->base.o, m->base.cfg->duration_ns, m->state.window_us);
		r = detector_write(&m->det, "enable", "1");
		if (r < 0)
			log_error_errno(r, "cannot enable the detector");
	}
	if (r < 0) {
		/* Nothing sampled: still one summary, "failed", then restore. */
		log_msg("the scan could not start; restoring the previous settings");
		return BACKEND_START_FAILED;
	}
	return 0;
}

static int module_start(scan_backend *b, scan_reader *rd)
{
	module_backend *m = MODULE_BACKEND(b);
	scan_tally *t = rd->tally;
	int r;

	b->stream_fd = openat(m->det.dir_fd, "stream", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (b->stream_fd < 0 && errno == EBUSY) {
		log_msg("%s/stream is open by another reader; not starting", m->det.path);
		return -EBUSY;
	}
	if (b->stream_fd < 0) {
		log_error_errno(-errno, "cannot open %s/stream", m->det.path);
		return -ENODEV;
	}
	/* Under module parameters the stream's numbers do not start at 1. */
	t->seq_known = !m->is_locked;
	m->state = m->saved;
	r = m->is_locked ? start_locked(m, rd) : start_changed(m);
	t->threshold_ns = m->state.threshold_us * NSEC_PER_USEC;
	return r;
}

static int module_parse_line(void *b, const char *line, hwlat_sample *ret)
{
	(void)b;
	return stream_parse_line(line, ret);
}

/* A locked detector keeps sampling: only the reading stops. */
static int module_stop(scan_backend *b)
{
	module_backend *m = MODULE_BACKEND(b);
	int r;

	if (m->is_locked)
		return 0;
	r = detector_write(&m->det, "enable", "0");
	if (r < 0)
		log_error_errno(r, "cannot disable the detector");
	return r;
}

/*
 * Disabled, the stream ends after its last window; locked, the scan takes
 * what it holds (its end then means someone else disabled it).
 */
static int module_drain(scan_backend *b, scan_reader *rd, uint64_t stopped_at)
{
	module_backend *m = MODULE_BACKEND(b);

	if (m->is_locked)
		return reader_read_buffered(rd, b->stream_fd);
	return reader_drain(rd, b->stream_fd,
			    stopped_at + m->state.window_us * NSEC_PER_USEC + DRAIN_GRACE_NS);
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
 * A per-CPU totals file (the time sampled, the windows skipped) for the
 * scan, read into *end once the module no longer samples (or, under module
 * parameters, its growth since *start): NULL, "unavailable", when it cannot
 * be known (the reason logged). A scan that never started has all 0.
 */
static const cpu_values *scan_cpu_values(module_backend *m, const cpu_values_file *f,
					 cpu_values *end, const cpu_values *start, int start_r,
					 bool started)
{
	char path[sizeof(m->det.path) + 16];
	int r;

	if (!started) {
		memset(end, 0, sizeof(*end));
		return end;
	}
	snprintf(path, sizeof(path), "%s/%s", m->det.path, f->name);
	r = cpu_values_read(&m->det, f, end);
	if (r == -ENOENT)
		log_msg("%s does not exist: the %s module is older than this hwlat-scan, %s is "
			"unavailable (rebuild the module: dkms autoinstall)",
			path, MODULE_NAME, f->what);
	if (r < 0)
		return NULL;
	if (m->is_locked && (start_r < 0 || cpu_values_since(f, end, start, path) < 0))
		return NULL;
	return end;
}

/* Windows lost: the detector's count (since the scan, under parameters). */
static uint64_t scan_dropped(module_backend *m, const scan_tally *t, bool started)
{
	uint64_t v;

	/* Before enable=1 the file still describes an earlier run. */
	if (!started || detector_read_u64(&m->det, "dropped", &v) < 0)
		return t->seq_gaps;
	if (!m->is_locked)
		return v;
	return v >= m->dropped_at_start ? v - m->dropped_at_start : 0;
}

/* Read before restore: the detector's files still describe this scan. */
static void module_summarize(scan_backend *b, const scan_tally *t, bool started,
			     scan_summary *sum)
{
	module_backend *m = MODULE_BACKEND(b);
	uint64_t unexplained, v;

	/* The scan's settings: restore changes m->state. */
	m->used = m->state;
	if (detector_read(&m->det, "clock", m->clock, sizeof(m->clock)) < 0)
		snprintf(m->clock, sizeof(m->clock), "unknown");
	strip(m->clock);
	backend_summary_settings(sum, m->used.threshold_us, m->used.width_us, m->used.window_us,
				 m->used.has_mode ? m->used.mode : NULL);
	sum->cpus = m->used.has_cpus ? m->used.cpus : "unknown";
	sum->cpus_excluded = read_cpus_excluded(&m->det, m->base.cfg, m->excluded, sizeof(m->excluded));
	sum->clock = m->clock;
	sum->dropped = scan_dropped(m, t, started);
	sum->settings_source = m->is_locked ? HWLAT_SETTINGS_SOURCE_PARAMETERS :
					      HWLAT_SETTINGS_SOURCE_DEBUGFS;
	sum->settings_not_applied =
		m->is_locked && m->locked.not_applied[0] ? m->locked.not_applied : NULL;
	sum->floor_ns = started && detector_read_u64(&m->det, "floor", &v) >= 0 ? v : 0;
	/* The detector is disabled (or, locked, no longer read): its sums are final. */
	sum->sampled = scan_cpu_values(m, &cpu_values_sampled, &m->sampled, &m->sampled_start,
				       m->sampled_start_r, started);
	sum->skipped = scan_cpu_values(m, &cpu_values_skipped, &m->skipped, &m->skipped_start,
				       m->skipped_start_r, started);
	/* A skipped line's number is a gap too, but no lost window. */
	unexplained = t->seq_gaps > t->skipped_lines ? t->seq_gaps - t->skipped_lines : 0;
	if (sum->dropped < unexplained)
		log_msg("the stream showed %llu lost windows but the detector counts %llu dropped",
			(unsigned long long)unexplained, (unsigned long long)sum->dropped);
}

static int module_restore(scan_backend *b, bool final)
{
	module_backend *m = MODULE_BACKEND(b);
	int r = 0;

	backend_close_stream(b);
	if (m->changed) {
		m->changed = false;
		if (detector_change(&m->det, &m->state, &m->saved) < 0)
			r = -EIO;
		if (m->saved_enabled && detector_write(&m->det, "enable", "1") < 0) {
			log_msg("cannot re-enable the detector as it was before the scan");
			r = -EIO;
		}
	}
	if (m->loaded_module) {
		m->loaded_module = false;
		if (module_unload() < 0)
			r = -EIO;
	}
	detector_close(&m->det);
	if (m->mounted_debugfs) {
		m->mounted_debugfs = false;
		if (debugfs_umount() < 0)
			r = -EIO;
	}
	if (r < 0 && final)
		log_msg("the detector's previous settings could not all be restored");
	return r;
}

void module_backend_forget(scan_backend *b)
{
	module_backend *m = MODULE_BACKEND(b);

	backend_close_stream(b);
	m->changed = false;
	m->loaded_module = false;
	m->mounted_debugfs = false;
}

static void module_free(scan_backend *b)
{
	detector_close(&MODULE_BACKEND(b)->det);
	free(b);
}

#define MODULE_EOF_MESSAGE \
	"the detector's stream ended before the scan did: was it disabled by someone else?"

static const backend_ops module_ops = {
	.name = HWLAT_BACKEND_MODULE, .eof_message = MODULE_EOF_MESSAGE,
	.open = module_open, .prepare = module_prepare, .start = module_start,
	.parse_line = module_parse_line, .stop = module_stop, .drain = module_drain,
	.summarize = module_summarize, .restore = module_restore, .free = module_free,
};

scan_backend *module_backend_new(void)
{
	module_backend *m = backend_new(sizeof(*m), &module_ops);

	if (m)
		m->det.dir_fd = -1;
	return m ? &m->base : NULL;
}
