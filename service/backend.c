/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the backends share; see backend.h. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "backend.h"
#include "deadline.h"
#include "log.h"
#include "macro.h"

void *backend_new(size_t size, const backend_ops *ops)
{
	scan_backend *b = calloc(1, size);

	if (!b) {
		log_msg("out of memory");
		return NULL;
	}
	b->ops = ops;
	b->stream_fd = -1;
	return b;
}

int backend_lock(detector *d, const char *held, uint64_t wait_ns)
{
	uint64_t deadline = now_ns(CLOCK_MONOTONIC) + wait_ns;
	int r = detector_lock(d);

	/* Only the monitor holds it beside our scan lock; it gives way. */
	if (r == -EWOULDBLOCK && wait_ns) {
		log_msg("%s is held by the monitor (hwlat-scan --monitor); waiting up to %llu s for "
			"it to pause", d->path, (unsigned long long)(wait_ns / NSEC_PER_SEC));
		while (r == -EWOULDBLOCK && now_ns(CLOCK_MONOTONIC) < deadline) {
			usleep(BACKEND_LOCK_RETRY_US);
			r = detector_lock(d);
		}
		if (r == 0)
			log_msg("the monitor paused; scanning");
	}
	if (r == -EWOULDBLOCK) {
		log_msg("another hwlat-scan is already %s %s; not starting a second scan", held,
			d->path);
		return -EBUSY;
	}
	if (r < 0) {
		log_error_errno(r, "cannot lock %s", d->path);
		return -EIO;
	}
	return 0;
}

void backend_close_stream(scan_backend *b)
{
	closep(&b->stream_fd);
	b->stream_fd = -1;
}

void backend_summary_settings(scan_summary *sum, uint64_t threshold_us, uint64_t width_us,
			      uint64_t window_us, const char *mode)
{
	sum->threshold_ns = threshold_us * NSEC_PER_USEC;
	sum->width_ns = width_us * NSEC_PER_USEC;
	sum->window_ns = window_us * NSEC_PER_USEC;
	sum->mode = mode ? mode : "unknown";
}
