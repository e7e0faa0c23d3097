// SPDX-License-Identifier: GPL-2.0
/*
 * torture: proves that hwlat_detector survives hostile and concurrent use
 * without crashing, leaking a blocked reader or breaking its invariants:
 * random garbage written to every file, enable toggled thousands of times
 * under blocked readers, racing width/window writers (width < window must
 * hold at every consistent read), CPU hotplug during per-cpu and round-robin
 * sampling, an overflowing stream buffer (dropped == missing seq numbers),
 * and rmmod while readers are blocked. It prints the number of operations
 * survived; the lab checks the guest's dmesg afterwards.
 *
 *   torture [SCALE]   SCALE multiplies the iteration counts (default 1)
 *
 * Runs inside the QEMU guest only (tests/kernel/lab).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>

#include "lab.h"

static const char *const all_files[] = {
	"enable", "threshold", "width", "window", "count", "max", "sample",
	"mode", "cpus", "stream", "dropped", "floor", "clock", "sampled",
};
#define NFILES (sizeof(all_files) / sizeof(all_files[0]))

static int scale = 1;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Checks the settings are still self-consistent and the files readable. */
static bool invariants(char *why, size_t len)
{
	long long width = rdnum("width"), window = rdnum("window"), thr = rdnum("threshold");
	long long en = rdnum("enable");

	if (width <= 0 || window <= 0 || width >= window || thr <= 0 || (en != 0 && en != 1)) {
		snprintf(why, len, "width %lld window %lld threshold %lld enable %lld", width,
			 window, thr, en);
		return false;
	}
	return true;
}

static void torture_garbage(void)
{
	static const char *const nasty[] = {
		"", "\n", "-1", "-0", "1e9", "0x1", "18446744073709551615",
		"18446744073709551616", "999999999999999999999999999999999999", "1\n2",
		"\xff\xfe", "none\0x", "0-1,", ",", "0--1", "2147483648", "4294967296",
		"1.000000000000000000000000000000001", "   5", "5   ", "[none]",
	};
	unsigned long writes = 0, rejected = 0, accepted = 0;
	char buf[9000], why[200];
	bool held = true;

	wr("enable", "0");
	for (int it = 0; it < 3000 * scale; it++) {
		const char *f = all_files[rnd() % NFILES];
		size_t len;
		int r;

		switch (rnd() % 3) {
		case 0: {
			const char *s = nasty[rnd() % (sizeof(nasty) / sizeof(nasty[0]))];

			len = strlen(s) + (s[0] == 'n' && s[4] == '\0' ? 2 : 0);
			memcpy(buf, s, len + 1);
			break;
		}
		case 1:
			len = rnd() % 64;
			for (size_t i = 0; i < len; i++)
				buf[i] = (char)rnd();
			break;
		default:
			len = rnd() % sizeof(buf);
			for (size_t i = 0; i < len; i++)
				buf[i] = "0123456789.-\n x,"[rnd() % 16];
			break;
		}
		r = wrn(f, buf, len);
		writes++;
		if (r)
			rejected++;
		else
			accepted++;
		if (!invariants(why, sizeof(why))) {
			diag("after writing \"%s\" to %s: %s", esc(buf, len < 60 ? len : 60), f, why);
			held = false;
			break;
		}
	}
	wr("enable", "0");
	ok(held, "garbage: %lu random writes to all %zu files (%lu rejected, %lu accepted), settings stay consistent",
	   writes, NFILES, rejected, accepted);
}

struct reader {
	const char *file;
	atomic_int stop;
	atomic_ulong reads, eofs, bytes, errors, reopens;
	int last_err;
};

/* Reads file in a loop (blocking); on EOF reopens; until stop is set. */
static void *reader_main(void *arg)
{
	struct reader *r = arg;
	char b[4096];

	while (!atomic_load(&r->stop)) {
		int fd = open_file(r->file, O_RDONLY);

		if (fd < 0) {
			atomic_fetch_add(&r->errors, 1);
			r->last_err = -fd;
			sleep_ms(1);
			continue;
		}
		atomic_fetch_add(&r->reopens, 1);
		while (!atomic_load(&r->stop)) {
			ssize_t n = read(fd, b, sizeof(b));

			atomic_fetch_add(&r->reads, 1);
			if (n > 0) {
				atomic_fetch_add(&r->bytes, (unsigned long)n);
				continue;
			}
			if (n == 0)
				atomic_fetch_add(&r->eofs, 1);
			else if (errno != EINTR)
				atomic_fetch_add(&r->errors, 1), r->last_err = errno;
			break;
		}
		close(fd);
	}
	return NULL;
}

/* Waits up to ms for a thread flagged by done to finish. */
static bool join_within(pthread_t t, atomic_int *done, unsigned int ms)
{
	uint64_t deadline = now_ns() + (uint64_t)ms * 1000000ull;

	while (!atomic_load(done) && now_ns() < deadline)
		sleep_ms(5);
	if (!atomic_load(done))
		return false;
	pthread_join(t, NULL);
	return true;
}

struct joined {
	struct reader *r;
	atomic_int done;
};

static void *reader_wrap(void *arg)
{
	struct joined *j = arg;

	reader_main(j->r);
	atomic_store(&j->done, 1);
	return NULL;
}

static void torture_toggle(void)
{
	static struct reader rs = { .file = "sample" }, rt = { .file = "stream" };
	static struct joined js = { .r = &rs }, jt = { .r = &rt };
	pthread_t ts, tt;
	unsigned long toggles = 0, failed = 0;
	bool back;

	wr("enable", "0");
	wr("mode", "round-robin");
	if (wrnum("width", 1000) || wrnum("window", 3000))
		diag("could not set width 1000 / window 3000");
	wrnum("threshold", 1);
	pthread_create(&ts, NULL, reader_wrap, &js);
	pthread_create(&tt, NULL, reader_wrap, &jt);
	for (int i = 0; i < 2000 * scale; i++) {
		if (wr("enable", (i & 1) ? "0" : "1"))
			failed++;
		toggles++;
		if (i % 64 == 0)
			sleep_ms(1 + (unsigned int)(rnd() % 5));
	}
	wr("enable", "0");
	atomic_store(&rs.stop, 1);
	atomic_store(&rt.stop, 1);
	/* Readers blocked on a disabled detector must see EOF and notice stop. */
	back = join_within(ts, &js.done, 5000);
	back = join_within(tt, &jt.done, 5000) && back;
	ok(back && failed == 0,
	   "toggle: enable written %lu times under blocked readers (%lu failed); readers returned",
	   toggles, failed);
	diag("sample reader: %lu reads, %lu EOFs, %lu bytes, %lu reopens, %lu errors (last %s)",
	     atomic_load(&rs.reads), atomic_load(&rs.eofs), atomic_load(&rs.bytes),
	     atomic_load(&rs.reopens), atomic_load(&rs.errors), strerror(rs.last_err));
	diag("stream reader: %lu reads, %lu EOFs, %lu bytes, %lu reopens, %lu errors (last %s)",
	     atomic_load(&rt.reads), atomic_load(&rt.eofs), atomic_load(&rt.bytes),
	     atomic_load(&rt.reopens), atomic_load(&rt.errors), strerror(rt.last_err));
	wrnum("window", 1000000);
	wrnum("width", 500000);
}

/*
 * Writers race on width and window (holding the read side of a lock) while
 * a checker takes the write side, so that its two reads see one state of
 * the module: width < window must hold in every one of those states.
 */
static pthread_rwlock_t ww_lock;
static atomic_int ww_stop;
static atomic_ulong ww_writes, ww_ok;

static void *ww_writer(void *arg)
{
	const char *file = arg;
	uint64_t seed = (uintptr_t)arg;

	while (!atomic_load(&ww_stop)) {
		long long v;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		v = 2000 + (long long)((seed >> 33) % 400000);
		pthread_rwlock_rdlock(&ww_lock);
		if (wrnum(file, v) == 0)
			atomic_fetch_add(&ww_ok, 1);
		atomic_fetch_add(&ww_writes, 1);
		pthread_rwlock_unlock(&ww_lock);
	}
	return NULL;
}

static void torture_width_window(void)
{
	pthread_t w1, w2, w3;
	unsigned long checks = 0, broken = 0;
	long long bw = 0, bwin = 0;
	uint64_t deadline;

	pthread_rwlockattr_t attr;

	/* glibc's default rwlock prefers readers: the checker would starve. */
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&ww_lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	wr("enable", "0");
	wrnum("window", 500000);
	wrnum("width", 100000);
	wrnum("threshold", 5);
	wr("mode", "per-cpu");
	wr("enable", "1");
	atomic_store(&ww_stop, 0);
	pthread_create(&w1, NULL, ww_writer, (void *)"width");
	pthread_create(&w2, NULL, ww_writer, (void *)"window");
	pthread_create(&w3, NULL, ww_writer, (void *)"width");
	deadline = now_ns() + 8000000000ull * (uint64_t)scale;
	while (now_ns() < deadline) {
		long long w, v;

		pthread_rwlock_wrlock(&ww_lock);
		w = rdnum("width");
		v = rdnum("window");
		pthread_rwlock_unlock(&ww_lock);
		checks++;
		if (w <= 0 || v <= 0 || w >= v) {
			if (!broken++) {
				bw = w;
				bwin = v;
			}
		}
		sleep_ms(1);
	}
	atomic_store(&ww_stop, 1);
	pthread_join(w1, NULL);
	pthread_join(w2, NULL);
	pthread_join(w3, NULL);
	wr("enable", "0");
	if (!ok(broken == 0 && atomic_load(&ww_ok) > 0,
		"width/window: %lu racing writes (%lu accepted) while sampling per-cpu, width < window in all %lu checks",
		atomic_load(&ww_writes), atomic_load(&ww_ok), checks))
		diag("%lu broken states, first width %lld window %lld", broken, bw, bwin);
	wrnum("window", 1000000);
	wrnum("width", 500000);
}

static int cpu_online_set(int cpu, int on)
{
	char p[96];
	_cleanup_close_ int fd = -1;

	snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, on ? "1" : "0", 1) != 1)
		return -errno;
	return 0;
}

static void torture_hotplug(const char *mode)
{
	static struct reader r = { .file = "stream" };
	static struct joined j = { .r = &r };
	struct stream_acc a = { 0 };
	pthread_t t;
	unsigned long cycles = 0, errs = 0;
	int last_err = 0;
	bool back;

	if (access("/sys/devices/system/cpu/cpu1/online", W_OK) != 0) {
		ok(false, "hotplug %s: /sys/devices/system/cpu/cpu1/online is writable", mode);
		return;
	}
	wr("enable", "0");
	wrnum("window", 20000);
	wrnum("width", 5000);
	wrnum("threshold", 1);
	wr("mode", mode);
	wr("cpus", "");
	wr("enable", "1");
	atomic_store(&r.stop, 0);
	atomic_store(&r.reads, 0);
	atomic_store(&r.bytes, 0);
	atomic_store(&r.errors, 0);
	atomic_store(&j.done, 0);
	pthread_create(&t, NULL, reader_wrap, &j);
	for (int i = 0; i < 15 * scale; i++) {
		int e = cpu_online_set(1, 0);

		if (!e) {
			sleep_ms(20 + (unsigned int)(rnd() % 80));
			e = cpu_online_set(1, 1);
		}
		if (e) {
			errs++;
			last_err = -e;
		}
		cycles++;
		sleep_ms(20 + (unsigned int)(rnd() % 80));
	}
	cpu_online_set(1, 1);
	/* After the CPU is back, the samplers must use it again. */
	{
		_cleanup_close_ int fd = -1;
		char b[65536];
		uint64_t deadline;

		atomic_store(&r.stop, 1);
		wr("enable", "0");
		back = join_within(t, &j.done, 5000);
		wr("enable", "1");
		fd = open_file("stream", O_RDONLY | O_NONBLOCK);
		deadline = now_ns() + 5000000000ull;
		while (fd >= 0 && now_ns() < deadline && !(a.cpus_seen & 2)) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			ssize_t n;

			poll(&p, 1, 100);
			n = read(fd, b, sizeof(b));
			if (n > 0)
				acc_feed(&a, b, (size_t)n);
		}
		wr("enable", "0");
	}
	ok(back && errs == 0, "hotplug %s: cpu1 offline/online %lu times while sampling (%lu errors%s%s); reader returned",
	   mode, cycles, errs, errs ? ", last " : "", errs ? strerror(last_err) : "");
	diag("stream reader during hotplug: %lu reads, %lu bytes, %lu errors",
	     atomic_load(&r.reads), atomic_load(&r.bytes), atomic_load(&r.errors));
	if (!ok((a.cpus_seen & 2) != 0, "hotplug %s: cpu1 samples again after it is back online", mode))
		diag("%" PRIu64 " lines after re-enable, CPU mask 0x%" PRIx64, a.lines, a.cpus_seen);
	wrnum("window", 1000000);
	wrnum("width", 500000);
	wr("mode", "round-robin");
}

/* Overflow: nothing reads for a while; dropped must equal the seq gaps. */
static void torture_overflow(void)
{
	struct stream_acc a = { 0 };
	_cleanup_close_ int fd = -1;
	long long dropped = 0;
	uint64_t t0;
	ssize_t n;

	wr("enable", "0");
	wrnum("threshold", 1);
	wrnum("width", 1000);
	wrnum("window", 2100);
	wr("mode", "per-cpu");
	wr("enable", "1");
	/* The ring holds 4096 lines; on a loaded host the guest may take minutes. */
	t0 = now_ns();
	while (now_ns() - t0 < 240000000000ull && (dropped = rdnum("dropped")) < 100)
		sleep_ms(250);
	diag("overflow: dropped %lld after %.1f s without reading", dropped,
	     (double)(now_ns() - t0) / 1e9);
	fd = open_file("stream", O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		ok(false, "overflow: stream opens");
		wr("enable", "0");
		return;
	}
	n = stream_drain(fd, &a);
	dropped = rdnum("dropped");
	if (!ok(dropped > 0 && n == 0 && a.bad == 0 && a.out_of_order == 0 &&
		(long long)a.missing == dropped,
		"overflow: %" PRIu64 " lines read, dropped %lld == %" PRIu64 " missing seq numbers",
		a.lines, dropped, a.missing))
		diag("last seq %" PRIu64 ", bad %" PRIu64 " (\"%s\"), out of order %" PRIu64
		     ", final read %s",
		     a.last_seq, a.bad, a.first_bad, a.out_of_order, n ? strerror((int)-n) : "EOF");
	wrnum("window", 1000000);
	wrnum("width", 500000);
	wr("mode", "round-robin");
}

/*
 * rmmod while readers block on sample and stream. Either the open files pin
 * the module (rmmod fails with EBUSY/EAGAIN, the module keeps working, the
 * readers get EOF after enable=0 and rmmod then succeeds), or rmmod goes
 * through and must wake the readers. In both cases: no oops, the readers
 * return, the module is gone, and it loads again cleanly.
 */
static void torture_rmmod(void)
{
	static struct blocked_read bl[2] = { { .file = "sample" }, { .file = "stream" } };
	pthread_t t[2];
	bool started[2] = { false, false }, blocked = true, back = true;
	int r, rerr;

	wr("enable", "0");
	wrnum("threshold", 900000);
	wrnum("width", 100000);
	wrnum("window", 200000);
	wr("enable", "1");
	for (int i = 0; i < 2; i++) {
		bl[i].fd = open_file(bl[i].file, O_RDONLY);
		if (bl[i].fd < 0) {
			diag("rmmod: cannot open %s: %s", bl[i].file, strerror(-bl[i].fd));
			continue;
		}
		started[i] = pthread_create(&t[i], NULL, blocked_reader, &bl[i]) == 0;
	}
	sleep_ms(500);
	for (int i = 0; i < 2; i++)
		if (!started[i] || atomic_load(&bl[i].done))
			blocked = false;
	ok(blocked, "rmmod: readers of sample and stream are blocked before rmmod");
	r = delete_module("hwlat_detector", O_NONBLOCK);
	rerr = r ? errno : 0;
	if (r == 0) {
		diag("rmmod with blocked readers succeeded; the readers must be woken");
		for (int i = 0; i < 2; i++)
			if (started[i] && !join_within(t[i], &bl[i].done, 5000))
				back = false;
		ok(back, "rmmod: blocked readers return after the module is removed");
	} else {
		diag("rmmod with open files: %s (the files pin the module)", strerror(rerr));
		ok(rerr == EBUSY || rerr == EAGAIN, "rmmod: refused with EBUSY/EAGAIN while files are open (%s)",
		   strerror(rerr));
		ok(module_loaded() && rdnum("enable") == 1,
		   "rmmod: the refused module still works (enable reads 1)");
		wr("enable", "0");
		for (int i = 0; i < 2; i++)
			if (started[i] && !join_within(t[i], &bl[i].done, 5000))
				back = false;
		ok(back, "rmmod: blocked readers return 0 after enable=0");
	}
	for (int i = 0; i < 2; i++) {
		if (started[i] && atomic_load(&bl[i].done))
			diag("%s reader returned %zd (%s)", bl[i].file, bl[i].ret,
			     bl[i].ret < 0 ? strerror(bl[i].err) : "EOF");
		if (bl[i].fd >= 0 && (!started[i] || atomic_load(&bl[i].done)))
			close(bl[i].fd);
	}
	if (module_loaded()) {
		r = delete_module("hwlat_detector", O_NONBLOCK);
		if (!ok(r == 0 && !module_loaded(), "rmmod: succeeds once the files are closed"))
			diag("delete_module: %s", r ? strerror(errno) : "ok but still listed");
	}
	r = load_module("");
	if (!ok(r == 0 && rdnum("width") == 500000 && rdnum("enable") == 0,
		"rmmod: the module loads again with its defaults"))
		diag("load: %s, width %lld, enable %lld", r ? strerror(-r) : "ok", rdnum("width"),
		     rdnum("enable"));
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 || (argc == 2 && (atoi(argv[1]) < 1 || atoi(argv[1]) > 100))) {
		fprintf(stderr, "torture: usage: torture [SCALE 1..100]\n");
		return 2;
	}
	if (argc == 2)
		scale = atoi(argv[1]);
	rng ^= (uint64_t)now_ns();
	diag("torture on %d CPUs, scale %d", cpus_online(), scale);
	torture_garbage();
	torture_toggle();
	torture_width_window();
	torture_hotplug("per-cpu");
	torture_hotplug("round-robin");
	torture_overflow();
	torture_rmmod();
	return tap_done();
}
