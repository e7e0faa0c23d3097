/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The one-shot scan's lock beside the monitor; see scan-lock.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "module.h"
#include "scan-lock.h"

static void lock_path(char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", module_run_dir(), SCAN_LOCK_FILE);
}

int scan_lock_take(int *ret_fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	const char *dir = module_run_dir();
	char path[PATH_MAX];
	int fd;

	*ret_fd = -1;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return log_error_errno(-errno, "cannot create %s", dir);
	lock_path(path, sizeof(path));
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return log_error_errno(-errno, "cannot open %s", path);
	if (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
		int r = -errno;

		close(fd);
		if (r == -EAGAIN || r == -EACCES) {
			log_msg("another hwlat-scan is already running (it holds %s); not starting a "
				"second scan", path);
			return -EBUSY;
		}
		return log_error_errno(r, "cannot lock %s", path);
	}
	*ret_fd = fd;
	return 0;
}

int scan_lock_held(void)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char path[PATH_MAX];
	_cleanup_close_ int fd = -1;

	lock_path(path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	/* Asks whether a write lock could be taken; takes nothing. */
	if (fcntl(fd, F_OFD_GETLK, &fl) < 0)
		return -errno;
	return fl.l_type != F_UNLCK;
}
