// SPDX-License-Identifier: GPL-2.0
/*
 * trace-tools: proves that Debian's own bpftrace (attached to
 * tracepoint:hwlat_detector:sample) and perf (`perf record -e
 * hwlat_detector:sample -a`, read back by `perf script`) see exactly the
 * windows the module's `stream` reports in the same run: as many, and each
 * with the same seq, cpu, time, inner and outer gap, count, NMI and SMI
 * fields.
 *
 * The tools are the suite's packages unpacked under /tools (the archive of
 * tests/kernel/tracers, which tests/kernel/lab --initrd-extra appends to the
 * initramfs); they run chrooted there, with proc, sysfs, debugfs, tracefs,
 * devtmpfs and a tmpfs mounted inside.
 *
 * Both tools run at once. perf confirms it records through its control
 * pipe (an "enable" it acknowledges once its events are on); bpftrace
 * prints nothing that says its probe is attached in every version, so a
 * warm-up runs the detector until bpftrace has printed a window. Only then
 * does the measured run start: the windows compared are those of the
 * measured run's stream and the tools' windows dated at or after its start
 * (the warm-up's are older: the detector was off in between).
 *
 * Runs inside the QEMU guest only (tests/kernel/lab), module loaded.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/mount.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "trace-compare.h"

#define TOOLS "/tools"

/* Inside the chroot. */
#define BT_OUT "/tmp/bpftrace.out"
#define BT_ERR "/tmp/bpftrace.err"
#define PERF_DATA "/tmp/perf.data"
#define PERF_ERR "/tmp/perf-record.err"
#define SCRIPT_OUT "/tmp/perf-script.out"
#define SCRIPT_ERR "/tmp/perf-script.err"
#define VERSION_OUT "/tmp/version.out"

/*
 * Widths of 50 ms every 200 ms on each CPU at a threshold of 1 us: TCG's
 * noise exceeds 1 us in nearly every width, so nearly every window is
 * reported, about 10 a second with 2 CPUs, at a quarter of each CPU.
 */
#define THRESHOLD_US 1
#define WIDTH_US 50000
#define WINDOW_US 200000
#define MEASURED_MS 3000
#define MIN_WINDOWS 5

static char *const tool_env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/tmp", "LC_ALL=C",
				  NULL };

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool mount_one(const char *type, const char *where)
{
	char p[128];

	snprintf(p, sizeof(p), TOOLS "%s", where);
	mkdir(p, 0755);
	if (mount(type, p, type, 0, NULL) == 0)
		return true;
	diag("mount -t %s %s: %s", type, p, strerror(errno));
	return false;
}

/*
 * The file systems the tools read, mounted inside the chroot, and the links
 * of /dev that udev makes on a Debian system and devtmpfs does not: clang in
 * sid's bpftrace writes its object to /dev/fd/N.
 */
static bool mount_tools(void)
{
	static const char *const m[][2] = {
		{ "proc", "/proc" },	   { "sysfs", "/sys" },
		{ "debugfs", "/sys/kernel/debug" }, { "tracefs", "/sys/kernel/tracing" },
		{ "devtmpfs", "/dev" },	   { "tmpfs", "/tmp" },
	};
	static const char *const l[][2] = {
		{ "/proc/self/fd", "/dev/fd" },	    { "/proc/self/fd/0", "/dev/stdin" },
		{ "/proc/self/fd/1", "/dev/stdout" }, { "/proc/self/fd/2", "/dev/stderr" },
	};
	bool all = true;
	char p[128];

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		all &= mount_one(m[i][0], m[i][1]);
	for (size_t i = 0; i < sizeof(l) / sizeof(l[0]); i++) {
		snprintf(p, sizeof(p), TOOLS "%s", l[i][1]);
		if (symlink(l[i][0], p) < 0 && errno != EEXIST) {
			diag("ln -s %s %s: %s", l[i][0], p, strerror(errno));
			all = false;
		}
	}
	return all;
}

/*
 * Starts argv chrooted into TOOLS with stdout and stderr to the chroot's
 * files out and err; the descriptors keep1 and keep2 (or -1) stay open in
 * the tool. The pid, or -1.
 */
static pid_t spawn(char *const argv[], const char *out, const char *err, int keep1, int keep2)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	if (chroot(TOOLS) == 0 && chdir("/") == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (keep1 >= 0)
			fcntl(keep1, F_SETFD, 0);
		if (keep2 >= 0)
			fcntl(keep2, F_SETFD, 0);
		if (o >= 0 && e >= 0 && dup2(o, 1) >= 0 && dup2(e, 2) >= 0)
			execve(argv[0], argv, tool_env);
	}
	_exit(127);
}

/* Waits at most timeout_s for pid; its wait status, or -1 (then killed). */
static int wait_for(pid_t pid, unsigned int timeout_s)
{
	uint64_t end = now_ns() + timeout_s * 1000000000ull;
	int status;

	while (now_ns() < end) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0)
			return -1;
		sleep_ms(50);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

static const char *status_str(int status)
{
	static char b[64];

	if (status < 0)
		return "timed out, killed";
	if (WIFEXITED(status))
		snprintf(b, sizeof(b), "exit status %d", WEXITSTATUS(status));
	else
		snprintf(b, sizeof(b), "killed by signal %d", WTERMSIG(status));
	return b;
}

/* Runs argv in the chroot to its end (timeout_s at most): true on status 0. */
static bool run(char *const argv[], const char *out, const char *err, unsigned int timeout_s,
		int *status)
{
	pid_t pid = spawn(argv, out, err, -1, -1);

	*status = pid < 0 ? -1 : wait_for(pid, timeout_s);
	return *status == 0;
}

/* The last @n lines of the chroot's file @path as diagnostics. */
static void show_tail(const char *label, const char *path, unsigned int n)
{
	char p[128], line[512];
	unsigned int total = 0, k = 0;
	FILE *f;

	snprintf(p, sizeof(p), TOOLS "%s", path);
	f = fopen(p, "re");
	if (!f) {
		diag("%s: cannot read %s: %s", label, p, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f))
		total++;
	rewind(f);
	diag("%s (%s, %u lines%s):", label, path, total, total > n ? ", the last ones" : "");
	while (fgets(line, sizeof(line), f))
		if (k++ >= (total > n ? total - n : 0))
			diag("  %s", escs(line));
	fclose(f);
}

/* The first line of the chroot's file @path, without its newline. */
static const char *first_line(const char *path)
{
	static char line[256];
	char p[128];
	FILE *f;

	snprintf(p, sizeof(p), TOOLS "%s", path);
	line[0] = '\0';
	f = fopen(p, "re");
	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = '\0';
		fclose(f);
	}
	line[strcspn(line, "\n")] = '\0';
	return line;
}

/*
 * The suite's perf in the chroot: /usr/bin/perf, or, where the package
 * names it after its version (bullseye's perf_5.10), the one of the running
 * kernel's major.minor, as Debian's /usr/bin/perf wrapper picks it.
 */
static bool perf_path(char *buf, size_t len)
{
	struct utsname u;
	unsigned int major, minor;
	char p[128];

	snprintf(buf, len, "/usr/bin/perf");
	snprintf(p, sizeof(p), TOOLS "%s", buf);
	if (access(p, X_OK) == 0)
		return true;
	if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return false;
	snprintf(buf, len, "/usr/bin/perf_%u.%u", major, minor);
	snprintf(p, sizeof(p), TOOLS "%s", buf);
	return access(p, X_OK) == 0;
}

/* A tool's --version runs; its first line goes into ver. */
static bool tool_version(const char *name, const char *path, char *ver, size_t len)
{
	char *argv[] = { (char *)path, "--version", NULL };
	int status;
	bool ran = run(argv, VERSION_OUT, VERSION_OUT, 60, &status);

	snprintf(ver, len, "%s", first_line(VERSION_OUT));
	if (!ok(ran && ver[0], "%s --version runs in the guest: %s", name, ver))
		show_tail(name, VERSION_OUT, 10);
	return ran;
}

/*
 * perf's version is the running kernel's major.minor: the suite's
 * linux-perf belongs to its kernel.
 */
static void check_perf_matches(const char *ver)
{
	struct utsname u;
	unsigned int pmaj, pmin, kmaj, kmin;
	bool same;

	uname(&u);
	same = sscanf(ver, "perf version %u.%u", &pmaj, &pmin) == 2 &&
	       sscanf(u.release, "%u.%u", &kmaj, &kmin) == 2 && pmaj == kmaj && pmin == kmin;
	ok(same, "perf is the running kernel's version (\"%s\", kernel %s)", ver, u.release);
}

struct perf_run {
	pid_t pid;
	int ctl, ack; /* our ends of perf's control and acknowledgement pipes */
};

/*
 * Starts perf record system-wide on the event and waits until it
 * acknowledges an "enable" sent through --control: it does so from its
 * main loop, after its events are enabled.
 */
static bool perf_start(const char *perf, struct perf_run *pr)
{
	int ctl[2], ack[2];
	char control[64], reply[16] = "";
	char *argv[] = { (char *)perf, "record", "-e", "hwlat_detector:sample", "-a", "-N", "-B",
			 "-o", PERF_DATA, control, NULL };
	struct pollfd p;
	ssize_t n = -1;

	if (pipe2(ctl, O_CLOEXEC) < 0 || pipe2(ack, O_CLOEXEC) < 0)
		return ok(false, "pipes for perf's control: %s", strerror(errno));
	snprintf(control, sizeof(control), "--control=fd:%d,%d", ctl[0], ack[1]);
	pr->pid = spawn(argv, "/dev/null", PERF_ERR, ctl[0], ack[1]);
	close(ctl[0]);
	close(ack[1]);
	pr->ctl = ctl[1];
	pr->ack = ack[0];
	p = (struct pollfd){ .fd = pr->ack, .events = POLLIN };
	if (pr->pid > 0 && write(pr->ctl, "enable\n", 7) == 7 && poll(&p, 1, 180000) == 1)
		n = read(pr->ack, reply, sizeof(reply) - 1);
	if (n > 0)
		reply[n] = '\0';
	if (!ok(n > 0 && strncmp(reply, "ack", 3) == 0,
		"perf record -e hwlat_detector:sample -a records (it acknowledged \"enable\" on its control pipe)")) {
		diag("perf's reply: \"%s\"", escs(reply));
		show_tail("perf record", PERF_ERR, 20);
		return false;
	}
	return true;
}

/* A file of the chroot holds @needle. */
static bool file_has(const char *path, const char *needle)
{
	char p[128], line[512];
	bool found = false;
	FILE *f;

	snprintf(p, sizeof(p), TOOLS "%s", path);
	f = fopen(p, "re");
	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	if (f)
		fclose(f);
	return found;
}

/*
 * bpftrace says it attaches its probe: "Attaching 1 probe..." on stdout
 * before 0.24, "Attached 1 probe" on stderr since.
 */
static bool bpftrace_attaching(void)
{
	return file_has(BT_OUT, "Attaching 1 probe") || file_has(BT_ERR, "Attached 1 probe");
}

/* Starts bpftrace and waits until it says it attaches its probe. */
static pid_t bpftrace_start(void)
{
	char *argv[] = { "/usr/bin/bpftrace", "-B", "line", "-e", (char *)bt_prog, NULL };
	uint64_t end = now_ns() + 300000000000ull;
	pid_t pid = spawn(argv, BT_OUT, BT_ERR, -1, -1);
	bool attaching = false;

	while (pid > 0 && !attaching && now_ns() < end && waitpid(pid, NULL, WNOHANG) == 0) {
		sleep_ms(200);
		attaching = bpftrace_attaching();
	}
	if (!ok(attaching, "bpftrace compiles its program for tracepoint:hwlat_detector:sample and attaches it")) {
		show_tail("bpftrace stdout", BT_OUT, 10);
		show_tail("bpftrace stderr", BT_ERR, 20);
		return -1;
	}
	return pid;
}

/* Reads fd (stream, O_NONBLOCK) until it would block or ends; true at EOF. */
static bool stream_discard(int fd)
{
	char b[65536];
	ssize_t n;

	while ((n = read(fd, b, sizeof(b))) > 0)
		;
	return n == 0;
}

/*
 * Runs the detector until bpftrace prints a window (at most 120 s), so that
 * its probe is known to be attached, then disables it and drains the stream.
 */
static bool warm_up(void)
{
	_cleanup_close_ int fd = open_file("stream", O_RDONLY | O_NONBLOCK);
	uint64_t t0 = now_ns(), end = t0 + 120000000000ull;
	bool seen = false;

	if (fd < 0)
		return ok(false, "warm-up: open stream: %s", strerror(-fd));
	wr("enable", "1");
	while (!seen && now_ns() < end) {
		sleep_ms(200);
		stream_discard(fd);
		seen = file_has(BT_OUT, "hwlat-a ");
	}
	wr("enable", "0");
	for (end = now_ns() + 10000000000ull; !stream_discard(fd) && now_ns() < end;)
		sleep_ms(10);
	if (!ok(seen, "bpftrace's probe is attached: it printed a window of the warm-up (%.1f s)",
		(double)(now_ns() - t0) / 1e9)) {
		show_tail("bpftrace stdout", BT_OUT, 10);
		show_tail("bpftrace stderr", BT_ERR, 20);
	}
	return seen;
}

static void show_window(const char *who, const struct stream_line *w)
{
	diag("  %s: seq %" PRIu64 " cpu %" PRIu64 " %" PRIu64 ".%09" PRIu64 " inner %" PRIu64
	     " outer %" PRIu64 " count %" PRIu64 " nmi %" PRIu64 "/%" PRIu64 " smi %s%" PRIu64
	     "/%" PRIu64, who, w->seq, w->cpu, w->sec, w->nsec, w->inner_ns, w->outer_ns,
	     w->count, w->nmi_count, w->nmi_ns, w->smi_known ? "" : "(unknown) ", w->smi_count,
	     w->smi_ns);
}

/*
 * The tool's windows are the stream's, one for one; if not, the first
 * difference and the windows there.
 */
static bool compare(const char *tool, const struct stream_line *st, size_t ns,
		    struct stream_line *tw, size_t nt)
{
	char why[160];
	size_t agree = 0;

	qsort(tw, nt, sizeof(*tw), window_by_seq);
	if (windows_match(st, ns, tw, nt, why, sizeof(why), &agree))
		return true;
	diag("%s: %zu windows, the stream %zu; the first %zu agree; then %s", tool, nt, ns, agree,
	     why);
	for (size_t k = agree; k < agree + 3; k++) {
		if (k < ns)
			show_window("stream", &st[k]);
		if (k < nt)
			show_window(tool, &tw[k]);
	}
	return false;
}

/* A tool stopped by SIGINT ends by itself: exit status 0, or SIGINT raised again (perf). */
static bool stopped(const char *what, pid_t pid, unsigned int timeout_s)
{
	int status;

	kill(pid, SIGINT);
	status = wait_for(pid, timeout_s);
	return ok(status >= 0 && ((WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
				  (WIFSIGNALED(status) && WTERMSIG(status) == SIGINT)),
		  "%s ends on SIGINT (%s)", what, status_str(status));
}

/*
 * The measured run: the stream's windows of MEASURED_MS, drained to EOF,
 * in st (in seq order, as the stream gives them). Returns their number;
 * *t0 is CLOCK_REALTIME just before the enable.
 */
static size_t measure(struct stream_line *st, uint64_t *t0)
{
	_cleanup_close_ int fd = open_file("stream", O_RDONLY);
	size_t n = 0;
	uint64_t cpus = 0;

	*t0 = real_ns();
	wr("enable", "1");
	sleep_ms(MEASURED_MS);
	wr("enable", "0");
	if (fd >= 0)
		stream_windows(fd, st, TRACE_WMAX, &n);
	for (size_t i = 0; i < n; i++)
		cpus |= 1ull << (st[i].cpu & 63);
	ok(n >= MIN_WINDOWS && cpus == 3,
	   "the stream reported %zu windows in %u ms, from CPUs 0 and 1 (at least %d)", n,
	   MEASURED_MS, MIN_WINDOWS);
	return n;
}

static void check_bpftrace(const struct stream_line *st, size_t ns, uint64_t t0)
{
	static struct stream_line bw[TRACE_WMAX];
	FILE *f = fopen(TOOLS BT_OUT, "re");
	size_t odd, nb = bt_windows(f, t0, bw, &odd);

	if (f)
		fclose(f);
	if (!ok(compare("bpftrace", st, ns, bw, nb) && ns > 0 && odd == 0,
		"bpftrace saw exactly the stream's %zu windows: seq, cpu, time, gaps, count, NMI and SMI fields",
		ns)) {
		diag("bpftrace: %zu lines that are no window's or windows lacking a line", odd);
		show_tail("bpftrace stdout", BT_OUT, 12);
		show_tail("bpftrace stderr", BT_ERR, 12);
	} else if (first_line(BT_ERR)[0]) {
		/* Warnings of a passing run (a deprecation, say) are worth seeing. */
		show_tail("bpftrace stderr", BT_ERR, 6);
	}
}

static void check_perf(const char *perf, const struct stream_line *st, size_t ns, uint64_t t0)
{
	static struct stream_line pw[TRACE_WMAX];
	char *argv[] = { (char *)perf, "script", "-i", PERF_DATA, NULL };
	size_t lines = 0, np = 0;
	int status;
	bool ran = run(argv, SCRIPT_OUT, SCRIPT_ERR, 300, &status);

	if (ran) {
		FILE *f = fopen(TOOLS SCRIPT_OUT, "re");

		np = perf_windows(f, t0, pw, &lines);
		if (f)
			fclose(f);
	}
	if (!ok(ran && compare("perf", st, ns, pw, np) && ns > 0,
		"perf record + perf script saw exactly the stream's %zu windows: seq, cpu, time, gaps, count, NMI and SMI fields",
		ns)) {
		diag("perf script: %s, %zu lines", status_str(status), lines);
		show_tail("perf script stdout", SCRIPT_OUT, 12);
		show_tail("perf script stderr", SCRIPT_ERR, 12);
		show_tail("perf record stderr", PERF_ERR, 12);
	}
}

int main(void)
{
	static struct stream_line st[TRACE_WMAX];
	char perf[64], ver[256];
	struct perf_run pr = { -1, -1, -1 };
	pid_t bt = -1;
	uint64_t t0 = 0;
	size_t ns = 0;
	bool ready;

	ready = ok(mount_tools(), "proc, sysfs, debugfs, tracefs, devtmpfs and tmpfs mount in " TOOLS
		   ", /dev/fd links to /proc/self/fd");
	ready &= ok(perf_path(perf, sizeof(perf)), "the suite's perf is in " TOOLS " (%s)", perf);
	ready &= tool_version("bpftrace", "/usr/bin/bpftrace", ver, sizeof(ver));
	if (ready && tool_version("perf", perf, ver, sizeof(ver)))
		check_perf_matches(ver);
	ready = ready && configure("per-cpu", THRESHOLD_US, WIDTH_US, WINDOW_US) == 0;
	ready = ready && perf_start(perf, &pr);
	if (ready)
		bt = bpftrace_start();
	ready = ready && bt > 0 && warm_up();
	if (ready)
		ns = measure(st, &t0);
	sleep_ms(500);
	if (bt > 0)
		ready &= stopped("bpftrace", bt, 60);
	if (pr.pid > 0)
		ready &= stopped("perf record", pr.pid, 120);
	if (ready) {
		check_bpftrace(st, ns, t0);
		check_perf(perf, st, ns, t0);
	}
	return tap_done();
}
