/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Scanning with the module's load-time settings where debugfs refuses writes. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "locked-settings.h"
#include "parse.h"
#include "log.h"
#include "macro.h"

#define LOCKDOWN_FILE "/sys/kernel/security/lockdown"

/* ", the kernel is locked down (integrity)" or "" when it is not (or unknown). */
static const char *lockdown_note(char *buf, size_t size)
{
	_cleanup_fclose_ FILE *f = fopen(LOCKDOWN_FILE, "re");
	char line[128], *lb, *rb;

	buf[0] = '\0';
	if (!f || !fgets(line, sizeof(line), f))
		return buf;
	lb = strchr(line, '[');
	rb = lb ? strchr(lb, ']') : NULL;
	if (!rb || strncmp(lb, "[none]", 6) == 0)
		return buf;
	*rb = '\0';
	snprintf(buf, size, ": the kernel is locked down (%s)", lb + 1);
	return buf;
}

int locked_settings_read(const detector *d, const char *refused, int err,
			 locked_settings *ret)
{
	const detector_settings *s = &ret->params.settings;
	char note[64];
	int r;

	memset(ret, 0, sizeof(*ret));
	snprintf(ret->refused, sizeof(ret->refused), "%s", refused);
	ret->refused_errno = -err;
	log_msg("cannot open %s/%s for writing (%s)%s; hwlat-scan cannot change the detector's settings",
		d->path, refused, strerror(-err), lockdown_note(note, sizeof(note)));
	r = module_read_params(&ret->params);
	if (r == -ENOENT) {
		log_msg("and the %s module shows no parameters in /sys/module/%s/parameters "
			"(built before its parameters were readable? rebuild it: dkms autoinstall)",
			MODULE_NAME, MODULE_NAME);
		return r;
	}
	if (r < 0)
		return r;
	log_msg("scanning with the settings the module was loaded with (/sys/module/%s/parameters): "
		"enabled %d, threshold %llu us, width %llu us, window %llu us, mode %s, CPUs %s",
		MODULE_NAME, ret->params.enabled, (unsigned long long)s->threshold_us,
		(unsigned long long)s->width_us, (unsigned long long)s->window_us, s->mode,
		s->cpus);
	return 0;
}

__attribute__((format(printf, 3, 4)))
static void append(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

static bool same_cpus(const char *a, const char *b)
{
	cpu_set_bits x, y;

	if (parse_cpulist(a, &x) < 0 || parse_cpulist(b, &y) < 0)
		return strcmp(a, b) == 0;
	return memcmp(&x, &y, sizeof(x)) == 0;
}

char *locked_modprobe_line(const scan_config *cfg, const detector_settings *want,
			   char *buf, size_t size)
{
	snprintf(buf, size, "options %s enabled=1", MODULE_NAME);
	if (cfg->set[CONFIG_THRESHOLD])
		append(buf, size, " threshold=%llu", (unsigned long long)want->threshold_us);
	/* Both, so that the pair passes the module's width < window checks. */
	if (cfg->set[CONFIG_WIDTH] || cfg->set[CONFIG_WINDOW])
		append(buf, size, " width=%llu window=%llu", (unsigned long long)want->width_us,
		       (unsigned long long)want->window_us);
	if (cfg->set[CONFIG_MODE])
		append(buf, size, " mode=%s", want->mode);
	if (cfg->set[CONFIG_CPUS])
		append(buf, size, " cpus=%s", want->cpus);
	return buf;
}

/* One "threshold 5 us requested (command line), 10 us in force" item. */
static void differs_us(locked_settings *l, const scan_config *cfg, config_key k,
		       uint64_t want, uint64_t have)
{
	if (!cfg->set[k] || want == have)
		return;
	append(l->not_applied, sizeof(l->not_applied), "%s%s %llu us requested (%s), %llu us in force",
	       l->not_applied[0] ? "; " : "", config_key_name(k), (unsigned long long)want,
	       cfg->origin[k], (unsigned long long)have);
}

static void differs_str(locked_settings *l, const scan_config *cfg, config_key k,
			const char *want, const char *have, bool same)
{
	if (!cfg->set[k] || same)
		return;
	append(l->not_applied, sizeof(l->not_applied), "%s%s %s requested (%s), %s in force",
	       l->not_applied[0] ? "; " : "", config_key_name(k), want, cfg->origin[k], have);
}

int locked_settings_compare(locked_settings *l, const scan_config *cfg,
			    const detector_settings *want)
{
	const detector_settings *have = &l->params.settings;
	char line[4400];

	l->not_applied[0] = '\0';
	differs_us(l, cfg, CONFIG_THRESHOLD, want->threshold_us, have->threshold_us);
	differs_us(l, cfg, CONFIG_WIDTH, want->width_us, have->width_us);
	differs_us(l, cfg, CONFIG_WINDOW, want->window_us, have->window_us);
	differs_str(l, cfg, CONFIG_MODE, want->mode, have->mode,
		    strcmp(want->mode, have->mode) == 0);
	differs_str(l, cfg, CONFIG_CPUS, want->cpus, have->cpus,
		    same_cpus(want->cpus, have->cpus));

	locked_modprobe_line(cfg, want, line, sizeof(line));
	if (!l->params.enabled) {
		log_msg("the module was loaded with enabled=0 and only a debugfs write could start it: "
			"nothing to scan. Put '%s' in %s, then reload the module "
			"(modprobe -r %s; modprobe %s)",
			line, LOCKED_MODPROBE_CONF, MODULE_NAME, MODULE_NAME);
		return -ENOTCONN;
	}
	if (l->not_applied[0])
		log_msg("requested settings not in force: %s. To scan with them, put '%s' in %s, "
			"then reload the module (modprobe -r %s; modprobe %s)",
			l->not_applied, line, LOCKED_MODPROBE_CONF, MODULE_NAME, MODULE_NAME);
	return 0;
}
