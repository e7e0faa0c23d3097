// SPDX-License-Identifier: GPL-2.0-or-later
/* The journal files to read; see files.h. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <systemd/sd-id128.h>

#include "files.h"

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

/* Adds path unless the same file is already in the set. */
static int set_add(struct journal_set *set, const char *path, bool must_exist)
{
	struct journal_path *p;
	struct stat st;

	if (stat(path, &st) < 0) {
		int r = -errno;

		if (!must_exist)
			return 0;
		fprintf(stderr, "hwlat-report: cannot open journal file %s: %s\n", path,
			strerror(-r));
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		if (!must_exist)
			return 0;
		fprintf(stderr, "hwlat-report: journal file %s is not a regular file\n", path);
		return -EINVAL;
	}
	for (size_t i = 0; i < set->n; i++)
		if (set->files[i].dev == st.st_dev && set->files[i].ino == st.st_ino)
			return 0;
	p = realloc(set->files, (set->n + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	set->files = p;
	p = &set->files[set->n];
	p->path = strdup(path);
	if (!p->path)
		return -ENOMEM;
	p->dev = st.st_dev;
	p->ino = st.st_ino;
	p->mtime_ns = (uint64_t)st.st_mtim.tv_sec * NSEC_PER_SEC + (uint64_t)st.st_mtim.tv_nsec;
	set->n++;
	return 0;
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
		fprintf(stderr, "hwlat-report: cannot open journal directory %s: %s\n", dir,
			strerror(-r));
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

int journal_set_make(const struct options *o, struct journal_set *ret)
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
			fprintf(stderr, "hwlat-report: out of memory\n");
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

int journal_open(const struct journal_set *set, size_t i, sd_journal **ret)
{
	sd_journal *j = NULL;
	int r;

	if (set->local) {
		r = sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY);
		if (r < 0) {
			fprintf(stderr, "hwlat-report: cannot open the local journal: %s\n",
				strerror(-r));
			return r;
		}
	} else {
		const char *paths[2] = { set->files[i].path, NULL };

		r = sd_journal_open_files(&j, paths, 0);
		if (r < 0) {
			fprintf(stderr, "hwlat-report: cannot open journal file %s: %s\n",
				paths[0], strerror(-r));
			return r;
		}
	}
	r = sd_journal_set_data_threshold(j, DATA_THRESHOLD);
	if (r < 0) {
		fprintf(stderr, "hwlat-report: cannot set the journal data threshold: %s\n",
			strerror(-r));
		sd_journal_close(j);
		return r;
	}
	*ret = j;
	return 0;
}
