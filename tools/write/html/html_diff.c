// SPDX-License-Identifier: MIT
/* The report page's comparison with a base run (cuptrace report --base):
 * the verdict of cuptrace diff and its tables, the rows that changed most
 * first, cut to the first HTML_DIFF_ROWS of each. */
#include "write/html/html.h"

#define HTML_DIFF_ROWS 25

void html_diff(FILE *f, const char *base, const char *verdict, struct table *const *t, size_t n)
{
	fputs("<p>Compared with the base run <code>", f);
	html_esc(f, base);
	fputs("</code> as <code>cuptrace diff</code> compares (docs/cuptrace-diff.md): totals per "
	      "rank, medians, the Mann-Whitney U test of the instances.</p>\n<p "
	      "class=\"verdict\"><b>",
	      f);
	html_esc(f, verdict);
	fputs("</b></p>\n", f);
	size_t rows[HTML_DIFF_ROWS];
	for (size_t i = 0; i < HTML_DIFF_ROWS; i++)
		rows[i] = i;
	for (size_t i = 0; i < n; i++) {
		size_t k = table_nrows(t[i]);
		html_table(f, t[i], rows, k < HTML_DIFF_ROWS ? k : HTML_DIFF_ROWS);
	}
	if (!n)
		html_none(f, "no report table to compare");
}
