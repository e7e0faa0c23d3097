/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The detector's debugfs directory (docs/interfaces.md section 1): finding
 * debugfs, reading and writing the setting files, saving, applying and
 * restoring settings in an order that never violates width < window, and
 * the lock that keeps two scans apart.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define DETECTOR_DIR_NAME "hwlat_detector"
#define DEBUGFS_DEFAULT_MOUNT "/sys/kernel/debug"

typedef struct detector {
	int dir_fd;
	char path[4096];
	bool on_debugfs; /* false for a test's fake directory */
} detector;

typedef struct detector_settings {
	uint64_t threshold_us;
	uint64_t width_us;
	uint64_t window_us;
	bool has_mode;
	char mode[16];
	bool has_cpus;
	char cpus[4096];
} detector_settings;

/*
 * Finds where debugfs is mounted (from /proc/self/mounts). Returns 0,
 * or -ENOENT when it is not mounted.
 */
int debugfs_find(char *buf, size_t size);
/*
 * Whether the kernel offers debugfs at all (/proc/filesystems): not with
 * debugfs=off or debugfs=no-mount on its command line, nor without
 * CONFIG_DEBUG_FS. Returns 1, 0, or a negative errno when it cannot tell.
 */
int debugfs_available(void);
/*
 * Logs that debugfs is missing and what to do; the hwlat_detector module
 * gives its results only there.
 */
void debugfs_log_unavailable(void);
/*
 * Undoes the octal escapes of /proc/self/mounts ("\040" for a space) in
 * place: a backslash and three octal digits, the first 0-3; anything else
 * stays as it is. Used by debugfs_find(); its own unit test calls it.
 */
void unescape_mount_path(char *s);
/* Mounts debugfs on DEBUGFS_DEFAULT_MOUNT. */
int debugfs_mount(void);
int debugfs_umount(void);

/* Opens the directory; -ENOENT when it does not exist. */
int detector_open(detector *d, const char *path);
void detector_close(detector *d);

/*
 * Takes an exclusive, non-blocking flock() on the detector directory, held
 * until detector_close(). Returns -EWOULDBLOCK when another scan holds it.
 */
int detector_lock(detector *d);

/* Reads a file's first line without its newline; -ENOENT if absent. */
int detector_read(detector *d, const char *name, char *buf, size_t size);
int detector_read_u64(detector *d, const char *name, uint64_t *ret);
/* Writes value followed by a newline; returns the write's negative errno. */
int detector_write(detector *d, const char *name, const char *value);

int detector_read_settings(detector *d, detector_settings *ret);

/*
 * A mode file's content, "none [round-robin] per-cpu" (the module's and
 * the kernel tracer's alike): the bracketed name into buf; a bare name as
 * is. Returns 0 or -EBADMSG.
 */
int detector_parse_mode(const char *s, char *buf, size_t size);

/*
 * Opens the file for writing and closes it again, changing nothing.
 * Returns 0 or the open's negative errno: -EPERM for every debugfs file with
 * a write bit under kernel lockdown.
 */
int detector_probe_write(detector *d, const char *name);

/*
 * Writes every setting in which to differs from *state, updating *state
 * after each successful write, threshold first, then width and window in
 * the order that keeps every intermediate pair valid, then mode and cpus.
 * On error *state is what the detector now holds, and the error (naming the
 * file and value) has been logged.
 */
int detector_change(detector *d, detector_settings *state,
		    const detector_settings *to);
