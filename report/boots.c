// SPDX-License-Identifier: GPL-2.0-or-later
/* Relative boots; see boots.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boots.h"
#include "hwlat-journal.h"
#include "log.h"

struct boot {
	char id[ID128_LEN + 1];
	uint64_t first_usec; /* its first entry, of any kind */
	bool hwlat;          /* it has a hwlat entry */
};

struct boots {
	struct boot *b;
	size_t n;
};

static struct boot *boot_get(struct boots *l, const char *id)
{
	struct boot *b;

	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->b[i].id, id) == 0)
			return &l->b[i];
	b = realloc(l->b, (l->n + 1) * sizeof(*b));
	if (!b)
		return NULL;
	l->b = b;
	b = &l->b[l->n++];
	memset(b, 0, sizeof(*b));
	memcpy(b->id, id, ID128_LEN + 1);
	b->first_usec = UINT64_MAX;
	return b;
}

/* The first entry of boot id matching (optionally) the hwlat MESSAGE_IDs. */
static int first_entry(sd_journal *j, const char *id, bool hwlat, uint64_t *ret_usec)
{
	char m[64];
	int r;

	sd_journal_flush_matches(j);
	snprintf(m, sizeof(m), "_BOOT_ID=%s", id);
	r = sd_journal_add_match(j, m, 0);
	if (r >= 0 && hwlat)
		r = sd_journal_add_match(j, "MESSAGE_ID=" HWLAT_SAMPLE_MESSAGE_ID, 0);
	if (r >= 0 && hwlat)
		r = sd_journal_add_match(j, "MESSAGE_ID=" HWLAT_SUMMARY_MESSAGE_ID, 0);
	if (r >= 0)
		r = sd_journal_seek_head(j);
	if (r >= 0)
		r = sd_journal_next(j);
	if (r > 0)
		r = sd_journal_get_realtime_usec(j, ret_usec) < 0 ? 0 : 1;
	return r;
}

/* Adds the boots of one journal (file) to l. */
static int scan_journal(sd_journal *j, struct boots *l)
{
	const void *data;
	size_t len;
	char (*ids)[ID128_LEN + 1] = NULL;
	size_t n = 0;
	int r;

	r = sd_journal_query_unique(j, "_BOOT_ID");
	if (r < 0)
		return r;
	SD_JOURNAL_FOREACH_UNIQUE(j, data, len) {
		char id[ID128_LEN + 1], buf[ID128_LEN + 16];
		void *p;

		if (len <= strlen("_BOOT_ID=") || len - strlen("_BOOT_ID=") >= sizeof(buf))
			continue;
		memcpy(buf, (const char *)data + strlen("_BOOT_ID="), len - strlen("_BOOT_ID="));
		buf[len - strlen("_BOOT_ID=")] = '\0';
		if (normalize_id128(buf, id) < 0)
			continue;
		p = realloc(ids, (n + 1) * sizeof(*ids));
		if (!p) {
			free(ids);
			return -ENOMEM;
		}
		ids = p;
		memcpy(ids[n++], id, sizeof(id));
	}
	for (size_t i = 0; i < n && r >= 0; i++) {
		struct boot *b = boot_get(l, ids[i]);
		uint64_t usec;

		if (!b) {
			r = -ENOMEM;
			break;
		}
		r = first_entry(j, ids[i], false, &usec);
		if (r > 0 && usec < b->first_usec)
			b->first_usec = usec;
		if (r >= 0)
			r = first_entry(j, ids[i], true, &usec);
		if (r > 0)
			b->hwlat = true;
	}
	free(ids);
	return r < 0 ? r : 0;
}

static int by_first_entry(const void *a, const void *b)
{
	const struct boot *x = a, *y = b;

	if (x->first_usec != y->first_usec)
		return x->first_usec < y->first_usec ? -1 : 1;
	return strcmp(x->id, y->id);
}

int boot_resolve(struct journal_set *set, int64_t offset, char ret[ID128_LEN + 1])
{
	struct boots l = { 0 };
	size_t n = 0;
	int64_t idx;
	int r = 0;

	for (size_t i = 0; r >= 0 && i < journal_set_size(set); i++) {
		sd_journal *j = NULL;

		r = journal_open(set, i, &j);
		if (r < 0 && !set->local) {
			r = 0; /* named; the others may still be read */
			continue;
		}
		if (r < 0)
			break;
		r = scan_journal(j, &l);
		sd_journal_close(j);
		if (r < 0)
			log_error_errno(r, "cannot list the boots of the journal");
	}
	if (r >= 0 && journal_set_all_failed(set)) {
		log_msg("no journal file could be read");
		r = -EIO;
	}
	if (r < 0)
		goto out;
	/* Keep the boots with hwlat entries, oldest first. */
	for (size_t i = 0; i < l.n; i++)
		if (l.b[i].hwlat)
			l.b[n++] = l.b[i];
	qsort(l.b, n, sizeof(*l.b), by_first_entry);
	if (n == 0) {
		log_msg("no boot has hwlat-scan entries in the journal");
		r = -ENOENT;
		goto out;
	}
	idx = offset > 0 ? offset - 1 : (int64_t)n - 1 + offset;
	if (idx < 0 || idx >= (int64_t)n) {
		log_msg("no boot at offset %+" PRId64
			": the journal has hwlat-scan entries from %zu "
			"boot%s (offsets %" PRId64 "..0 or 1..%zu)",
			offset, n, n == 1 ? "" : "s", -(int64_t)n + 1, n);
		r = -ERANGE;
		goto out;
	}
	memcpy(ret, l.b[idx].id, ID128_LEN + 1);
out:
	free(l.b);
	return r;
}
