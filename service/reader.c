/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading a backend's stream into the scan's tally; see reader.h. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "deadline.h"
#include "log.h"
#include "macro.h"
#include "reader.h"

static int on_line(const char *line, void *userdata)
{
	scan_reader *rd = userdata;

	return tally_line(rd->tally, line, rd->parse, rd->backend);
}

static void on_bad_line(line_problem why, const char *text, size_t len, void *userdata)
{
	scan_reader *rd = userdata;

	tally_bad_line(rd->tally, why, text, len);
}

void reader_init(scan_reader *rd, scan_tally *t, line_parser parse, void *backend)
{
	memset(rd, 0, sizeof(*rd));
	rd->lr.on_bad = on_bad_line;
	rd->tally = t;
	rd->parse = parse;
	rd->backend = backend;
}

/* A signal ends the scan: says which. */
static void say_signal(int sig_fd)
{
	struct signalfd_siginfo si;

	if (read(sig_fd, &si, sizeof(si)) == sizeof(si))
		log_msg("received %s, stopping the scan", strsignal((int)si.ssi_signo));
}

/*
 * What one read gave: lines to go on with, nothing for now, the end; the
 * last two are what reader_read_buffered() returns.
 */
enum { READ_MORE = 2, READ_WAIT = 0, READ_EOF = 1 };

/* One read into the tally: READ_*, or the negative errno of the read. */
static int read_step(scan_reader *rd, int fd)
{
	long r = line_reader_read(&rd->lr, fd, on_line, rd);

	if (r > 0 || r == -EINTR)
		return READ_MORE;
	if (r == -EAGAIN)
		return READ_WAIT;
	if (r == 0)
		return READ_EOF;
	return (int)r;
}

/* A read error, said unless the journal failed first (which was said). */
static int read_error(scan_reader *rd, int r)
{
	if (!rd->tally->broken)
		log_error_errno(r, "cannot read the detector's stream");
	return r;
}

sample_end reader_sample(scan_reader *rd, int fd, int sig_fd, uint64_t deadline)
{
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = sig_fd, .events = POLLIN },
		};
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		int wait_ms, r;

		if (now >= deadline)
			return END_COMPLETED;
		progress_update(&rd->progress, now, rd->tally->samples, rd->tally->max_ns);
		wait_ms = rd->progress.on ? PROGRESS_INTERVAL_MS : POLL_MAX_WAIT_MS;
		if (poll(p, 2, poll_timeout_ms(now, deadline, wait_ms)) < 0) {
			if (errno == EINTR)
				continue;
			log_error_errno(-errno, "poll failed");
			return END_ERROR;
		}
		if (p[1].revents) {
			say_signal(sig_fd);
			return END_SIGNAL;
		}
		if (!p[0].revents)
			continue;
		r = read_step(rd, fd);
		if (r == READ_EOF)
			return END_EOF;
		if (r < 0) {
			read_error(rd, r);
			return END_ERROR;
		}
	}
}

int reader_drain(scan_reader *rd, int fd, uint64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		int r;

		if (now >= deadline) {
			log_msg("the detector's stream did not end after enable=0");
			return -ETIMEDOUT;
		}
		if (poll(&p, 1, poll_timeout_ms(now, deadline, POLL_MAX_WAIT_MS)) < 0) {
			if (errno == EINTR)
				continue;
			return log_error_errno(-errno, "poll failed");
		}
		if (!p.revents)
			continue;
		r = read_step(rd, fd);
		if (r == READ_EOF)
			return 0;
		/* The journal failed: keep reading to EOF, journal nothing. */
		if (r < 0 && !rd->tally->broken)
			return read_error(rd, r);
	}
}

int reader_read_until(scan_reader *rd, int fd, uint64_t deadline)
{
	for (;;) {
		int r = read_step(rd, fd);

		if (r == READ_WAIT || r == READ_EOF)
			return r;
		if (r < 0 && !rd->tally->broken)
			return read_error(rd, r);
		if (now_ns(CLOCK_MONOTONIC) >= deadline)
			return READ_WAIT;
	}
}

int reader_read_buffered(scan_reader *rd, int fd)
{
	return reader_read_until(rd, fd, UINT64_MAX);
}

int reader_discard(scan_reader *rd, int fd)
{
	scan_tally *t = rd->tally;
	int r;

	t->discard = true;
	r = reader_read_buffered(rd, fd);
	t->discard = false;
	/* A partial line is from before the scan too. */
	rd->lr.len = 0;
	rd->lr.discarding = false;
	if (t->discarded)
		log_msg("discarded %llu stream lines the detector buffered before the scan started",
			(unsigned long long)t->discarded);
	return r;
}

/*
 * Every signal whose default action would end the scan, other than the ones
 * a fault raises, ends it like SIGTERM: SIGHUP (the terminal went away),
 * SIGINT, SIGQUIT, SIGUSR1/2, SIGALRM, real-time signals... so that the
 * detector is never left enabled. SIGPIPE is ignored instead (main()).
 */
int reader_signalfd(sigset_t *old)
{
	static const int keep[] = {
		SIGKILL, SIGSTOP, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS,
		SIGABRT, SIGCHLD, SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU, SIGWINCH,
		SIGURG, SIGPIPE,
	};
	sigset_t mask;
	size_t i;
	int fd;

	sigfillset(&mask);
	for (i = 0; i < ELEMENTSOF(keep); i++)
		sigdelset(&mask, keep[i]);
	if (sigprocmask(SIG_BLOCK, &mask, old) < 0)
		return log_error_errno(-errno, "cannot block signals");
	fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return log_error_errno(-errno, "cannot create a signalfd");
	return fd;
}
