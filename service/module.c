/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Module load/unload through modprobe for hwlat-scan. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "module.h"
#include "parse.h"
#include "log.h"
#include "macro.h"

extern char **environ;

static const char *env_or(const char *name, const char *fallback)
{
	const char *v = getenv(name);

	return v && *v ? v : fallback;
}

bool module_is_loaded(void)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s",
		 env_or("HWLAT_SYS_MODULE", "/sys/module"), MODULE_NAME);
	return access(path, F_OK) == 0;
}

const char *module_run_dir(void)
{
	return env_or("HWLAT_RUN_DIR", MODULE_RUN_DIR);
}

/*
 * Runs "modprobe [opt1] [opt2] <name>"; returns its exit status or a
 * negative errno.
 */
static int run_modprobe_of(const char *name, const char *opt1, const char *opt2)
{
	const char *prog = env_or("HWLAT_MODPROBE", "/sbin/modprobe");
	posix_spawnattr_t attr;
	sigset_t mask, dfl;
	char *argv[5];
	size_t n = 0;
	pid_t pid;
	int status, r;

	argv[n++] = (char *)prog;
	if (opt1)
		argv[n++] = (char *)opt1;
	if (opt2)
		argv[n++] = (char *)opt2;
	argv[n++] = (char *)name;
	argv[n] = NULL;

	/* Not the scan's blocked signals and ignored SIGPIPE: modprobe's own. */
	r = posix_spawnattr_init(&attr);
	if (r != 0)
		return log_error_errno(-r, "cannot run %s", prog);
	sigemptyset(&mask);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	r = posix_spawnattr_setsigmask(&attr, &mask);
	if (r == 0)
		r = posix_spawnattr_setsigdefault(&attr, &dfl);
	if (r == 0)
		r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (r == 0)
		r = posix_spawn(&pid, prog, NULL, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	if (r != 0)
		return log_error_errno(-r, "cannot run %s", prog);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return log_error_errno(-errno, "cannot wait for %s", prog);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	log_msg("%s killed by signal %d", prog, WTERMSIG(status));
	return -EIO;
}

/*
 * What Secure Boot needs depends on the DKMS that built the module: from
 * version 3 it signs with its own key, whose certificate the user must
 * enrol; older ones (Debian bullseye's 2.8) leave the module unsigned and
 * make no key, so pointing at an enrolment would send the user looking for
 * a file that does not exist.
 */
static const char *signing_hint(void)
{
	const char *mok = env_or("HWLAT_DKMS_MOK", "/var/lib/dkms/mok.pub");

	if (access(mok, F_OK) == 0)
		return "Secure Boot: the DKMS signing key must be enrolled with "
		       "mokutil --import /var/lib/dkms/mok.pub";
	return "Secure Boot: this DKMS does not sign modules (no /var/lib/dkms/mok.pub); "
	       "sign hwlat_detector.ko with a key enrolled with mokutil";
}

static int run_modprobe(const char *opt1, const char *opt2)
{
	return run_modprobe_of(MODULE_NAME, opt1, opt2);
}

int module_load_msr(void)
{
	int r = run_modprobe_of(MSR_MODULE_NAME, "--quiet", NULL);

	if (r > 0) {
		log_msg("modprobe %s failed (status %d): the monitor cannot count SMIs",
			MSR_MODULE_NAME, r);
		return -EIO;
	}
	return r;
}

int module_load(bool *ret_loaded)
{
	struct utsname u;
	int r;

	*ret_loaded = false;
	if (module_is_loaded())
		return 0;

	uname(&u);
	/* A dry run tells "not installed" apart from "failed to load". */
	r = run_modprobe("--dry-run", "--quiet");
	if (r < 0)
		return r;
	if (r != 0) {
		log_msg("the %s module is not installed for the running kernel %s. "
			"Install the packages hwlat-dkms and linux-headers-%s, "
			"then run 'dkms autoinstall' (as root) and try again.",
			MODULE_NAME, u.release, u.release);
		return -ENOENT;
	}
	r = run_modprobe("--quiet", NULL);
	if (r < 0)
		return r;
	if (r != 0) {
		log_msg("modprobe %s failed (status %d) on kernel %s; see 'dmesg' (%s)",
			MODULE_NAME, r, u.release, signing_hint());
		return -EIO;
	}
	*ret_loaded = true;
	return 0;
}

int module_unload(void)
{
	int r = run_modprobe("--remove", NULL);

	if (r < 0)
		return r;
	if (r != 0) {
		log_msg("modprobe --remove %s failed (status %d)", MODULE_NAME, r);
		return -EIO;
	}
	return 0;
}

static void marker_path(char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", module_run_dir(), MODULE_MARKER);
}

int module_marker_write(void)
{
	const char *dir = module_run_dir();
	char path[PATH_MAX];
	int fd;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return log_error_errno(-errno, "cannot create %s", dir);
	marker_path(path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return log_error_errno(-errno, "cannot create %s", path);
	close(fd);
	return 0;
}

int module_marker_take(void)
{
	char path[PATH_MAX];

	marker_path(path, sizeof(path));
	if (unlink(path) < 0) {
		if (errno == ENOENT)
			return 0;
		return log_error_errno(-errno, "cannot remove %s", path);
	}
	return 1;
}

static void param_path(const char *name, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s/parameters/%s",
		 env_or("HWLAT_SYS_MODULE", "/sys/module"), MODULE_NAME, name);
}

/* A parameter's first line without its newline. */
static int read_param(const char *name, char *buf, size_t size)
{
	_cleanup_fclose_ FILE *f = NULL;
	char path[PATH_MAX];

	param_path(name, path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)size, f))
		return ferror(f) ? -EIO : -EBADMSG;
	strip(buf);
	return 0;
}

static int param_error(const char *name, int r, const char *what, const char *text)
{
	char path[PATH_MAX];

	param_path(name, path, sizeof(path));
	if (what) {
		log_msg("%s: expected %s, read '%s'", path, what, text);
		return -EBADMSG;
	}
	return log_error_errno(r, "cannot read %s", path);
}

static int read_param_u64(const char *name, uint64_t *ret)
{
	char buf[64];
	int r = read_param(name, buf, sizeof(buf));

	if (r < 0)
		return param_error(name, r, NULL, NULL);
	if (parse_u64(buf, ret) < 0)
		return param_error(name, 0, "a number", buf);
	return 0;
}

int module_read_params(module_params *ret)
{
	static const char *const names[] = { "threshold", "width", "window" };
	module_params p = {};
	uint64_t *vals[] = { &p.settings.threshold_us, &p.settings.width_us,
			     &p.settings.window_us };
	uint64_t enabled;
	char buf[16];
	size_t i;
	int r;

	/* "enabled" first: its absence means no readable parameters at all. */
	r = read_param("enabled", buf, sizeof(buf));
	if (r == -ENOENT)
		return r;
	if (r < 0)
		return param_error("enabled", r, NULL, NULL);
	if (parse_u64(buf, &enabled) < 0 || enabled > 1)
		return param_error("enabled", 0, "0 or 1", buf);
	p.enabled = enabled == 1;
	for (i = 0; i < ELEMENTSOF(names); i++) {
		r = read_param_u64(names[i], vals[i]);
		if (r < 0)
			return r;
	}
	r = read_param("mode", p.settings.mode, sizeof(p.settings.mode));
	if (r < 0)
		return param_error("mode", r, NULL, NULL);
	p.settings.has_mode = true;
	r = read_param("cpus", p.settings.cpus, sizeof(p.settings.cpus));
	if (r < 0)
		return param_error("cpus", r, NULL, NULL);
	p.settings.has_cpus = true;
	p.allow_high_duty = module_allow_high_duty(&(bool){ false });
	*ret = p;
	return 0;
}

bool module_allow_high_duty(bool *ret_known)
{
	char buf[16];

	*ret_known = read_param("allow_high_duty", buf, sizeof(buf)) >= 0;
	return *ret_known && (strcmp(buf, "Y") == 0 || strcmp(buf, "1") == 0);
}
