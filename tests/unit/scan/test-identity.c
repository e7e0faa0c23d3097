/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The machine identity in the scan summary (service/identity.c), TAP
 * output. Proves that the DMI strings, the microcode revision and the
 * online CPU count are read below a root that tests can fake; a missing or
 * empty file says "unavailable", never "" or 0; CPUs that disagree on the
 * microcode give their distinct values; a microcode revision that fits
 * the buffer exactly is kept; a cpulist is counted exactly at its edges;
 * and the summary entry carries every field, "unavailable" without an
 * identity.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwlat-journal.h"
#include "identity.h"
#include "journal-entry.h"
#include "unit-test.h"

static void test_cpulist_count(void)
{
	static const struct {
		const char *list;
		int r;
		uint64_t n;
	} cases[] = {
		{ "0", 0, 1 },
		{ "0-0", 0, 1 },
		{ "0-1", 0, 2 },
		{ "0-3,6", 0, 5 },
		{ "0-3,6,8-9", 0, 7 },
		{ "1023", 0, 1 },
		/* no upper bound: machines with more than 1024 CPUs */
		{ "0-4095", 0, 4096 },
		{ "", -EINVAL, 0 },
		{ "unavailable", -EINVAL, 0 },
		{ "3-1", -EINVAL, 0 },
		{ "0-", -EINVAL, 0 },
		{ "0,", -EINVAL, 0 },
		{ ",0", -EINVAL, 0 },
		{ "0-3x", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t n = 12345;
		int r = cpulist_count(cases[i].list, &n);

		ok(r == cases[i].r && (r < 0 ? n == 12345 : n == cases[i].n),
		   "cpulist_count('%s') = %d, %llu (want %d, %llu)", cases[i].list, r,
		   (unsigned long long)n, cases[i].r, (unsigned long long)cases[i].n);
	}
}

static void test_microcode(void)
{
	static const struct {
		const char *cpuinfo, *want;
	} cases[] = {
		{ "processor\t: 0\nmicrocode\t: 0xf0\n\nprocessor\t: 1\nmicrocode\t: 0xf0\n", "0xf0" },
		{ "microcode\t: 0xf0\nmicrocode\t: 0xf4\nmicrocode\t: 0xf0\n", "0xf0,0xf4" },
		/* an item is whole: 0xf is not 0xf0 */
		{ "microcode\t: 0xf0\nmicrocode\t: 0xf\n", "0xf0,0xf" },
		{ "microcode : 0x1  \n", "0x1" },
		{ "processor\t: 0\nflags\t\t: fpu\n", HWLAT_UNAVAILABLE },
		{ "microcode\t: \n", HWLAT_UNAVAILABLE },
		/* another key that starts with the word */
		{ "microcode_extra\t: 0x5\n", HWLAT_UNAVAILABLE },
		{ "microcode\t: 0x2c", "0x2c" },
		{ "", HWLAT_UNAVAILABLE },
		{ NULL, HWLAT_UNAVAILABLE },
	};
	char buf[IDENTITY_STR_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cpuinfo_microcode(cases[i].cpuinfo, buf, sizeof(buf));
		ok(strcmp(buf, cases[i].want) == 0, "microcode of case %zu: '%s' (want '%s')", i,
		   buf, cases[i].want);
	}
}

static void test_identity_read(void)
{
	char root[] = "/tmp/hwlat-test-identity-XXXXXX";
	char cmd[600];
	machine_identity id;

	if (!mkdtemp(root)) {
		ok(false, "mkdtemp");
		return;
	}
	put_below(root, "sys/class/dmi/id/sys_vendor", "Fake Vendor Inc.\n");
	put_below(root, "sys/class/dmi/id/product_name", "  Rack 9000  \n");
	put_below(root, "sys/class/dmi/id/board_vendor", "\n");
	put_below(root, "sys/class/dmi/id/bios_vendor", "Fake BIOS Co\n");
	put_below(root, "sys/class/dmi/id/bios_version", "2.17.1\nsecond line\n");
	put_below(root, "sys/class/dmi/id/bios_date", "03/14/2025\n");
	put_below(root, "proc/cpuinfo", "processor\t: 0\nmicrocode\t: 0x2b000603\n\n"
				  "processor\t: 1\nmicrocode\t: 0x2b000603\n");
	put_below(root, "sys/devices/system/cpu/online", "0-3,6\n");
	identity_read(root, &id);
	ok(strcmp(id.sys_vendor, "Fake Vendor Inc.") == 0 &&
		   strcmp(id.product_name, "Rack 9000") == 0,
	   "system: '%s' '%s'", id.sys_vendor, id.product_name);
	ok(strcmp(id.board_vendor, HWLAT_UNAVAILABLE) == 0 &&
		   strcmp(id.board_name, HWLAT_UNAVAILABLE) == 0,
	   "empty board_vendor and missing board_name: '%s' '%s'", id.board_vendor,
	   id.board_name);
	ok(strcmp(id.bios_vendor, "Fake BIOS Co") == 0 && strcmp(id.bios_version, "2.17.1") == 0 &&
		   strcmp(id.bios_date, "03/14/2025") == 0,
	   "BIOS: '%s' '%s' '%s' (first line only)", id.bios_vendor, id.bios_version,
	   id.bios_date);
	ok(strcmp(id.microcode, "0x2b000603") == 0, "microcode '%s'", id.microcode);
	ok(id.cpu_count_known && id.cpu_count == 5, "CPU count %llu of 0-3,6",
	   (unsigned long long)id.cpu_count);

	put_below(root, "sys/devices/system/cpu/online", "garbage\n");
	identity_read(root, &id);
	ok(!id.cpu_count_known, "unreadable cpulist: CPU count unavailable");

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		ok(false, "cleanup of %s", root);
	identity_read(root, &id);
	ok(strcmp(id.sys_vendor, HWLAT_UNAVAILABLE) == 0 &&
		   strcmp(id.bios_date, HWLAT_UNAVAILABLE) == 0 &&
		   strcmp(id.microcode, HWLAT_UNAVAILABLE) == 0 && !id.cpu_count_known,
	   "nothing readable: every field unavailable");
}

static void test_summary_fields(void)
{
	static journal_entry e;
	machine_identity id = {
		.sys_vendor = "V", .product_name = "P", .board_vendor = "BV", .board_name = "BN",
		.bios_vendor = "BIOSV", .bios_version = "1.0", .bios_date = "01/02/2003",
		.microcode = "0xf0", .cpu_count_known = true, .cpu_count = 64,
	};
	scan_summary sum = {
		.scan_id = "0123456789abcdef0123456789abcdef", .status = HWLAT_STATUS_COMPLETED,
		.mode = "round-robin", .cpus = "0-1", .kernel = "k", .cpu_model = "m", .clock = "c",
		.smi_method = HWLAT_SMI_METHOD_SUM, .identity = &id,
	};
	int r;

	r = journal_entry_summary(&e, &sum);
	ok(r == 0 && field_is(&e, HWLAT_F_SYS_VENDOR, "V") &&
		   field_is(&e, HWLAT_F_PRODUCT_NAME, "P") &&
		   field_is(&e, HWLAT_F_BOARD_VENDOR, "BV") &&
		   field_is(&e, HWLAT_F_BOARD_NAME, "BN") &&
		   field_is(&e, HWLAT_F_BIOS_VENDOR, "BIOSV") &&
		   field_is(&e, HWLAT_F_BIOS_VERSION, "1.0") &&
		   field_is(&e, HWLAT_F_BIOS_DATE, "01/02/2003") &&
		   field_is(&e, HWLAT_F_MICROCODE, "0xf0") &&
		   field_is(&e, HWLAT_F_CPU_COUNT, "64"),
	   "summary: every identity field");
	id.cpu_count_known = false;
	r = journal_entry_summary(&e, &sum);
	ok(r == 0 && field_is(&e, HWLAT_F_CPU_COUNT, HWLAT_UNAVAILABLE),
	   "summary: unknown CPU count is 'unavailable', not 0");
	sum.identity = NULL;
	r = journal_entry_summary(&e, &sum);
	ok(r == 0 && field_is(&e, HWLAT_F_SYS_VENDOR, HWLAT_UNAVAILABLE) &&
		   field_is(&e, HWLAT_F_BIOS_DATE, HWLAT_UNAVAILABLE) &&
		   field_is(&e, HWLAT_F_MICROCODE, HWLAT_UNAVAILABLE) &&
		   field_is(&e, HWLAT_F_CPU_COUNT, HWLAT_UNAVAILABLE),
	   "summary without an identity: every field 'unavailable'");

	/* The longest strings still fit the entry. */
	memset(&id, 'x', sizeof(id));
	id.sys_vendor[IDENTITY_STR_MAX - 1] = id.product_name[IDENTITY_STR_MAX - 1] = '\0';
	id.board_vendor[IDENTITY_STR_MAX - 1] = id.board_name[IDENTITY_STR_MAX - 1] = '\0';
	id.bios_vendor[IDENTITY_STR_MAX - 1] = id.bios_version[IDENTITY_STR_MAX - 1] = '\0';
	id.bios_date[IDENTITY_STR_MAX - 1] = id.microcode[IDENTITY_STR_MAX - 1] = '\0';
	id.cpu_count_known = true;
	sum.identity = &id;
	sum.smi_unavailable = "why";
	r = journal_entry_summary(&e, &sum);
	ok(r == 0, "summary with 255-byte identity strings fits (r = %d)", r);
}

static void test_microcode_fit(void)
{
	char buf[6];

	/* "0xb4" and the room for a ',' before a next value: 6 bytes. */
	cpuinfo_microcode("microcode\t: 0xb4\n", buf, sizeof(buf));
	ok(strcmp(buf, "0xb4") == 0, "microcode 0xb4 into 6 bytes: '%s' (want '0xb4')", buf);

	/* A second revision is added whole or not at all: ",0xb5" needs 5 more bytes. */
	char two[10];
	const char *info = "microcode\t: 0xb4\nmicrocode\t: 0xb5\n";

	cpuinfo_microcode(info, two, 9);
	ok(strcmp(two, "0xb4") == 0, "microcode 0xb4 and 0xb5 into 9 bytes: '%s' (want '0xb4')",
	   two);
	cpuinfo_microcode(info, two, 10);
	ok(strcmp(two, "0xb4,0xb5") == 0,
	   "microcode 0xb4 and 0xb5 into 10 bytes: '%s' (want '0xb4,0xb5')", two);
}

int main(void)
{
	/* TAP lines and the code's stderr messages interleave readably. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	scratch_init();
	test_cpulist_count();
	test_microcode();
	test_identity_read();
	test_summary_fields();
	test_microcode_fit();
	scratch_done();
	return tap_finish();
}
