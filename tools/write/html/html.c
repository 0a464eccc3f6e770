// SPDX-License-Identifier: MIT
/* HTML text, tables, style and script of the report page (html.h). */
#include "write/html/html.h"
#include "util/utf8.h"

#include <string.h>

/* Code points HTML text may not hold though UTF-8 can: C1 controls
 * (U+0080-009F) and the noncharacters (U+FDD0-FDEF, U+xFFFE, U+xFFFF). */
static int not_html(const unsigned char *s, size_t n)
{
	unsigned cp = n == 2 ? (s[0] & 0x1fu) << 6 | (s[1] & 0x3fu)
		    : n == 3 ? (s[0] & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu)
		    : n == 4 ? (s[0] & 0x07u) << 18 | (s[1] & 0x3fu) << 12 | (s[2] & 0x3fu) << 6 |
				   (s[3] & 0x3fu)
			     : s[0];
	return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0xfdd0 && cp <= 0xfdef) ||
	       (cp & 0xfffe) == 0xfffe;
}

void html_esc(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
	while (*p) {
		size_t n = utf8_seq(p, (size_t)(end - p));
		if (!n || (*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f || not_html(p, n)) {
			fputs(UTF8_REPLACEMENT, f); /* the HTML stays valid */
			p += n ? n : 1;
			continue;
		}
		if (*p == '&')
			fputs("&amp;", f);
		else if (*p == '<')
			fputs("&lt;", f);
		else if (*p == '>')
			fputs("&gt;", f);
		else if (*p == '"')
			fputs("&quot;", f);
		else
			fwrite(p, 1, n, f);
		p += n;
	}
}

void html_none(FILE *f, const char *why)
{
	fputs("<p class=\"none\">", f);
	html_esc(f, why);
	fputs("</p>\n", f);
}

void html_table(FILE *f, const struct table *t, const size_t *rows, size_t n)
{
	int nc = table_ncols(t);
	size_t all = table_nrows(t);
	if (!rows)
		n = all;
	fputs("<table class=\"t\" data-t=\"", f);
	html_esc(f, table_title(t));
	fputs("\"><caption>", f);
	html_esc(f, table_title(t));
	if (n < all)
		fprintf(f, " <span class=\"sub\">(%zu of %zu rows; all in cuptrace stats)</span>", n, all);
	fputs("</caption>\n<thead><tr>", f);
	for (int c = 0; c < nc; c++) {
		fputs("<th>", f);
		html_esc(f, table_col(t, c));
		fputs("</th>", f);
	}
	fputs("</tr></thead>\n<tbody>\n", f);
	for (size_t i = 0; i < n; i++) {
		size_t r = rows ? rows[i] : i;
		fprintf(f, "<tr data-r=\"%zu\">", r);
		for (int c = 0; c < nc; c++) {
			int kind;
			const char *s = table_cell(t, r, c, &kind);
			fputs(kind ? "<td class=\"n\">" : "<td>", f);
			html_esc(f, s);
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	const char *note = table_get_note(t);
	if (!all)
		html_none(f, note ? note : "(no rows)");
	else if (note) { /* what the figures leave out, as stats prints it */
		fputs("<p class=\"sub\">", f);
		html_esc(f, note);
		fputs("</p>\n", f);
	}
}

void html_head_assets(FILE *f)
{
	fputs("<style>\n"
	      "body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:0 16px;"
	      "color:#222;background:#fff}\n"
	      "h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;margin-top:28px}\n"
	      "h3{font-size:15px}\n"
	      "dl.hdr{display:grid;grid-template-columns:max-content auto;gap:2px 16px}\n"
	      "dl.hdr dt{font-weight:bold}dl.hdr dd{margin:0}\n"
	      ".bad{color:#c00;font-weight:bold}.none{color:#666;font-style:italic}\n"
	      "table.t{border-collapse:collapse;margin:8px 0;font-size:12px}\n"
	      "table.t caption{text-align:left;font-weight:bold;padding:4px 0}\n"
	      "table.t th{background:#eee;cursor:pointer;text-align:left;padding:2px 6px}\n"
	      "table.t td{border-top:1px solid #ddd;padding:2px 6px;max-width:420px;"
	      "overflow-wrap:anywhere}\n"
	      "table.t td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
	      ".sub{font-weight:normal;color:#666}\n"
	      "svg{display:block;margin:8px 0;max-width:100%;height:auto}"
	      "svg text{font:11px system-ui,sans-serif}\n"
	      ".legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;"
	      "vertical-align:middle}\n"
	      "pre{background:#f4f4f4;padding:8px}\n"
	      "</style>\n",
	      f);
}

/* Sorting a table by a click on its header: numbers as numbers, empty
 * cells last. The only script of the page; nothing is fetched. */
void html_script(FILE *f)
{
	fputs("<script>\n"
	      "document.querySelectorAll('table.t th').forEach(function(th){\n"
	      " th.addEventListener('click',function(){\n"
	      "  var tb=th.closest('table').tBodies[0],i=th.cellIndex,d=th.dataset.d==='1'?-1:1;\n"
	      "  th.dataset.d=d===1?'1':'0';\n"
	      "  var rs=Array.prototype.slice.call(tb.rows);\n"
	      "  rs.sort(function(a,b){var x=a.cells[i].textContent,y=b.cells[i].textContent;\n"
	      "   if(x===''||y==='')return (x==='')-(y==='');\n"
	      "   var p=parseFloat(x),q=parseFloat(y);\n"
	      "   if(!isNaN(p)&&!isNaN(q))return d*(p-q);return d*x.localeCompare(y);});\n"
	      "  rs.forEach(function(r){tb.appendChild(r);});});});\n"
	      "</script>\n",
	      f);
}
