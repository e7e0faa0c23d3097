// SPDX-License-Identifier: GPL-2.0-or-later
/* The histogram through the text/JSON printer; see histogram.h. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"
#include "print.h"

#define BAR_WIDTH 40
#define COLOR_BAR "\033[32m"
#define COLOR_OVER "\033[31m"
#define COLOR_OFF "\033[0m"

static void print_bar(uint64_t count, uint64_t largest, const char *color)
{
	unsigned n = (unsigned)((long double)count * BAR_WIDTH / (long double)largest);
	char bar[BAR_WIDTH + 1];

	if (n == 0 && count > 0)
		n = 1;
	memset(bar, '@', n);
	bar[n] = '\0';
	print_text(" |%s%s%s%*s|\n", color ? color : "", bar, color ? COLOR_OFF : "",
		   BAR_WIDTH - (int)n, "");
}

int print_histogram(const char *key, const char *title, const struct stats *st,
		    const struct report_options *o)
{
	_cleanup_free_ struct bucket *b = NULL;
	uint64_t largest = 0;
	int n;

	n = stats_buckets(st, &b);
	if (n < 0)
		return n;

	print_open_object(key);
	print_string("buckets", NULL, o->bucket_ns ? "linear" : "log2");
	if (o->bucket_ns)
		print_latency("bucket_size_ns", NULL, o->bucket_ns);
	print_text("\nHistogram of %s (%s buckets", title,
		   o->bucket_ns ? "linear" : "log2");
	if (o->bucket_ns)
		print_latency(NULL, " of %s", o->bucket_ns);
	print_u64(NULL, ", %" PRIu64 " samples):\n", st->n);
	if (n == 0)
		print_text("  (no samples)\n");

	for (int i = 0; i < n; i++)
		if (b[i].count > largest)
			largest = b[i].count;

	print_open_array("histogram");
	for (int i = 0; i < n; i++) {
		const char *color = NULL;
		bool over = o->have_hardlimit && b[i].high_ns > o->hardlimit_ns + 1;

		if (o->color)
			color = over ? COLOR_OVER : COLOR_BAR;
		print_open_object(NULL);
		/* Ten columns hold "1073.74 ms", the log2 bound above the longest
		 * width (1 s): every row's count and bar line up.
		 */
		print_latency("low_ns", "[%10s, ", b[i].low_ns);
		if (b[i].high_ns == UINT64_MAX) {
			print_null("high_ns", NULL);
			print_text("%10s)", "and up");
		} else {
			print_latency("high_ns", "%10s)", b[i].high_ns);
		}
		print_u64("count", " %10" PRIu64, b[i].count);
		print_close_object();
		print_bar(b[i].count, largest, color);
	}
	print_close_array();
	print_close_object();
	return 0;
}
