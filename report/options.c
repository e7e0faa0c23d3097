// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hwlat-report's command line: each option's value checked as it comes,
 * then the times read in the zone --utc asks for, the options checked
 * against each other (one table of rules), the defaults and the colour
 * policy; and the two selections of --compare. See options.h.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect.h"
#include "log.h"
#include "macro.h"
#include "options.h"
#include "select.h"
#include "when.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* The largest --bucket-size: 1000 s. */
#define MAX_BUCKET_NS (1000ULL * NSEC_PER_SEC)

/*
 * The options the rules name, each a bit of struct args' given. The first
 * eleven are in the order "--compare does not take ..." names the first
 * of them given.
 */
enum opt {
	OPT_CSV, OPT_OPENMETRICS, OPT_LIST_SCANS, OPT_BY, OPT_HISTOGRAM, OPT_BUCKET,
	OPT_ENTRIES, OPT_HARDLIMIT, OPT_FAIL_IF, OPT_SCAN, OPT_ALL,
	OPT_DIRECTORY, OPT_FILE, OPT_JSON, OPT_SVG, OPT_PERCENTILES, OPT_CPU, OPT_COMPARE,
	N_OPTS
};

#define OPT(name) (1u << OPT_##name)

static const char *const opt_names[N_OPTS] = {
	[OPT_CSV] = "--csv", [OPT_OPENMETRICS] = "--openmetrics",
	[OPT_LIST_SCANS] = "--list-scans", [OPT_BY] = "--by", [OPT_HISTOGRAM] = "--histogram",
	[OPT_BUCKET] = "--bucket-size", [OPT_ENTRIES] = "--entries",
	[OPT_HARDLIMIT] = "--hardlimit", [OPT_FAIL_IF] = "--fail-if", [OPT_SCAN] = "--scan",
	[OPT_ALL] = "--all", [OPT_DIRECTORY] = "--directory", [OPT_FILE] = "--file",
	[OPT_JSON] = "--json", [OPT_SVG] = "--svg", [OPT_PERCENTILES] = "--percentiles",
	[OPT_CPU] = "--cpu", [OPT_COMPARE] = "--compare",
};

/* What the command line gave beyond struct report_options. */
struct args {
	uint32_t given;	    /* OPT() of each option given */
	const char *color;  /* --color: auto, always or never */
	const char *by_arg; /* --by as given */
	bool utc;
};

static void help(void)
{
	printf("Usage: hwlat-report [OPTION...]\n"
	       "Report the hardware latency samples hwlat-scan wrote to the journal.\n\n"
	       "Journal:\n"
	       "  -D, --directory=DIR     read the journal files in DIR\n"
	       "      --file=FILE         read journal FILE (repeatable)\n"
	       "Selection (default: the newest scan):\n"
	       "      --scan=ID           the scan with this ID (HWLAT_SCAN_ID)\n"
	       "  -a, --all               every scan\n"
	       "  -b, --boot[=ID|OFFSET]  scans of this boot (default: the newest boot);\n"
	       "                          0 newest, -1 the one before, 1 the oldest\n"
	       "  -S, --since=TIME        samples at or after TIME (implies all scans)\n"
	       "  -U, --until=TIME        samples at or before TIME (implies all scans)\n"
	       "  -c, --cpu=LIST          samples of these CPUs (\"0-3,6\")\n"
	       "      --by=KEY            group statistics by cpu, scan, boot, host,\n"
	       "                          firmware (BIOS vendor, version, date) or\n"
	       "                          product (system vendor and product)\n"
	       "      --list-scans        list the scans (id, host, boot, start, duration,\n"
	       "                          status, max), one per line\n"
	       "      --compare A B       compare two selections and test whether they\n"
	       "                          differ by more than chance; A and B are terms\n"
	       "                          joined by commas: scan:ID, boot:ID|OFFSET,\n"
	       "                          host:NAME, firmware:VERSION, product:NAME,\n"
	       "                          since:TIME, until:TIME, cpu:LIST\n"
	       "Output:\n"
	       "  -H, --histogram         print histograms\n"
	       "      --bucket-size=SPAN  linear buckets of SPAN (default unit us)\n"
	       "                          instead of log2 buckets (implies -H)\n"
	       "      --entries=N         at most N linear buckets (default 100), then\n"
	       "                          one overflow bucket (needs --bucket-size)\n"
	       "      --percentiles=LIST  the percentiles to print (default 50,90,99,99.9)\n"
	       "  -j, --json              one JSON document\n"
	       "      --csv               the raw samples as CSV\n"
	       "      --openmetrics       the figures as a Prometheus text file (what\n"
	       "                          hwlat-scan's openmetrics_file holds)\n"
	       "      --svg=FILE          also write an SVG with histogram and timeline\n"
	       "      --hardlimit=SPAN    fail (exit 1) when a latency exceeds SPAN\n"
	       "                          (default unit us)\n"
	       "      --fail-if=COND      fail (exit 6) when COND holds, e.g. 'p99>20us',\n"
	       "                          'smi>0' (repeatable; FACT: max, pN, smi,\n"
	       "                          smi-rate, nmi, unexplained, dropped, samples,\n"
	       "                          rate(>SIZE|smi|nmi|unexplained) on its 95 %%\n"
	       "                          upper bound, e.g. 'rate(>20us) > 1/h')\n"
	       "      --color[=WHEN]      colour the histogram: auto, always or never\n"
	       "      --utc               show and read times in UTC\n"
	       "  -h, --help              this help\n"
	       "      --version           the version\n\n"
	       "TIME: \"YYYY-MM-DD[ HH:MM[:SS]]\", today, yesterday, now, \"1h ago\", -30min,\n"
	       "+2h, @EPOCH.\n"
	       "Exit status: 0 ok, 1 hardlimit exceeded, 2 usage error, 3 no hwlat\n"
	       "entries match (or no data for --fail-if), 4 journal or output error,\n"
	       "6 a --fail-if condition holds. See hwlat-report(1).\n");
}

static int usage_error(const char *fmt, const char *arg, const char *why)
{
	_cleanup_free_ char *what = NULL;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	if (asprintf(&what, fmt, arg) < 0)
		what = NULL;
#pragma GCC diagnostic pop
	log_msg("%s%s%s\nTry 'hwlat-report --help'.", what ? what : fmt, why ? ": " : "",
		why ? why : "");
	return -EINVAL;
}

/* "invalid --scan 'x': why" for an option, "invalid --compare term
 * 'scan:x': why" for a term of --compare. */
static int invalid(const char *what, const char *shown, const char *why)
{
	char fmt[64];

	snprintf(fmt, sizeof(fmt), "invalid %s '%%s'", what);
	return usage_error(fmt, shown, why);
}

static const char *when_error(int r, const char *why)
{
	if (why[0])
		return why;
	return r == -ERANGE ? "out of range (before 1970 or too far ahead)" :
			      "expected YYYY-MM-DD[ HH:MM[:SS]], today, yesterday, now, "
			      "\"1h ago\", -30min, @EPOCH";
}

enum {
	ARG_FILE = 0x100,
	ARG_SCAN,
	ARG_BY,
	ARG_BUCKET_SIZE,
	ARG_ENTRIES,
	ARG_CSV,
	ARG_SVG,
	ARG_HARDLIMIT,
	ARG_VERSION,
	ARG_FAIL_IF,
	ARG_PERCENTILES,
	ARG_COLOR,
	ARG_UTC,
	ARG_LIST_SCANS,
	ARG_OPENMETRICS,
	ARG_COMPARE,
};

/* "50,99,99.99": 1 to REPORT_PERCENTILES_MAX values from 0 to 100, printed
 * in the order given. */
static int parse_percentile_list(const char *arg, struct report_options *o)
{
	char buf[256], *rest = buf, *part;
	size_t n = 0;

	if (strlen(arg) >= sizeof(buf))
		return usage_error("invalid --percentiles '%s'", arg, "too long");
	strcpy(buf, arg);
	do {
		double p;
		int r;

		part = rest;
		rest = strchr(rest, ',');
		if (rest)
			*rest++ = '\0';
		if (n == REPORT_PERCENTILES_MAX)
			return usage_error("invalid --percentiles '%s'", arg,
					   "at most 16 percentiles");
		r = parse_percentile(strip(part), &p);
		if (r < 0) {
			char why[128];

			snprintf(why, sizeof(why), r == -ERANGE ?
				 "'%s' is above 100" :
				 "'%s' is not a percentile from 0 to 100 (at most 6 decimals)",
				 part);
			return usage_error("invalid --percentiles '%s'", arg, why);
		}
		o->percentiles[n++] = p;
	} while (rest);
	o->n_percentiles = n;
	return 0;
}

/* "-1", "+2", "0", "3": a boot offset as journalctl takes it. */
static bool parse_boot_offset(const char *s, int64_t *ret)
{
	const char *p = s + (s[0] == '-' || s[0] == '+');
	uint64_t v;

	if (parse_u64(p, &v) < 0 || v > INT32_MAX)
		return false;
	*ret = s[0] == '-' ? -(int64_t)v : (int64_t)v;
	return true;
}

static int parse_boot(const char *arg, struct report_options *o, const char *what,
		      const char *shown)
{
	o->have_boot = true;
	o->boot_id[0] = '\0';
	/* --boot alone is the newest boot: offset 0. */
	o->boot_offset = 0;
	o->have_boot_offset = !arg || parse_boot_offset(arg, &o->boot_offset);
	if (o->have_boot_offset)
		return 0;
	if (normalize_id128(arg, o->boot_id) < 0)
		return invalid(what, shown ? shown : arg,
			       "expected a 32-hex-digit boot ID or an offset "
			       "(0 newest, -1 the one before, 1 the oldest)");
	return 0;
}

static int parse_scan(const char *arg, struct report_options *o, const char *what,
		      const char *shown)
{
	if (normalize_id128(arg, o->scan_id) < 0)
		return invalid(what, shown, "a scan ID is 32 hex digits");
	o->have_scan = true;
	return 0;
}

static int parse_cpus(const char *arg, struct report_options *o, const char *what,
		      const char *shown)
{
	int r = parse_cpulist(arg, &o->cpus);

	if (r < 0)
		return invalid(what, shown, r == -ERANGE ? "CPU numbers must be below 1024" :
							   "expected a CPU list such as 0-3,6");
	o->have_cpus = true;
	o->cpus_arg = arg;
	return 0;
}

/* --since/--until or since:/until: into *ret_ns, read after --utc. */
static int parse_time_arg(const char *arg, uint64_t now, uint64_t *ret_ns, const char *what,
			  const char *shown)
{
	char why[256];
	int r = parse_when(arg, now, ret_ns, why, sizeof(why));

	return r < 0 ? invalid(what, shown, when_error(r, why)) : 0;
}

/* The keys of --compare terms; a term is KEY:VALUE. */
enum term_key {
	TERM_SCAN, TERM_BOOT, TERM_HOST, TERM_FIRMWARE, TERM_PRODUCT, TERM_SINCE, TERM_UNTIL,
	TERM_CPU, N_COMPARE_KEYS
};

static const char *const compare_keys[N_COMPARE_KEYS] = {
	[TERM_SCAN] = "scan", [TERM_BOOT] = "boot", [TERM_HOST] = "host",
	[TERM_FIRMWARE] = "firmware", [TERM_PRODUCT] = "product", [TERM_SINCE] = "since",
	[TERM_UNTIL] = "until", [TERM_CPU] = "cpu",
};

/* The index of the key s starts with ("host:..."), or -1. */
static int compare_key(const char *s)
{
	for (int k = 0; k < N_COMPARE_KEYS; k++) {
		size_t len = strlen(compare_keys[k]);

		if (strncmp(s, compare_keys[k], len) == 0 && s[len] == ':')
			return k;
	}
	return -1;
}

#define TERM_EXPECTED "expected scan:ID, boot:ID|OFFSET, host:NAME, firmware:VERSION, " \
		      "product:NAME, since:TIME, until:TIME or cpu:LIST"

/*
 * One side of --compare: the terms of arg, joined by commas, applied on
 * top of the common options in side. A comma starts a new term only
 * before a key ("cpu:0-3,6,host:a" is cpu:0-3,6 and host:a), so values
 * may hold commas. *buf keeps the values side points to (freed by the
 * caller).
 */
/* The value of one term of --compare (term "key:value") into side. */
static int apply_term(enum term_key k, const char *term, const char *value, uint64_t now,
		      struct report_options *side)
{
	switch (k) {
	case TERM_SCAN:
		side->all = false;
		return parse_scan(value, side, "--compare term", term);
	case TERM_BOOT:
		return parse_boot(value, side, "--compare term", term);
	case TERM_HOST:
		side->host = value;
		return 0;
	case TERM_FIRMWARE:
		side->firmware = value;
		return 0;
	case TERM_PRODUCT:
		side->product = value;
		return 0;
	case TERM_SINCE:
		side->have_since = true;
		side->since_arg = value;
		return parse_time_arg(value, now, &side->since_ns, "--compare term", term);
	case TERM_UNTIL:
		side->have_until = true;
		side->until_arg = value;
		return parse_time_arg(value, now, &side->until_ns, "--compare term", term);
	case TERM_CPU:
	case N_COMPARE_KEYS:
		break;
	}
	return parse_cpus(value, side, "--compare term", term);
}

static int parse_compare_side(const char *arg, uint64_t now, struct report_options *side,
			      char **buf)
{
	bool seen[N_COMPARE_KEYS] = { false };
	char *term, *next, why[160];
	int r;

	*buf = strdup(arg);
	if (!*buf)
		return -ENOMEM;
	/* Each side picks its scans: every scan of the journal unless scan:. */
	side->all = true;
	if (!arg[0])
		return usage_error("invalid --compare selection '%s'", arg,
				   "expected terms such as host:NAME or scan:ID, joined by commas");
	for (term = *buf; term; term = next) {
		const char *value;
		int k;

		/* The next comma before a key ends this term. */
		for (next = strchr(term, ','); next && compare_key(next + 1) < 0;
		     next = strchr(next + 1, ','))
			;
		if (next)
			*next++ = '\0';
		k = compare_key(term);
		if (k < 0)
			return invalid("--compare term", term, TERM_EXPECTED);
		value = term + strlen(compare_keys[k]) + 1;
		if (seen[k]) {
			snprintf(why, sizeof(why), "%s: is given twice in '%s'", compare_keys[k],
				 arg);
			return invalid("--compare term", term, why);
		}
		seen[k] = true;
		if (!value[0])
			return invalid("--compare term", term, "the value after ':' is empty");
		r = apply_term((enum term_key)k, term, value, now, side);
		if (r < 0)
			return r;
	}
	if (side->have_since && side->have_until && side->since_ns > side->until_ns)
		return usage_error("--compare selection '%s': its since is after its until", arg,
				   NULL);
	/* Machine identity comes with the summary, at the end of a scan: keep
	 * the statistics per scan until it is known which scans belong. */
	if (side->host || side->firmware || side->product)
		side->by = GROUP_SCAN;
	return 0;
}

/*
 * The options into o and a, each value checked as it comes. Returns 1 to
 * go on, 0 to exit successfully (--help, --version), -EINVAL on misuse
 * (said), -ENOMEM.
 */
static int parse_args(int argc, char **argv, struct report_options *o, struct args *a)
{
	static const struct option longopts[] = {
		{ "directory", required_argument, NULL, 'D' },
		{ "file", required_argument, NULL, ARG_FILE },
		{ "scan", required_argument, NULL, ARG_SCAN },
		{ "all", no_argument, NULL, 'a' },
		{ "boot", optional_argument, NULL, 'b' },
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "by", required_argument, NULL, ARG_BY },
		{ "histogram", no_argument, NULL, 'H' },
		{ "bucket-size", required_argument, NULL, ARG_BUCKET_SIZE },
		{ "entries", required_argument, NULL, ARG_ENTRIES },
		{ "json", no_argument, NULL, 'j' },
		{ "csv", no_argument, NULL, ARG_CSV },
		{ "svg", required_argument, NULL, ARG_SVG },
		{ "hardlimit", required_argument, NULL, ARG_HARDLIMIT },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{ "fail-if", required_argument, NULL, ARG_FAIL_IF },
		{ "percentiles", required_argument, NULL, ARG_PERCENTILES },
		{ "color", optional_argument, NULL, ARG_COLOR },
		{ "utc", no_argument, NULL, ARG_UTC },
		{ "list-scans", no_argument, NULL, ARG_LIST_SCANS },
		{ "openmetrics", no_argument, NULL, ARG_OPENMETRICS },
		{ "compare", required_argument, NULL, ARG_COMPARE },
		{}
	};
	char why[256];
	int c, r;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":D:ab::S:U:c:Hjh", longopts, NULL)) != -1) {
		switch (c) {
		case 'D':
			if (o->directory)
				return usage_error("--directory given twice (%s)", optarg, NULL);
			o->directory = optarg;
			a->given |= OPT(DIRECTORY);
			break;
		case ARG_FILE: {
			char **f = realloc(o->files, (o->n_files + 2) * sizeof(*f));

			if (!f)
				return -ENOMEM;
			o->files = f;
			o->files[o->n_files++] = optarg;
			o->files[o->n_files] = NULL;
			a->given |= OPT(FILE);
			break;
		}
		case ARG_SCAN:
			r = parse_scan(optarg, o, "--scan", optarg);
			if (r < 0)
				return r;
			a->given |= OPT(SCAN);
			break;
		case 'a':
			o->all = true;
			a->given |= OPT(ALL);
			break;
		case 'b': {
			const char *arg = optarg;
			int64_t offset;
			char id[ID128_LEN + 1];

			/* "--boot ID" and "--boot -1" as well as "--boot=ID", like
			 * journalctl. */
			if (!arg && optind < argc &&
			    (parse_boot_offset(argv[optind], &offset) ||
			     (argv[optind][0] != '-' && normalize_id128(argv[optind], id) == 0)))
				arg = argv[optind++];
			r = parse_boot(arg, o, "--boot", arg);
			if (r < 0)
				return r;
			break;
		}
		case 'S':
			/* Read after every option: --utc changes what it means. */
			o->have_since = true;
			o->since_arg = optarg;
			break;
		case 'U':
			o->have_until = true;
			o->until_arg = optarg;
			break;
		case 'c':
			r = parse_cpus(optarg, o, "--cpu", optarg);
			if (r < 0)
				return r;
			a->given |= OPT(CPU);
			break;
		case ARG_BY:
			if (a->by_arg) {
				snprintf(why, sizeof(why), "--by given twice ('%s' and '%s'): "
					 "statistics are grouped one way", a->by_arg, optarg);
				return usage_error("%s", why, NULL);
			}
			a->by_arg = optarg;
			if (group_by_from_name(optarg, &o->by) < 0)
				return usage_error(
				    "invalid --by '%s'", optarg,
				    "expected cpu, scan, boot, host, firmware or product");
			a->given |= OPT(BY);
			break;
		case 'H':
			o->histogram = true;
			a->given |= OPT(HISTOGRAM);
			break;
		case ARG_BUCKET_SIZE:
			r = parse_time_span(optarg, NSEC_PER_USEC, &o->bucket_ns);
			if (r < 0 || o->bucket_ns == 0 || o->bucket_ns > MAX_BUCKET_NS)
				return usage_error(
				    "invalid --bucket-size '%s'", optarg,
				    "expected a time span from 1ns to 1000s, e.g. 10us");
			a->given |= OPT(BUCKET);
			break;
		case ARG_ENTRIES: {
			uint64_t v;

			if (parse_u64(optarg, &v) < 0 || v == 0 || v > STATS_LINEAR_MAX)
				return usage_error("invalid --entries '%s'", optarg,
						   "expected a number of buckets from 1 to 100000");
			o->entries = (size_t)v;
			a->given |= OPT(ENTRIES);
			break;
		}
		case 'j':
			a->given |= OPT(JSON);
			break;
		case ARG_CSV:
			a->given |= OPT(CSV);
			break;
		case ARG_SVG:
			if (!*optarg)
				return usage_error("invalid --svg '%s'", optarg, "empty file name");
			o->svg_path = optarg;
			a->given |= OPT(SVG);
			break;
		case ARG_HARDLIMIT:
			r = parse_time_span(optarg, NSEC_PER_USEC, &o->hardlimit_ns);
			if (r < 0 || o->hardlimit_ns == 0)
				return usage_error(
				    "invalid --hardlimit '%s'", optarg,
				    "expected a positive time span, e.g. 100us or 2ms");
			o->have_hardlimit = true;
			a->given |= OPT(HARDLIMIT);
			break;
		case ARG_FAIL_IF:
			r = gate_parse(optarg, &o->gates, why, sizeof(why));
			if (r < 0)
				return usage_error("invalid --fail-if '%s'", optarg, why);
			a->given |= OPT(FAIL_IF);
			break;
		case ARG_PERCENTILES:
			r = parse_percentile_list(optarg, o);
			if (r < 0)
				return r;
			a->given |= OPT(PERCENTILES);
			break;
		case ARG_COLOR:
			a->color = optarg ? optarg : "always";
			if (strcmp(a->color, "auto") != 0 && strcmp(a->color, "always") != 0 &&
			    strcmp(a->color, "never") != 0)
				return usage_error("invalid --color '%s'", a->color,
						   "expected auto, always or never");
			break;
		case ARG_UTC:
			a->utc = true;
			break;
		case ARG_LIST_SCANS:
			o->list_scans = true;
			a->given |= OPT(LIST_SCANS);
			break;
		case ARG_OPENMETRICS:
			a->given |= OPT(OPENMETRICS);
			break;
		case ARG_COMPARE:
			if (o->compare[0])
				return usage_error("%s", "--compare given twice: it compares two "
						   "selections", NULL);
			/* "--compare A B": B is the next argument. */
			if (optind >= argc)
				return usage_error("%s",
						   "--compare needs two selections, A and B "
						   "(e.g. --compare firmware:1.0 firmware:2.0)",
						   NULL);
			o->compare[0] = optarg;
			o->compare[1] = argv[optind++];
			a->given |= OPT(COMPARE);
			break;
		case 'h':
			help();
			return 0;
		case ARG_VERSION:
			printf("hwlat-report %s\n", PACKAGE_VERSION);
			return 0;
		case ':':
			return usage_error("option '%s' needs an argument", argv[optind - 1], NULL);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1], NULL);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind], NULL);
	return 1;
}

/*
 * Which options combine: when opt is given, every option of needs must be
 * too, and none of excludes may be. The message says why; with each_named,
 * it names the first excluded option given (its %s) and why follows it.
 * Checked in this order: the first rule broken is the one said.
 */
static const struct option_rule {
	enum opt opt;
	uint32_t needs, excludes;
	const char *message;
	const char *why; /* each_named: after the option's name */
} option_rules[] = {
	{ OPT_ENTRIES, .needs = OPT(BUCKET),
	  .message = "--entries counts linear buckets: it needs --bucket-size" },
	{ OPT_DIRECTORY, .excludes = OPT(FILE),
	  .message = "--directory and --file exclude each other" },
	{ OPT_SCAN, .excludes = OPT(ALL), .message = "--scan and --all exclude each other" },
	{ OPT_JSON, .excludes = OPT(CSV), .message = "--json and --csv exclude each other" },
	{ OPT_CSV,
	  .excludes = OPT(HISTOGRAM) | OPT(BUCKET) | OPT(SVG) | OPT(HARDLIMIT) | OPT(BY) |
		      OPT(FAIL_IF) | OPT(PERCENTILES),
	  .message = "--csv prints raw samples only; it takes no --histogram, --bucket-size, "
		     "--svg, --hardlimit, --fail-if, --percentiles or --by" },
	{ OPT_OPENMETRICS,
	  .excludes = OPT(JSON) | OPT(CSV) | OPT(HISTOGRAM) | OPT(BUCKET) | OPT(SVG) |
		      OPT(HARDLIMIT) | OPT(BY) | OPT(FAIL_IF) | OPT(LIST_SCANS),
	  .message = "--openmetrics prints the metrics only; it takes no --json, --csv, "
		     "--histogram, --bucket-size, --svg, --hardlimit, --fail-if, --by or "
		     "--list-scans" },
	/* The comparison prints its own table of two selections. */
	{ OPT_COMPARE,
	  .excludes = OPT(CSV) | OPT(OPENMETRICS) | OPT(LIST_SCANS) | OPT(BY) | OPT(HISTOGRAM) |
		      OPT(BUCKET) | OPT(ENTRIES) | OPT(HARDLIMIT) | OPT(FAIL_IF) | OPT(SCAN) |
		      OPT(ALL),
	  .message = "--compare does not take %s",
	  .why = "it prints two selections side by side; choose them with terms such as "
		 "scan:ID or host:NAME" },
	{ OPT_LIST_SCANS,
	  .excludes = OPT(CSV) | OPT(HISTOGRAM) | OPT(BUCKET) | OPT(SVG) | OPT(HARDLIMIT) |
		      OPT(BY) | OPT(FAIL_IF) | OPT(PERCENTILES) | OPT(CPU) | OPT(SCAN) | OPT(ALL),
	  .message = "--list-scans lists every scan (of --boot, --since and --until if given); "
		     "it takes no other selection or report option" },
};

/* The first rule the options given break, said; 0 when they break none. */
static int check_option_rules(uint32_t given)
{
	for (size_t i = 0; i < ELEMENTSOF(option_rules); i++) {
		const struct option_rule *rule = &option_rules[i];
		uint32_t clash = given & rule->excludes;

		if (!(given & (1u << rule->opt)))
			continue;
		if ((given & rule->needs) != rule->needs)
			return usage_error("%s", rule->message, NULL);
		if (!clash)
			continue;
		if (!rule->why)
			return usage_error("%s", rule->message, NULL);
		for (int o = 0; o < N_OPTS; o++)
			if (clash & (1u << o))
				return usage_error(rule->message, opt_names[o], rule->why);
	}
	return 0;
}

/* --utc: every time is read and shown in UTC from here on. */
static int use_utc(bool utc)
{
	if (!utc)
		return 0;
	if (setenv("TZ", "UTC", 1) < 0)
		return log_error_errno(-errno, "cannot set TZ=UTC for --utc");
	tzset();
	return 0;
}

/*
 * Colour for the text report on a terminal, unless NO_COLOR says no;
 * asked for by name (--color=always), NO_COLOR yields to it.
 */
static bool use_color(enum output_mode mode, const char *color)
{
	const char *no_color = getenv("NO_COLOR");

	if (mode != OUTPUT_TEXT || strcmp(color, "never") == 0)
		return false;
	if (strcmp(color, "always") == 0)
		return true;
	return isatty(STDOUT_FILENO) && !(no_color && *no_color);
}

/* --since and --until, in the zone --utc chose. */
static int read_times(struct report_options *o, uint64_t now)
{
	int r;

	if (o->have_since) {
		r = parse_time_arg(o->since_arg, now, &o->since_ns, "--since", o->since_arg);
		if (r < 0)
			return r;
	}
	if (o->have_until) {
		r = parse_time_arg(o->until_arg, now, &o->until_ns, "--until", o->until_arg);
		if (r < 0)
			return r;
	}
	return 0;
}

/* What the options given imply, once they are known to combine. */
static int settle_options(struct report_options *o, const struct args *a)
{
	static const double default_percentiles[] = { 50, 90, 99, 99.9 };

	if (!(a->given & OPT(PERCENTILES))) {
		memcpy(o->percentiles, default_percentiles, sizeof(default_percentiles));
		o->n_percentiles = ELEMENTSOF(default_percentiles);
	}
	/* A linear bucket size is asked for to be seen. */
	if (a->given & OPT(BUCKET))
		o->histogram = true;
	if (o->have_since && o->have_until && o->since_ns > o->until_ns)
		return usage_error("--since %s is after --until", o->since_arg, NULL);
	o->mode = a->given & OPT(JSON)	      ? OUTPUT_JSON :
		  a->given & OPT(CSV)	      ? OUTPUT_CSV :
		  a->given & OPT(OPENMETRICS) ? OUTPUT_OPENMETRICS :
						OUTPUT_TEXT;
	o->color = use_color(o->mode, a->color);
	return 0;
}

int report_options_parse(int argc, char **argv, uint64_t now, struct report_options *o,
			 struct report_options sides[2], char *side_bufs[2])
{
	struct args a = { .color = "auto" };
	int r;

	r = parse_args(argc, argv, o, &a);
	if (r <= 0)
		return r;
	r = use_utc(a.utc);
	if (r >= 0)
		r = read_times(o, now);
	if (r >= 0)
		r = check_option_rules(a.given);
	if (r >= 0)
		r = settle_options(o, &a);
	/* The common options hold for both sides of --compare; the terms add to them. */
	for (size_t i = 0; r >= 0 && o->compare[0] && i < 2; i++) {
		sides[i] = *o;
		r = parse_compare_side(o->compare[i], now, &sides[i], &side_bufs[i]);
	}
	return r < 0 ? r : 1;
}
