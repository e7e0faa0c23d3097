// SPDX-License-Identifier: GPL-2.0-or-later
/* --csv: one row per sample; see csv.h. The CSV emitter (emit.h). */
#include <errno.h>
#include <inttypes.h>

#include "csv.h"
#include "emit.h"
#include "escape.h"
#include "hwlat-journal.h"
#include "log.h"

/* Host names may hold anything: quoted, quotes doubled, control characters
 * and bytes that are not UTF-8 replaced (escape.h). */
static void csv_field(FILE *f, const char *s)
{
	fputc('"', f);
	escape_write(f, s, ESCAPE_CSV);
	fputc('"', f);
}

/* The cause of the failed write (ENOSPC, EPIPE), not just that one failed. */
static int write_status(FILE *f)
{
	if (!ferror(f))
		return 0;
	return errno > 0 ? -errno : -EIO;
}

int csv_header(FILE *f)
{
	fputs("scan_id,hostname,machine_id,boot_id,seq,cpu,timestamp_ns,"
	      "latency_ns,inner_ns,outer_ns,count,nmi_count,nmi_ns,"
	      "smi_count,smi_ns,threshold_ns\n", f);
	return write_status(f);
}

/* ",N", or ",unavailable" as in the journal: a reader must not see 0. */
static void csv_maybe(FILE *f, bool known, uint64_t v)
{
	if (known)
		fprintf(f, ",%" PRIu64, v);
	else
		fputs("," HWLAT_UNAVAILABLE, f);
}

int csv_row(FILE *f, const struct sample_entry *x, bool header)
{
	if (header)
		csv_header(f);
	fprintf(f, "%s,", x->scan_id);
	csv_field(f, x->hostname);
	fprintf(f, ",%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		   ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64,
		x->machine_id, x->boot_id, x->seq, x->cpu, x->timestamp_ns,
		x->latency_ns, x->inner_ns, x->outer_ns, x->count, x->nmi_count);
	csv_maybe(f, x->nmi_ns_known, x->nmi_ns);
	csv_maybe(f, x->smi_count_known, x->smi_count);
	csv_maybe(f, x->smi_ns_known, x->smi_ns);
	fprintf(f, ",%" PRIu64 "\n", x->threshold_ns);
	return write_status(f);
}

/* The rows are written as the journal is read; the header alone for none. */
static void csv_prepare(struct report_data *d)
{
	d->csv = stdout;
}

static int csv_emit(struct report_data *d, struct report_verdict *v)
{
	int r = 0;

	(void)v;
	if (d->csv_rows == 0)
		r = csv_header(stdout);
	if (r >= 0 && fflush(stdout) != 0)
		r = errno > 0 ? -errno : -EIO;
	if (r >= 0 && ferror(stdout))
		r = -EIO;
	if (r < 0)
		log_error_errno(r, "cannot write the output");
	return r;
}

const struct emitter csv_emitter = { csv_prepare, csv_emit };
