/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Access to <debugfs>/hwlat_detector for hwlat-scan. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "detector.h"
#include "parse.h"
#include "log.h"
#include "macro.h"

#ifndef DEBUGFS_MAGIC
#define DEBUGFS_MAGIC 0x64626720
#endif
#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif

void unescape_mount_path(char *s)
{
	char *out = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
					(s[3] - '0'));
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	*out = '\0';
}

int debugfs_find(char *buf, size_t size)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;

	f = fopen("/proc/self/mounts", "re");
	if (!f)
		return log_error_errno(-errno, "cannot read /proc/self/mounts");

	while (getline(&line, &cap, f) >= 0) {
		char *dev, *where, *type, *save = NULL;

		dev = strtok_r(line, " ", &save);
		where = strtok_r(NULL, " ", &save);
		type = strtok_r(NULL, " ", &save);
		if (!dev || !where || !type || strcmp(type, "debugfs") != 0)
			continue;
		unescape_mount_path(where);
		if (strlen(where) >= size)
			continue;
		strcpy(buf, where);
		return 0;
	}
	return -ENOENT;
}

int debugfs_available(void)
{
	_cleanup_fclose_ FILE *f = NULL;
	char line[256];

	f = fopen("/proc/filesystems", "re");
	if (!f)
		return -errno;
	/* "nodev\tdebugfs": the name is the last field. */
	while (fgets(line, sizeof(line), f)) {
		const char *l = strip(line), *name = strrchr(l, '\t');

		if (strcmp(name ? name + 1 : l, "debugfs") == 0)
			return 1;
	}
	return 0;
}

void debugfs_log_unavailable(void)
{
	log_msg("debugfs is not available in this kernel (booted with debugfs=off or "
		"debugfs=no-mount, or built without CONFIG_DEBUG_FS), and the %s module gives its "
		"results only in debugfs: nothing can be scanned. Boot without debugfs=off "
		"(the kernel command line, e.g. GRUB_CMDLINE_LINUX in /etc/default/grub, then "
		"update-grub and reboot)", DETECTOR_DIR_NAME);
}

int debugfs_mount(void)
{
	if (mount("debugfs", DEBUGFS_DEFAULT_MOUNT, "debugfs", 0, NULL) < 0)
		return log_error_errno(-errno, "cannot mount debugfs on %s",
				 DEBUGFS_DEFAULT_MOUNT);
	return 0;
}

int debugfs_umount(void)
{
	if (umount(DEBUGFS_DEFAULT_MOUNT) < 0)
		return log_error_errno(-errno, "cannot unmount debugfs from %s",
				 DEBUGFS_DEFAULT_MOUNT);
	return 0;
}

int detector_open(detector *d, const char *path)
{
	struct statfs sfs;
	int fd;

	if (strlen(path) >= sizeof(d->path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstatfs(fd, &sfs) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	d->dir_fd = fd;
	/* tracefs (the kernel tracer's files, tracer.c) is written alike. */
	d->on_debugfs = sfs.f_type == DEBUGFS_MAGIC || sfs.f_type == TRACEFS_MAGIC;
	strcpy(d->path, path);
	return 0;
}

void detector_close(detector *d)
{
	if (d->dir_fd >= 0)
		close(d->dir_fd);
	d->dir_fd = -1;
}

int detector_lock(detector *d)
{
	if (flock(d->dir_fd, LOCK_EX | LOCK_NB) < 0)
		return -errno;
	return 0;
}

int detector_read(detector *d, const char *name, char *buf, size_t size)
{
	_cleanup_close_ int fd = -1;
	size_t len = 0;
	char *nl;

	fd = openat(d->dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	while (len + 1 < size) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	return 0;
}

int detector_read_u64(detector *d, const char *name, uint64_t *ret)
{
	char buf[64];
	int r;

	r = detector_read(d, name, buf, sizeof(buf));
	if (r < 0)
		return r;
	r = parse_u64(strip(buf), ret);
	if (r < 0) {
		log_msg("%s/%s: expected a number, read '%s'", d->path, name, buf);
		return -EBADMSG;
	}
	return 0;
}

int detector_write(detector *d, const char *name, const char *value)
{
	_cleanup_close_ int fd = -1;
	char buf[4200];
	int len;
	ssize_t n;

	len = snprintf(buf, sizeof(buf), "%s\n", value);
	if (len < 0 || (size_t)len >= sizeof(buf))
		return -E2BIG;
	/* A fake directory holds regular files: replace their content. */
	fd = openat(d->dir_fd, name,
		    O_WRONLY | O_CLOEXEC | O_NOCTTY | (d->on_debugfs ? 0 : O_TRUNC));
	if (fd < 0)
		return -errno;
	n = write(fd, buf, (size_t)len);
	if (n < 0)
		return -errno;
	if (n != len)
		return -EIO;
	return 0;
}

int detector_parse_mode(const char *s, char *buf, size_t size)
{
	const char *lb = strchr(s, '['), *rb;
	size_t len;

	if (lb) {
		rb = strchr(lb, ']');
		if (!rb)
			return -EBADMSG;
		s = lb + 1;
		len = (size_t)(rb - s);
	} else {
		len = strlen(s);
		if (strchr(s, ' '))
			return -EBADMSG;
	}
	if (len == 0 || len >= size)
		return -EBADMSG;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return 0;
}

int detector_read_settings(detector *d, detector_settings *ret)
{
	detector_settings s = {};
	static const char *const names[] = { "threshold", "width", "window" };
	uint64_t *vals[] = { &s.threshold_us, &s.width_us, &s.window_us };
	char buf[4096];
	size_t i;
	int r;

	for (i = 0; i < ELEMENTSOF(names); i++) {
		r = detector_read_u64(d, names[i], vals[i]);
		if (r == -EBADMSG)
			return r;
		if (r < 0)
			return log_error_errno(r, "cannot read %s/%s", d->path, names[i]);
	}

	r = detector_read(d, "mode", buf, sizeof(buf));
	if (r >= 0) {
		r = detector_parse_mode(strip(buf), s.mode, sizeof(s.mode));
		if (r < 0) {
			log_msg("%s/mode: cannot parse '%s'", d->path, buf);
			return r;
		}
		s.has_mode = true;
	} else if (r != -ENOENT) {
		return log_error_errno(r, "cannot read %s/mode", d->path);
	}

	r = detector_read(d, "cpus", s.cpus, sizeof(s.cpus));
	if (r >= 0) {
		strip(s.cpus);
		s.has_cpus = true;
	} else if (r != -ENOENT) {
		return log_error_errno(r, "cannot read %s/cpus", d->path);
	}

	*ret = s;
	return 0;
}

int detector_probe_write(detector *d, const char *name)
{
	int fd = openat(d->dir_fd, name, O_WRONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int write_us(detector *d, const char *name, uint64_t us, uint64_t *state)
{
	char buf[32];
	int r;

	if (*state == us)
		return 0;
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)us);
	r = detector_write(d, name, buf);
	if (r < 0)
		return log_error_errno(r, "cannot write %s to %s/%s", buf, d->path, name);
	*state = us;
	return 0;
}

static int write_str(detector *d, const char *name, const char *value,
		     char *state, size_t state_size)
{
	int r;

	if (strcmp(state, value) == 0)
		return 0;
	r = detector_write(d, name, value);
	if (r < 0)
		return log_error_errno(r, "cannot write '%s' to %s/%s", value, d->path, name);
	snprintf(state, state_size, "%s", value);
	return 0;
}

int detector_change(detector *d, detector_settings *state,
		    const detector_settings *to)
{
	int r;

	r = write_us(d, "threshold", to->threshold_us, &state->threshold_us);
	if (r < 0)
		return r;

	/*
	 * Shrinking the width first keeps (new width, old window) valid;
	 * growing it, the window goes first so that (old width, new window)
	 * is valid. Both hold for the module's 95% and 1 ms bounds too.
	 */
	if (to->width_us <= state->width_us) {
		r = write_us(d, "width", to->width_us, &state->width_us);
		if (r >= 0)
			r = write_us(d, "window", to->window_us, &state->window_us);
	} else {
		r = write_us(d, "window", to->window_us, &state->window_us);
		if (r >= 0)
			r = write_us(d, "width", to->width_us, &state->width_us);
	}
	if (r < 0)
		return r;

	if (to->has_mode && state->has_mode) {
		r = write_str(d, "mode", to->mode, state->mode, sizeof(state->mode));
		if (r < 0)
			return r;
	}
	if (to->has_cpus && state->has_cpus) {
		r = write_str(d, "cpus", to->cpus, state->cpus, sizeof(state->cpus));
		if (r < 0)
			return r;
	}
	return 0;
}
