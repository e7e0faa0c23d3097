/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Loading and reading the module (service/module.c), TAP output. Proves
 * that loaded means /sys/module/hwlat_detector exists; a loaded module is
 * neither loaded again nor marked as loaded by the scan; a failed
 * "modprobe --remove" is -EIO with its status on stderr; a refused load
 * gives the Secure Boot hint that fits the DKMS that built it; module parameters
 * without a mode file are an error naming the file.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "detector.h"
#include "module.h"
#include "unit-test.h"

static void unload_module(void *arg)
{
	*(int *)arg = module_unload();
}

static void test_module(void)
{
	bool loaded = true;
	const char *err;
	int r;

	setenv("HWLAT_SYS_MODULE", at("sys-module"), 1);
	setenv("HWLAT_MODPROBE", at("no-such-modprobe"), 1);
	ok(!module_is_loaded(), "no %s/hwlat_detector: not loaded", at("sys-module"));
	put("sys-module/hwlat_detector/parameters/enabled", "Y\n");
	ok(module_is_loaded(), "%s/hwlat_detector exists: loaded", at("sys-module"));
	/* Loaded already: modprobe (missing here) is not run, nothing to unload. */
	r = module_load(&loaded);
	ok(r == 0 && !loaded, "module_load of a loaded module: 0 and not loaded by us (r=%d)", r);
	/*
	 * A module tool that fails to remove the module (status 3): -EIO,
	 * which --unload-module and the scan's cleanup turn into a failure,
	 * and the status said; not 0 as if the module were gone.
	 */
	put("modprobe-fails", "#!/bin/sh\nexit 3\n");
	if (chmod(at("modprobe-fails"), 0755) < 0)
		bail("chmod");
	setenv("HWLAT_MODPROBE", at("modprobe-fails"), 1);
	err = stderr_of(unload_module, &r);
	ok(r == -EIO && strcmp(err, "hwlat-scan: modprobe --remove hwlat_detector failed "
			       "(status 3)\n") == 0,
	   "a failed modprobe --remove: -EIO (r=%d) and its status on stderr", r);
	if (strcmp(err, "hwlat-scan: modprobe --remove hwlat_detector failed (status 3)\n") != 0)
		printf("#   got: %s", err);
	unsetenv("HWLAT_SYS_MODULE");
	unsetenv("HWLAT_MODPROBE");
}

static void load_module(void *arg)
{
	bool loaded;

	*(int *)arg = module_load(&loaded);
}

/*
 * A module that is installed but refused (lockdown): the hint matches what
 * the DKMS that built it did. With its certificate present, enrol that;
 * without one (DKMS before version 3 signs nothing), there is no key to
 * enrol and the message must not send the user looking for one.
 */
static void test_load_refused(void)
{
	static const char head[] = "hwlat-scan: modprobe hwlat_detector failed (status 1) on kernel ";
	static const char enrol[] = "; see 'dmesg' (Secure Boot: the DKMS signing key must be "
				    "enrolled with mokutil --import /var/lib/dkms/mok.pub)\n";
	static const char unsigned_[] = "; see 'dmesg' (Secure Boot: this DKMS does not sign "
					"modules (no /var/lib/dkms/mok.pub); sign hwlat_detector.ko "
					"with a key enrolled with mokutil)\n";
	const char *err;
	int r;

	setenv("HWLAT_SYS_MODULE", at("refused-sys-module"), 1);
	put("modprobe-refuses", "#!/bin/sh\n[ \"$1\" = --dry-run ] && exit 0\nexit 1\n");
	if (chmod(at("modprobe-refuses"), 0755) < 0)
		bail("chmod");
	setenv("HWLAT_MODPROBE", at("modprobe-refuses"), 1);

	put("dkms/mok.pub", "certificate\n");
	setenv("HWLAT_DKMS_MOK", at("dkms/mok.pub"), 1);
	err = stderr_of(load_module, &r);
	ok(r == -EIO && strncmp(err, head, strlen(head)) == 0 &&
	   strlen(err) > strlen(enrol) && strcmp(err + strlen(err) - strlen(enrol), enrol) == 0,
	   "refused with the DKMS certificate present: -EIO (r=%d), enrol it with mokutil", r);
	printf("#   got: %s", err);

	setenv("HWLAT_DKMS_MOK", at("dkms/no-mok.pub"), 1);
	err = stderr_of(load_module, &r);
	ok(r == -EIO && strncmp(err, head, strlen(head)) == 0 &&
	   strlen(err) > strlen(unsigned_) &&
	   strcmp(err + strlen(err) - strlen(unsigned_), unsigned_) == 0,
	   "refused with no DKMS certificate: -EIO (r=%d), the module must be signed by the user", r);
	printf("#   got: %s", err);

	unsetenv("HWLAT_DKMS_MOK");
	unsetenv("HWLAT_SYS_MODULE");
	unsetenv("HWLAT_MODPROBE");
}

struct params_read {
	int r;
	module_params p;
};

static void read_params(void *arg)
{
	struct params_read *x = arg;

	x->r = module_read_params(&x->p);
}

static void test_params_no_mode(void)
{
	static struct params_read x;
	char want[2048];
	const char *err;

	put("pm/hwlat_detector/parameters/enabled", "1\n");
	put("pm/hwlat_detector/parameters/threshold", "20\n");
	put("pm/hwlat_detector/parameters/width", "500000\n");
	put("pm/hwlat_detector/parameters/window", "1000000\n");
	put("pm/hwlat_detector/parameters/cpus", "0-1\n");
	setenv("HWLAT_SYS_MODULE", at("pm"), 1);
	err = stderr_of(read_params, &x);
	unsetenv("HWLAT_SYS_MODULE");
	snprintf(want, sizeof(want),
		 "hwlat-scan: cannot read %s/hwlat_detector/parameters/mode: "
		 "No such file or directory\n", at("pm"));
	ok(x.r == -ENOENT && strcmp(err, want) == 0,
	   "module parameters without mode: r=%d (want %d), '%.*s'", x.r, -ENOENT,
	   (int)strcspn(err, "\n"), err);
}

int main(void)
{
	/* TAP lines and the code's stderr messages interleave readably. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	scratch_init();
	test_module();
	test_load_refused();
	test_params_no_mode();
	scratch_done();
	return tap_finish();
}
