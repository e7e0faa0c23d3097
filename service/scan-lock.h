/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How a one-shot scan and the monitor share the detector (docs/design.md,
 * "The monitor gives way to a scan"). The detector's own lock (an
 * exclusive flock() on its directory, detector_lock()) stays what keeps
 * two users apart. Beside it, a scan holds an open file description lock
 * (F_OFD_SETLK) on <run dir>/scan.lock for its whole run: a second scan is
 * refused on it at once, and the monitor, which only tests for it
 * (F_OFD_GETLK, taking nothing), sees that a scan wants the detector,
 * gives it up and takes it back once the lock is gone. Nobody ever blocks
 * on a lock, and the kernel drops both locks of a process that dies.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "parse.h"

#define SCAN_LOCK_FILE "scan.lock"

/*
 * A scan's lock, held until *ret_fd is closed (at exit). -EBUSY (logged)
 * while another scan holds it; another negative errno (logged) when it
 * cannot be taken at all.
 */
int scan_lock_take(int *ret_fd);

/* 1 while a scan holds the lock, 0 when none does, or a negative errno. */
int scan_lock_held(void);

/*
 * How long a scan waits for the monitor to give the detector up: the
 * monitor looks every 5 s (MONITOR_TICK_NS), then stops its width and
 * drains its stream (at most a window and DRAIN_GRACE_NS): 8 s with the
 * monitor's 1 s windows.
 */
#define SCAN_LOCK_WAIT_NS (15 * NSEC_PER_SEC)
