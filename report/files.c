// SPDX-License-Identifier: GPL-2.0-or-later
/* The journal files to read; see files.h. */
#include <dirent.h>
#include <endian.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-id128.h>

#include "files.h"
#include "log.h"

/* Our fields are short; never decompress more of a big field than this. */
#define DATA_THRESHOLD 256

int normalize_id128(const char *s, char ret[ID128_LEN + 1])
{
	sd_id128_t id;

	if (!s || sd_id128_from_string(s, &id) < 0)
		return -EINVAL;
	sd_id128_to_string(id, ret);
	return 0;
}

static int path_cmp(const void *a, const void *b)
{
	const struct journal_path *x = a, *y = b;

	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? -1 : 1;
	return strcmp(x->path, y->path);
}

static bool is_journal_name(const char *name)
{
	size_t n = strlen(name);

	return (n > 8 && strcmp(name + n - 8, ".journal") == 0) ||
	       (n > 9 && strcmp(name + n - 9, ".journal~") == 0);
}

static int set_append(struct journal_set *set, const char *path, const struct stat *st,
		      int error)
{
	struct journal_path *p;

	p = realloc(set->files, (set->n + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	set->files = p;
	p = &set->files[set->n];
	memset(p, 0, sizeof(*p));
	p->path = strdup(path);
	if (!p->path)
		return -ENOMEM;
	if (st) {
		p->dev = st->st_dev;
		p->ino = st->st_ino;
		p->mtime_ns = (uint64_t)st->st_mtim.tv_sec * NSEC_PER_SEC +
			      (uint64_t)st->st_mtim.tv_nsec;
	}
	set->n++;
	if (error < 0)
		journal_file_failed(set, set->n - 1, error);
	return 0;
}

/*
 * Adds path unless the same file is already in the set. A --file
 * (must_exist) that cannot be used stays in the set, failed and named, so
 * that the others are still read; a vanished file of a directory is skipped.
 */
static int set_add(struct journal_set *set, const char *path, bool must_exist)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return must_exist ? set_append(set, path, NULL, -errno) : 0;
	if (!S_ISREG(st.st_mode))
		return must_exist ? set_append(set, path, NULL, -EISDIR) : 0;
	for (size_t i = 0; i < set->n; i++)
		if (!set->files[i].error && set->files[i].dev == st.st_dev &&
		    set->files[i].ino == st.st_ino)
			return 0;
	return set_append(set, path, &st, 0);
}

void journal_permission_hint(void)
{
	static bool shown;

	if (shown)
		return;
	shown = true;
	log_msg("this is a permission problem: add the user to the systemd-journal group "
		"(usermod -aG systemd-journal USER, then log in again) or run hwlat-report as "
		"root (sudo hwlat-report)");
}

void journal_file_failed(struct journal_set *set, size_t i, int error)
{
	struct journal_path *p = &set->files[i];

	if (p->error)
		return;
	p->error = error;
	set->n_failed++;
	if (error == -EISDIR)
		log_msg("skipping journal file %s: not a regular file", p->path);
	else
		log_error_errno(error, "skipping journal file %s", p->path);
	if (error == -EACCES || error == -EPERM) {
		set->permission_problem = true;
		journal_permission_hint();
	}
}

bool journal_set_all_failed(const struct journal_set *set)
{
	return !set->local && set->n > 0 && set->n_failed == set->n;
}

/* The journal files of dir, and of its machine-ID subdirectories (the
 * layout of /var/log/journal and of systemd-journal-remote's output). */
static int set_add_directory(struct journal_set *set, const char *dir, bool top)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int r = 0;

	if (!d) {
		r = -errno;
		if (!top)
			return 0;
		log_error_errno(r, "cannot open journal directory %s", dir);
		return r;
	}
	while (r >= 0 && (de = readdir(d))) {
		char path[PATH_MAX];
		char id[ID128_LEN + 1];

		if (de->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		if (is_journal_name(de->d_name))
			r = set_add(set, path, false);
		else if (top && strlen(de->d_name) == ID128_LEN &&
			 normalize_id128(de->d_name, id) == 0)
			r = set_add_directory(set, path, false);
	}
	closedir(d);
	return r;
}

void journal_set_done(struct journal_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		free(set->files[i].path);
	free(set->files);
	memset(set, 0, sizeof(*set));
}

int journal_set_make(const struct report_options *o, struct journal_set *ret)
{
	struct journal_set set = { 0 };
	int r = 0;

	if (o->n_files > 0) {
		for (size_t i = 0; r >= 0 && i < o->n_files; i++)
			r = set_add(&set, o->files[i], true);
	} else if (o->directory) {
		r = set_add_directory(&set, o->directory, true);
	} else {
		set.local = true;
	}
	if (r < 0) {
		if (r == -ENOMEM)
			log_msg("out of memory");
		journal_set_done(&set);
		return r;
	}
	/* Oldest first, so that entries come out roughly in time order. */
	if (set.n > 1)
		qsort(set.files, set.n, sizeof(*set.files), path_cmp);
	*ret = set;
	return 0;
}

size_t journal_set_size(const struct journal_set *set)
{
	return set->local ? 1 : set->n;
}

int journal_open(struct journal_set *set, size_t i, sd_journal **ret)
{
	sd_journal *j = NULL;
	int r;

	if (!set->local && set->files[i].error)
		return set->files[i].error;
	if (set->local) {
		r = sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY);
		if (r < 0) {
			log_error_errno(r, "cannot open the local journal");
			return r;
		}
	} else {
		const char *paths[2] = { set->files[i].path, NULL };

		r = sd_journal_open_files(&j, paths, 0);
		if (r < 0) {
			journal_file_failed(set, i, r);
			return r;
		}
	}
	r = sd_journal_set_data_threshold(j, DATA_THRESHOLD);
	if (r < 0) {
		log_error_errno(r, "cannot set the journal data threshold");
		sd_journal_close(j);
		return r;
	}
	*ret = j;
	return 0;
}

/* The journal file format (systemd's journal-def.h): a header starting with
 * "LPKSHHRH", little-endian, the state at byte 16 (1: online, a writer may
 * be appending), n_entries at byte 152 of a header at least 160 bytes long
 * (header_size at byte 88). */
#define HEADER_SIGNATURE "LPKSHHRH"
#define HEADER_STATE_OFFSET 16
#define STATE_ONLINE 1
#define HEADER_SIZE_OFFSET 88
#define HEADER_N_ENTRIES_OFFSET 152

int journal_file_entries(const struct journal_set *set, size_t i, uint64_t *ret)
{
	unsigned char h[HEADER_N_ENTRIES_OFFSET + 8];
	uint64_t header_size, n;
	ssize_t got;
	int fd, r = 0;

	if (set->local)
		return -EOPNOTSUPP;
	fd = open(set->files[i].path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	got = pread(fd, h, sizeof(h), 0);
	if (got < 0)
		r = -errno;
	close(fd);
	if (r < 0)
		return r;
	if ((size_t)got < sizeof(h) || memcmp(h, HEADER_SIGNATURE, 8) != 0)
		return -EBADMSG;
	if (h[HEADER_STATE_OFFSET] == STATE_ONLINE)
		return -EBUSY; /* the count may run ahead of what is linked yet */
	memcpy(&header_size, h + HEADER_SIZE_OFFSET, 8);
	if (le64toh(header_size) < sizeof(h))
		return -EOPNOTSUPP; /* an old format without the count */
	memcpy(&n, h + HEADER_N_ENTRIES_OFFSET, 8);
	*ret = le64toh(n);
	return 0;
}

/* Counts the files of dir (and of its machine-ID subdirectories) that
 * this user may not read. */
static size_t count_unreadable(const char *dir, bool top, char *example, size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char path[PATH_MAX];

		if (de->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		if (is_journal_name(de->d_name)) {
			if (faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) < 0 &&
			    (errno == EACCES || errno == EPERM)) {
				if (n++ == 0)
					snprintf(example, size, "%s", path);
			}
		} else if (top) {
			n += count_unreadable(path, false, example, n ? 0 : size);
		}
	}
	closedir(d);
	return n;
}

size_t journal_unreadable_local(char *example, size_t size)
{
	static const char *const dirs[] = { "/var/log/journal", "/run/log/journal" };
	size_t n = 0;

	if (size > 0)
		example[0] = '\0';
	for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
		n += count_unreadable(dirs[i], true, example, n ? 0 : size);
	return n;
}
