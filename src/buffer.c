// SPDX-License-Identifier: GPL-2.0-only
/*
 * hwlat_detector: the two sample rings.
 *
 * Samplers push one sample per reported window, after the width ended and
 * interrupts are on again, never from the irq-off loop. The legacy "sample"
 * ring overwrites its oldest entry when full (the 2009 policy); the "stream"
 * ring keeps what it has and counts the loss in "dropped". Every reported
 * window takes a sequence number whether or not the stream could keep it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "hwlat.h"

/* Longest stream line: 11 numbers of at most 20 digits, separators, '\n'. */
#define HWLAT_LINE_MAX 256

struct hwlat_ring {
	struct hwlat_sample *slot;
	unsigned int head;	/* next slot to fill, counts up and wraps */
	unsigned int tail;	/* oldest slot, counts up and wraps */
};

static DEFINE_SPINLOCK(hwlat_ring_lock);
static struct hwlat_ring hwlat_sample_ring;
static struct hwlat_ring hwlat_stream_ring;
/* All below are protected by hwlat_ring_lock. */
static u64 hwlat_seq;
static u64 hwlat_count;
static u64 hwlat_max_us;
static u64 hwlat_dropped;
static u64 hwlat_generation;	/* bumped by every reset */
static bool hwlat_shutting_down;

static DECLARE_WAIT_QUEUE_HEAD(hwlat_sample_wq);
static DECLARE_WAIT_QUEUE_HEAD(hwlat_stream_wq);

static atomic_t hwlat_sample_busy = ATOMIC_INIT(0);
static atomic_t hwlat_stream_busy = ATOMIC_INIT(0);

/*
 * The rest of a stream line cut by a short read buffer. Only the single
 * stream reader (the file is exclusive) touches it, inside read().
 */
static char hwlat_stream_line[HWLAT_LINE_MAX];
static size_t hwlat_stream_line_len;
static size_t hwlat_stream_line_off;
static DEFINE_MUTEX(hwlat_stream_read_lock);

static unsigned int hwlat_ring_used(const struct hwlat_ring *r)
{
	return r->head - r->tail;
}

static struct hwlat_sample *hwlat_ring_slot(struct hwlat_ring *r,
					    unsigned int idx)
{
	return &r->slot[idx % HWLAT_RING_SIZE];
}

int hwlat_buffer_init(void)
{
	hwlat_sample_ring.slot = kvcalloc(HWLAT_RING_SIZE,
					  sizeof(struct hwlat_sample),
					  GFP_KERNEL);
	hwlat_stream_ring.slot = kvcalloc(HWLAT_RING_SIZE,
					  sizeof(struct hwlat_sample),
					  GFP_KERNEL);
	if (!hwlat_sample_ring.slot || !hwlat_stream_ring.slot) {
		hwlat_buffer_exit();
		return -ENOMEM;
	}
	return 0;
}

void hwlat_buffer_exit(void)
{
	kvfree(hwlat_sample_ring.slot);
	kvfree(hwlat_stream_ring.slot);
	hwlat_sample_ring.slot = NULL;
	hwlat_stream_ring.slot = NULL;
}

/* Empties both rings and zeroes count, max, dropped and the sequence. */
void hwlat_buffer_reset(void)
{
	spin_lock(&hwlat_ring_lock);
	hwlat_sample_ring.head = 0;
	hwlat_sample_ring.tail = 0;
	hwlat_stream_ring.head = 0;
	hwlat_stream_ring.tail = 0;
	hwlat_seq = 0;
	hwlat_count = 0;
	hwlat_max_us = 0;
	hwlat_dropped = 0;
	hwlat_generation++;
	spin_unlock(&hwlat_ring_lock);
}

/*
 * Stores one reported window: always in the stream (or counts it as
 * dropped), in the legacy ring and statistics only if @exceeded.
 */
void hwlat_buffer_push(struct hwlat_sample *s, bool exceeded)
{
	struct hwlat_ring *r;

	spin_lock(&hwlat_ring_lock);
	s->seq = ++hwlat_seq;
	r = &hwlat_stream_ring;
	if (hwlat_ring_used(r) < HWLAT_RING_SIZE)
		*hwlat_ring_slot(r, r->head++) = *s;
	else
		hwlat_dropped++;
	if (exceeded) {
		r = &hwlat_sample_ring;
		if (hwlat_ring_used(r) == HWLAT_RING_SIZE)
			r->tail++;
		*hwlat_ring_slot(r, r->head++) = *s;
		hwlat_count++;
		hwlat_max_us = max(hwlat_max_us,
				   div_u64(max(s->inner_ns, s->outer_ns),
					   NSEC_PER_USEC));
	}
	spin_unlock(&hwlat_ring_lock);

	wake_up_interruptible(&hwlat_stream_wq);
	if (exceeded)
		wake_up_interruptible(&hwlat_sample_wq);
}

/* Wakes every reader so that it re-checks data, enable and shutdown. */
void hwlat_buffer_wake(void)
{
	wake_up_interruptible_all(&hwlat_sample_wq);
	wake_up_interruptible_all(&hwlat_stream_wq);
}

/* Module exit: blocked readers return at once, new reads return EOF. */
void hwlat_buffer_shutdown(void)
{
	spin_lock(&hwlat_ring_lock);
	hwlat_shutting_down = true;
	spin_unlock(&hwlat_ring_lock);
	hwlat_buffer_wake();
}

void hwlat_buffer_stats(u64 *count, u64 *max_us, u64 *dropped)
{
	spin_lock(&hwlat_ring_lock);
	if (count)
		*count = hwlat_count;
	if (max_us)
		*max_us = hwlat_max_us;
	if (dropped)
		*dropped = hwlat_dropped;
	spin_unlock(&hwlat_ring_lock);
}

/*
 * Copies the oldest sample of @r without removing it. Returns false when
 * the ring is empty. *gen and *tail identify the copy for hwlat_ring_drop().
 */
static bool hwlat_ring_peek(struct hwlat_ring *r, struct hwlat_sample *s,
			    u64 *gen, unsigned int *tail)
{
	bool have;

	spin_lock(&hwlat_ring_lock);
	have = hwlat_ring_used(r) > 0;
	if (have) {
		*s = *hwlat_ring_slot(r, r->tail);
		*tail = r->tail;
		*gen = hwlat_generation;
	}
	spin_unlock(&hwlat_ring_lock);
	return have;
}

/*
 * Removes the sample that hwlat_ring_peek() returned, unless a reset or an
 * overwrite removed it meanwhile.
 */
static void hwlat_ring_drop(struct hwlat_ring *r, u64 gen, unsigned int tail)
{
	spin_lock(&hwlat_ring_lock);
	if (gen == hwlat_generation && r->tail == tail)
		r->tail++;
	spin_unlock(&hwlat_ring_lock);
}

/* Data to read, or a reason to stop waiting for it. */
static bool hwlat_ring_ready(struct hwlat_ring *r, bool eof_when_disabled)
{
	bool ready;

	spin_lock(&hwlat_ring_lock);
	ready = hwlat_ring_used(r) > 0 || hwlat_shutting_down;
	spin_unlock(&hwlat_ring_lock);
	return ready || (eof_when_disabled && !hwlat_is_enabled());
}

static bool hwlat_ring_empty(struct hwlat_ring *r)
{
	bool empty;

	spin_lock(&hwlat_ring_lock);
	empty = !hwlat_ring_used(r);
	spin_unlock(&hwlat_ring_lock);
	return empty;
}

static bool hwlat_is_shutting_down(void)
{
	bool down;

	spin_lock(&hwlat_ring_lock);
	down = hwlat_shutting_down;
	spin_unlock(&hwlat_ring_lock);
	return down;
}

int hwlat_buffer_sample_open(void)
{
	if (atomic_cmpxchg(&hwlat_sample_busy, 0, 1))
		return -EBUSY;
	return 0;
}

void hwlat_buffer_sample_release(void)
{
	atomic_set(&hwlat_sample_busy, 0);
}

/*
 * One legacy line per read(): "<sec>.<nsec>\t<inner us>\t<outer us>\n",
 * seconds and nanoseconds zero-padded to ten digits like the 2009 module.
 * Returns 0 while the detector is disabled. A buffer too small for the line
 * gets -EINVAL and the sample stays queued.
 */
ssize_t hwlat_buffer_sample_read(char __user *ubuf, size_t cnt, bool nonblock)
{
	struct hwlat_ring *r = &hwlat_sample_ring;
	struct hwlat_sample s;
	char line[96];
	unsigned int tail;
	u64 gen;
	int len;

	for (;;) {
		if (!hwlat_is_enabled() || hwlat_is_shutting_down())
			return 0;
		if (hwlat_ring_peek(r, &s, &gen, &tail))
			break;
		if (nonblock)
			return -EAGAIN;
		if (wait_event_interruptible(hwlat_sample_wq,
					     hwlat_ring_ready(r, true)))
			return -ERESTARTSYS;
	}

	len = scnprintf(line, sizeof(line), "%010lld.%010ld\t%llu\t%llu\n",
			(long long)s.ts.tv_sec, s.ts.tv_nsec,
			div_u64(s.inner_ns, NSEC_PER_USEC),
			div_u64(s.outer_ns, NSEC_PER_USEC));
	if (cnt < len)
		return -EINVAL;
	if (copy_to_user(ubuf, line, len))
		return -EFAULT;
	hwlat_ring_drop(r, gen, tail);
	return len;
}

__poll_t hwlat_buffer_sample_poll(struct file *file,
				  struct poll_table_struct *wait)
{
	poll_wait(file, &hwlat_sample_wq, wait);
	if (hwlat_ring_ready(&hwlat_sample_ring, true))
		return EPOLLIN | EPOLLRDNORM;
	return 0;
}

int hwlat_buffer_stream_open(void)
{
	if (atomic_cmpxchg(&hwlat_stream_busy, 0, 1))
		return -EBUSY;
	mutex_lock(&hwlat_stream_read_lock);
	hwlat_stream_line_len = 0;
	hwlat_stream_line_off = 0;
	mutex_unlock(&hwlat_stream_read_lock);
	return 0;
}

void hwlat_buffer_stream_release(void)
{
	atomic_set(&hwlat_stream_busy, 0);
}

/*
 * smi_count and smi_ns are "-" when the CPU could not count SMIs. A record
 * of skipped windows has a line of its own, "<seq> <cpu> <time> skipped
 * <windows>".
 */
static int hwlat_format_stream(const struct hwlat_sample *s, char *buf,
			       size_t size)
{
	int len;

	if (s->skipped)
		return scnprintf(buf, size, "%llu %u %lld.%09ld skipped %llu\n",
				 s->seq, s->cpu, (long long)s->ts.tv_sec,
				 s->ts.tv_nsec, s->skipped);
	len = scnprintf(buf, size, "%llu %u %lld.%09ld %llu %llu %llu %llu %llu",
			s->seq, s->cpu, (long long)s->ts.tv_sec,
			s->ts.tv_nsec, s->inner_ns, s->outer_ns, s->count,
			s->nmi_count, s->nmi_ns);
	if (s->smi_known)
		len += scnprintf(buf + len, size - len, " %llu %llu\n",
				 s->smi_count, s->smi_ns);
	else
		len += scnprintf(buf + len, size - len, " - -\n");
	return len;
}

static bool hwlat_stream_ready(void)
{
	return hwlat_ring_ready(&hwlat_stream_ring, true);
}

/*
 * Copies as many whole lines as fit into @ubuf. When not even the first line
 * fits, copies its beginning and keeps the rest for the next read().
 * Returns the bytes copied, or 0 at the end of the stream.
 */
static ssize_t hwlat_stream_copy(char __user *ubuf, size_t cnt)
{
	struct hwlat_ring *r = &hwlat_stream_ring;
	struct hwlat_sample s;
	char line[HWLAT_LINE_MAX];
	unsigned int tail;
	size_t done = 0;
	u64 gen;
	int len;

	if (hwlat_stream_line_off < hwlat_stream_line_len) {
		size_t n = min(cnt, hwlat_stream_line_len -
				    hwlat_stream_line_off);

		if (copy_to_user(ubuf, hwlat_stream_line +
				 hwlat_stream_line_off, n))
			return -EFAULT;
		hwlat_stream_line_off += n;
		done = n;
	}

	while (done < cnt && hwlat_ring_peek(r, &s, &gen, &tail)) {
		len = hwlat_format_stream(&s, line, sizeof(line));
		if (len > cnt - done) {
			if (done)
				break;
			/* Not even one line fits: cut it. */
			memcpy(hwlat_stream_line, line, len);
			hwlat_stream_line_len = len;
			hwlat_stream_line_off = cnt;
			if (copy_to_user(ubuf, line, cnt)) {
				hwlat_stream_line_len = 0;
				hwlat_stream_line_off = 0;
				return -EFAULT;
			}
			hwlat_ring_drop(r, gen, tail);
			return cnt;
		}
		if (copy_to_user(ubuf + done, line, len))
			return done ? done : -EFAULT;
		hwlat_ring_drop(r, gen, tail);
		done += len;
	}
	return done;
}

ssize_t hwlat_buffer_stream_read(char __user *ubuf, size_t cnt, bool nonblock)
{
	ssize_t ret;

	if (!cnt)
		return 0;
	for (;;) {
		if (mutex_lock_interruptible(&hwlat_stream_read_lock))
			return -ERESTARTSYS;
		ret = hwlat_stream_copy(ubuf, cnt);
		mutex_unlock(&hwlat_stream_read_lock);
		if (ret)
			return ret;
		/* Nothing copied: end of stream, or wait for more. */
		if (hwlat_is_shutting_down())
			return 0;
		if (!hwlat_is_enabled() && hwlat_ring_empty(&hwlat_stream_ring))
			return 0;
		if (nonblock)
			return -EAGAIN;
		if (wait_event_interruptible(hwlat_stream_wq,
					     hwlat_stream_ready()))
			return -ERESTARTSYS;
	}
}

__poll_t hwlat_buffer_stream_poll(struct file *file,
				  struct poll_table_struct *wait)
{
	bool cut;

	poll_wait(file, &hwlat_stream_wq, wait);
	/* The rest of a cut line: read() owns it under this mutex. */
	mutex_lock(&hwlat_stream_read_lock);
	cut = hwlat_stream_line_off < hwlat_stream_line_len;
	mutex_unlock(&hwlat_stream_read_lock);
	if (cut || hwlat_stream_ready())
		return EPOLLIN | EPOLLRDNORM;
	return 0;
}
