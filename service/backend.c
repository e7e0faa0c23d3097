/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the backends share; see backend.h. */
#include <errno.h>
#include <stdlib.h>

#include "backend.h"
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

int backend_lock(detector *d, const char *held)
{
	int r = detector_lock(d);

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
