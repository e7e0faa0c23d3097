/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The journal entries of hwlat-scan (service/journal-entry.c), TAP output.
 * Proves that a sample and a summary map to journal entries that carry
 * exactly the fields of docs/interfaces.md section 2; unavailable SMI
 * counts become the word "unavailable"; the summary of a scan whose max
 * equals the hard limit passes (PRIORITY 6, no "exceeds"), 1 ns above
 * fails (PRIORITY 4), a failed scan is PRIORITY 3 (err); the 65th field
 * and a field that does not fit with its NUL are refused; a value with a
 * newline is exported in the binary-safe form; an unreachable journal
 * reports socket()'s errno.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwlat-journal.h"
#include "journal-entry.h"
#include "stream.h"
#include "unit-test.h"

/* Returns the value of field name in e, or NULL. */
static void test_entries(void)
{
	static journal_entry e;
	static const char *const sample_fields[][2] = {
		{ "MESSAGE_ID", HWLAT_SAMPLE_MESSAGE_ID },
		{ "MESSAGE", "hardware latency 212.4 us on CPU 3 (SMI, NMI)" },
		{ "PRIORITY", "4" },
		{ HWLAT_F_SCAN_ID, "0123456789abcdef0123456789abcdef" },
		{ HWLAT_F_SEQ, "17" },
		{ HWLAT_F_CPU, "3" },
		{ HWLAT_F_INNER_NS, "1000" },
		{ HWLAT_F_OUTER_NS, "212400" },
		{ HWLAT_F_LATENCY_NS, "212400" },
		{ HWLAT_F_COUNT, "2" },
		{ HWLAT_F_NMI_COUNT, "1" },
		{ HWLAT_F_NMI_NS, "5000" },
		{ HWLAT_F_SMI_COUNT, "3" },
		{ HWLAT_F_TIMESTAMP_NS, "1700000000000000001" },
		{ HWLAT_F_THRESHOLD_NS, "10000" },
	};
	hwlat_sample s = {
		.seq = 17, .cpu = 3, .timestamp_ns = UINT64_C(1700000000000000001),
		.inner_ns = 1000, .outer_ns = 212400, .count = 2,
		.nmi_count = 1, .nmi_ns = 5000, .smi_count_known = true, .smi_count = 3,
	};
	scan_summary sum = {
		.scan_id = "0123456789abcdef0123456789abcdef",
		.status = HWLAT_STATUS_INTERRUPTED, .threshold_ns = 10000,
		.width_ns = 500000000, .window_ns = 1000000000, .hardlimit_ns = 0,
		.mode = "round-robin", .cpus = "0-1", .kernel = "6.1.0-test",
		.cpu_model = "Test CPU", .clock = "tsc", .start_ns = 5,
		.duration_ns = 1500000000, .samples = 2, .max_ns = 212400,
		.dropped = 1, .smi_total = 3, .nmi_total = 1, .floor_ns = 45,
	};
	static const char *const summary_fields[] = {
		HWLAT_F_SCAN_ID, HWLAT_F_STATUS, HWLAT_F_THRESHOLD_NS,
		HWLAT_F_WIDTH_NS, HWLAT_F_WINDOW_NS, HWLAT_F_HARDLIMIT_NS,
		HWLAT_F_MODE, HWLAT_F_CPUS, HWLAT_F_KERNEL, HWLAT_F_CPU_MODEL,
		HWLAT_F_CLOCK, HWLAT_F_START_NS, HWLAT_F_DURATION_NS,
		HWLAT_F_SAMPLES, HWLAT_F_MAX_NS, HWLAT_F_DROPPED,
		HWLAT_F_SMI_TOTAL, HWLAT_F_NMI_TOTAL, HWLAT_F_FLOOR_NS,
	};
	char buf[256];
	const char *v;
	size_t i;
	int r;

	r = journal_entry_sample(&e, "0123456789abcdef0123456789abcdef", 10000, &s);
	ok(r == 0, "sample entry builds (r=%d)", r);
	for (i = 0; i < sizeof(sample_fields) / sizeof(sample_fields[0]); i++) {
		v = entry_field(&e, sample_fields[i][0], buf, sizeof(buf));
		ok(v && strcmp(v, sample_fields[i][1]) == 0,
		   "sample %s=%s (want %s)", sample_fields[i][0], v ? v : "(missing)",
		   sample_fields[i][1]);
	}

	s.smi_count = 0;
	s.nmi_count = 0;
	s.outer_ns = 850;
	journal_entry_sample(&e, "0123456789abcdef0123456789abcdef", 10000, &s);
	v = entry_field(&e, "MESSAGE", buf, sizeof(buf));
	ok(v && strcmp(v, "hardware latency 1.0 us on CPU 3") == 0,
	   "sample without attribution: MESSAGE=%s", v ? v : "(missing)");
	v = entry_field(&e, "PRIORITY", buf, sizeof(buf));
	ok(v && strcmp(v, "5") == 0, "sample under threshold is a notice: PRIORITY=%s",
	   v ? v : "(missing)");

	r = journal_entry_summary(&e, &sum);
	ok(r == 0, "summary entry builds (r=%d)", r);
	v = entry_field(&e, "MESSAGE_ID", buf, sizeof(buf));
	ok(v && strcmp(v, HWLAT_SUMMARY_MESSAGE_ID) == 0, "summary MESSAGE_ID=%s",
	   v ? v : "(missing)");
	for (i = 0; i < sizeof(summary_fields) / sizeof(summary_fields[0]); i++)
		ok(entry_field(&e, summary_fields[i], buf, sizeof(buf)) != NULL,
		   "summary has %s", summary_fields[i]);
	v = entry_field(&e, HWLAT_F_STATUS, buf, sizeof(buf));
	ok(v && strcmp(v, "interrupted") == 0, "summary HWLAT_STATUS=%s", v ? v : "");
	v = entry_field(&e, HWLAT_F_CPU_MODEL, buf, sizeof(buf));
	ok(v && strcmp(v, "Test CPU") == 0, "summary HWLAT_CPU_MODEL=%s", v ? v : "");
}

static void test_sample_entry(void)
{
	static journal_entry e;
	hwlat_sample s = { .seq = 1, .cpu = 2, .inner_ns = 212400, .count = 1 };
	int r;

	r = journal_entry_sample(&e, "0123456789abcdef0123456789abcdef", 10000, &s);
	ok(r == 0 && field_is(&e, HWLAT_F_SMI_COUNT, "unavailable") &&
		   field_is(&e, HWLAT_F_SMI_NS, "unavailable"),
	   "unavailable SMI count and time are the word 'unavailable' in the journal");
	ok(field_is(&e, "MESSAGE", "hardware latency 212.4 us on CPU 2"),
	   "no '(SMI)' in MESSAGE when SMIs are unavailable");

	s.smi_count_known = s.smi_ns_known = true;
	s.smi_count = 2;
	s.smi_ns = 212400;
	journal_entry_sample(&e, "0123456789abcdef0123456789abcdef", 10000, &s);
	ok(field_is(&e, HWLAT_F_SMI_COUNT, "2") && field_is(&e, HWLAT_F_SMI_NS, "212400") &&
		   field_is(&e, "MESSAGE", "hardware latency 212.4 us on CPU 2 (SMI)"),
	   "known SMI count 2 and time 212400 ns, MESSAGE says (SMI)");

	s.smi_count = 0;
	s.smi_ns = 0;
	journal_entry_sample(&e, "0123456789abcdef0123456789abcdef", 10000, &s);
	ok(field_is(&e, HWLAT_F_SMI_COUNT, "0") && field_is(&e, HWLAT_F_SMI_NS, "0"),
	   "a known zero stays 0");
}

static void test_summary_entry(void)
{
	static journal_entry e;
	scan_summary sum = {
		.scan_id = "0123456789abcdef0123456789abcdef", .status = HWLAT_STATUS_COMPLETED,
		.mode = "per-cpu", .cpus = "0-1", .kernel = "k", .cpu_model = "m", .clock = "c",
		.smi_method = HWLAT_SMI_METHOD_MAX_PER_CPU,
		.smi_unavailable = "not an Intel CPU",
		.hypervisor = "kvm", .clocksource = "kvm-clock", .tsc_stable = "no",
	};
	int r;

	r = journal_entry_summary(&e, &sum);
	ok(r == 0 && field_is(&e, HWLAT_F_SMI_TOTAL, "unavailable") &&
		   field_is(&e, HWLAT_F_SMI_UNAVAILABLE, "not an Intel CPU") &&
		   field_is(&e, HWLAT_F_SMI_METHOD, "max-per-cpu"),
	   "summary: SMI total unavailable with its reason and method");
	ok(field_is(&e, HWLAT_F_HYPERVISOR, "kvm") &&
		   field_is(&e, HWLAT_F_CLOCKSOURCE, "kvm-clock") &&
		   field_is(&e, HWLAT_F_TSC_STABLE, "no"),
	   "summary: hypervisor, clocksource, TSC stability");
	ok(field_is(&e, HWLAT_F_CPUS_EXCLUDED, NULL), "no HWLAT_CPUS_EXCLUDED without the file");

	sum.smi_total_known = true;
	sum.smi_total = 5;
	sum.cpus_excluded = "";
	journal_entry_summary(&e, &sum);
	ok(field_is(&e, HWLAT_F_SMI_TOTAL, "5") && field_is(&e, HWLAT_F_SMI_UNAVAILABLE, NULL),
	   "summary: known total 5, no HWLAT_SMI_UNAVAILABLE");
	ok(field_is(&e, HWLAT_F_CPUS_EXCLUDED, ""), "HWLAT_CPUS_EXCLUDED empty when none left out");
	sum.cpus_excluded = "2-3";
	journal_entry_summary(&e, &sum);
	ok(field_is(&e, HWLAT_F_CPUS_EXCLUDED, "2-3"), "HWLAT_CPUS_EXCLUDED=2-3");
}

static const char *field_or_missing(const journal_entry *e, const char *name, char *buf,
				    size_t size)
{
	const char *v = entry_field(e, name, buf, size);

	return v ? v : "(missing)";
}

static void test_summary_verdict(void)
{
	static journal_entry e;
	static const struct {
		const char *status;
		uint64_t limit;
		const char *prio;
		bool over;
	} cases[] = {
		{ HWLAT_STATUS_COMPLETED, 212399, "4", true },   /* limit - 1 */
		{ HWLAT_STATUS_COMPLETED, 212400, "6", false },  /* limit == max passes */
		{ HWLAT_STATUS_COMPLETED, 212401, "6", false },  /* limit + 1 */
		{ HWLAT_STATUS_COMPLETED, 0, "6", false },       /* no limit */
		{ HWLAT_STATUS_INTERRUPTED, 212400, "5", false },
		{ HWLAT_STATUS_INTERRUPTED, 212399, "4", true },
		{ HWLAT_STATUS_FAILED, 212399, "3", true },      /* failed: err first */
		{ HWLAT_STATUS_FAILED, 0, "3", false },
	};
	scan_summary sum = {
		.scan_id = "0123456789abcdef0123456789abcdef", .threshold_ns = 10000,
		.width_ns = 500000000, .window_ns = 1000000000, .mode = "round-robin",
		.cpus = "0-1", .kernel = "6.1.0-test", .cpu_model = "Test CPU",
		.clock = "tsc", .duration_ns = 1500000000, .samples = 2, .max_ns = 212400,
		.skipped_lines = 0,
	};
	char buf[512], prio[16];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *msg;

		sum.status = cases[i].status;
		sum.hardlimit_ns = cases[i].limit;
		journal_entry_summary(&e, &sum);
		snprintf(prio, sizeof(prio), "%.15s", field_or_missing(&e, "PRIORITY", buf, sizeof(buf)));
		msg = field_or_missing(&e, "MESSAGE", buf, sizeof(buf));
		ok(strcmp(prio, cases[i].prio) == 0 &&
		   (strstr(msg, ", exceeds hard limit 212.4 us") != NULL) == cases[i].over,
		   "summary %s, max 212400 ns, hard limit %" PRIu64 " ns: PRIORITY=%s (want %s), '%s'",
		   cases[i].status, cases[i].limit, prio, cases[i].prio, msg);
	}
	sum.status = HWLAT_STATUS_FAILED;
	sum.hardlimit_ns = 0;
	sum.skipped_lines = 3;
	journal_entry_summary(&e, &sum);
	ok(strcmp(field_or_missing(&e, HWLAT_F_SKIPPED_LINES, buf, sizeof(buf)), "3") == 0 &&
	   strstr(field_or_missing(&e, "MESSAGE", buf, sizeof(buf)), ", 3 unreadable stream lines skipped"),
	   "summary: HWLAT_SKIPPED_LINES=3, said in MESSAGE");
}

static void test_entry_limits(void)
{
	static journal_entry e;
	static char big[ENTRY_POOL_SIZE];
	int r = 0;

	journal_entry_init(&e);
	for (int i = 0; i < ENTRY_MAX_FIELDS && r >= 0; i++)
		r = journal_entry_add(&e, "F%d=x", i);
	ok(r == 0 && e.n == ENTRY_MAX_FIELDS, "%d fields fit", ENTRY_MAX_FIELDS);
	r = journal_entry_add(&e, "ONE_MORE=x");
	ok(r == -E2BIG && e.n == ENTRY_MAX_FIELDS, "field %d is refused: r=%d (want %d)",
	   ENTRY_MAX_FIELDS + 1, r, -E2BIG);

	/* Each field takes its length and a NUL: after 16374 + 1 and 2 + 1
	 * bytes, 6 are left, enough for a 5-byte field, not a 6-byte one. */
	journal_entry_init(&e);
	memset(big, 'x', ENTRY_POOL_SIZE - 10);
	big[ENTRY_POOL_SIZE - 10] = '\0';
	r = journal_entry_add(&e, "%s", big);
	if (r >= 0)
		r = journal_entry_add(&e, "ab");
	ok(r == 0 && e.used == ENTRY_POOL_SIZE - 6, "two fields use %d bytes of the pool (used %zu)",
	   ENTRY_POOL_SIZE - 6, e.used);
	r = journal_entry_add(&e, "C=1234");
	ok(r == -E2BIG && e.n == 2, "a 6-byte field with its NUL does not fit in 6: r=%d", r);
	r = journal_entry_add(&e, "C=123");
	ok(r == 0 && e.n == 3 && e.used == ENTRY_POOL_SIZE,
	   "a 5-byte field fills the pool exactly: r=%d", r);
}

static void test_export_newline(void)
{
	static journal_entry e;
	static const char want[] = "MESSAGE\n\x09\0\0\0\0\0\0\0two\nlines\nX=1\n\n";
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	int r;

	if (!f)
		bail("open_memstream");
	journal_entry_init(&e);
	journal_entry_add(&e, "MESSAGE=two\nlines");
	journal_entry_add(&e, "X=1");
	r = journal_entry_send(&e, f);
	fclose(f);
	ok(r == 0 && size >= sizeof(want) - 1 &&
	   memcmp(text + size - (sizeof(want) - 1), want, sizeof(want) - 1) == 0,
	   "a value with a newline is exported as NAME, newline, 64-bit length, value, newline (r=%d)", r);
	free(text);
}

static void test_journal_socket_errno(void)
{
	struct rlimit old, low;
	int fd = dup(STDIN_FILENO), r;

	if (fd < 0 || getrlimit(RLIMIT_NOFILE, &old) < 0)
		bail("dup/getrlimit");
	close(fd);
	/* The lowest free descriptor is at the limit: socket() gets EMFILE. */
	low = old;
	low.rlim_cur = (rlim_t)fd;
	if (setrlimit(RLIMIT_NOFILE, &low) < 0)
		bail("setrlimit");
	r = journal_check_socket();
	setrlimit(RLIMIT_NOFILE, &old);
	ok(r == -EMFILE, "no descriptor left: journal_check_socket() = %d (want %d, socket()'s)",
	   r, -EMFILE);
}

int main(void)
{
	/* TAP lines and the code's stderr messages interleave readably. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	scratch_init();
	test_entries();
	test_sample_entry();
	test_summary_entry();
	test_summary_verdict();
	test_entry_limits();
	test_export_newline();
	test_journal_socket_errno();
	scratch_done();
	return tap_finish();
}
