/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The module backend (service/backend-module.c) driven by hand on a fake
 * detector directory of regular files, TAP output. Proves that:
 * - on a detector found enabled, open, prepare and start write the
 *   configured settings and enable=1, stop writes enable=0, and restore
 *   puts every setting back as it was and enables it again;
 * - restore undoes each thing once: called again (an error path that
 *   restores, then the end that restores too) it writes nothing, so a
 *   detector someone disabled after the scan stays disabled, and the
 *   stream stays closed;
 * - the state lives in the backend alone: what run_scan() holds is a
 *   pointer to it, never a copy whose descriptors a second undo would
 *   close again.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "backend.h"
#include "unit-test.h"

static const char *get(const char *name, char *buf, size_t size)
{
	FILE *f = fopen(at(name), "re");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, (int)size, f))
			buf[0] = '\0';
		fclose(f);
	}
	return buf;
}

static void make_detector(void)
{
	static const char *const files[][2] = {
		{ "threshold", "10\n" }, { "width", "500000\n" }, { "window", "1000000\n" },
		{ "mode", "none [round-robin] per-cpu stop-machine\n" }, { "cpus", "0-1\n" },
		{ "enable", "1\n" }, { "dropped", "0\n" }, { "floor", "45\n" },
		{ "clock", "tsc\n" }, { "smi", "MSR_SMI_COUNT\n" }, { "stream", "" },
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		put(files[i][0], files[i][1]);
}

static void test_restore_once(void)
{
	static scan_options o;
	static scan_config cfg;
	static scan_tally t;
	scan_backend *b = module_backend_new();
	scan_reader rd;
	char buf[64];
	int r;

	o.detector_dir = scratch;
	b->o = &o;
	b->cfg = &cfg;
	config_init(&cfg);
	config_set(&cfg, "threshold", "20", "test");
	config_set(&cfg, "width", "100ms", "test");
	tally_init(&t, "0123456789abcdef0123456789abcdef", false, stdout);
	reader_init(&rd, &t, b->ops->parse_line, b);
	r = b->ops->open(b);
	if (r >= 0)
		r = b->ops->prepare(b, &t);
	if (r >= 0)
		r = b->ops->start(b, &rd);
	ok(r == 0 && b->stream_fd >= 0 && strcmp(get("threshold", buf, sizeof(buf)), "20\n") == 0 &&
	   strcmp(get("width", buf, sizeof(buf)), "100000\n") == 0 &&
	   strcmp(get("enable", buf, sizeof(buf)), "1\n") == 0,
	   "open, prepare, start: the settings written, enable=1, the stream open (r=%d)", r);
	r = b->ops->stop(b);
	ok(r == 0 && strcmp(get("enable", buf, sizeof(buf)), "0\n") == 0, "stop: enable=0 (r=%d)",
	   r);
	r = b->ops->restore(b, true);
	ok(r == 0 && b->stream_fd == -1 && strcmp(get("threshold", buf, sizeof(buf)), "10\n") == 0 &&
	   strcmp(get("width", buf, sizeof(buf)), "500000\n") == 0 &&
	   strcmp(get("enable", buf, sizeof(buf)), "1\n") == 0,
	   "restore: threshold and width back as they were, enabled again, the stream closed "
	   "(r=%d)", r);
	/* Someone sets the detector up otherwise after the scan. */
	put("threshold", "99\n");
	put("enable", "0\n");
	r = b->ops->restore(b, true);
	ok(r == 0 && b->stream_fd == -1 && strcmp(get("threshold", buf, sizeof(buf)), "99\n") == 0 &&
	   strcmp(get("enable", buf, sizeof(buf)), "0\n") == 0,
	   "restore again writes nothing: threshold 99 and enable 0 as left (r=%d)", r);
	b->ops->free(b);
	tally_done(&t);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* No module parameters: its per-mode bounds are unknown, so lifted. */
	setenv("HWLAT_SYS_MODULE", "/nonexistent", 1);
	scratch_init();
	make_detector();
	test_restore_once();
	scratch_done();
	return tap_finish();
}
