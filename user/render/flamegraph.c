// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Folded stacks and the SVG flame graph. The SVG follows the layout of
 * Brendan Gregg's flamegraph.pl (one box per frame, width proportional to
 * weight, root at the bottom, <title> tooltips) and carries its own small
 * script for click-to-zoom and search, so the file works on its own in a
 * browser.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "flamegraph.h"

#define FONT_SIZE    12
#define FONT_WIDTH   0.59 /* average character width, in font sizes */
#define FRAME_HEIGHT 16
#define XPAD	     10
#define YPAD_TOP     (FONT_SIZE * 3)
#define YPAD_BOTTOM  (FONT_SIZE * 2 + 10)
#define MIN_WIDTH    0.1 /* pixels: narrower frames (and their children) are left out */

struct node {
	const char *name; /* not NUL-terminated: points into a folded line */
	size_t len;
	__u64 weight;
	struct node *child, *last, *sibling;
};

/* Frame-wise order: ';' sorts before any character a frame may contain. */
static int stack_cmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		unsigned char x = *a == ';' ? 1 : (unsigned char)*a;
		unsigned char y = *b == ';' ? 1 : (unsigned char)*b;

		if (x != y || !x)
			return x - y;
	}
}

static int folded_cmp(const void *a, const void *b)
{
	return stack_cmp(((const struct folded *)a)->stack, ((const struct folded *)b)->stack);
}

size_t folded__merge(struct folded *lines, size_t n)
{
	size_t i, out = 0;

	if (!n)
		return 0;
	qsort(lines, n, sizeof(*lines), folded_cmp);
	for (i = 1; i < n; i++) {
		if (!strcmp(lines[out].stack, lines[i].stack)) {
			lines[out].weight += lines[i].weight;
			free(lines[i].stack);
			continue;
		}
		lines[++out] = lines[i];
	}
	return out + 1;
}

int folded__write(FILE *f, const struct folded *lines, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (lines[i].weight)
			fprintf(f, "%s %llu\n", lines[i].stack,
				(unsigned long long)lines[i].weight);
	return ferror(f) ? -EIO : 0;
}

static void node_free(struct node *n)
{
	while (n) {
		struct node *next = n->sibling;

		node_free(n->child);
		free(n);
		n = next;
	}
}

/* Lines are sorted frame-wise, so a frame's children come in order. */
static int tree_add(struct node *root, const char *stack, __u64 weight)
{
	struct node *parent = root;
	const char *p = stack;

	root->weight += weight;
	while (*p) {
		size_t len = strcspn(p, ";");
		struct node *c = parent->last;

		if (!c || c->len != len || memcmp(c->name, p, len)) {
			c = calloc(1, sizeof(*c));
			if (!c)
				return -ENOMEM;
			c->name = p;
			c->len = len;
			if (parent->last)
				parent->last->sibling = c;
			else
				parent->child = c;
			parent->last = c;
		}
		c->weight += weight;
		parent = c;
		p += len;
		if (*p == ';')
			p++;
	}
	return 0;
}

static int max_depth(const struct node *n, int depth, double px_per_weight)
{
	int d = depth, cd;

	for (n = n->child; n; n = n->sibling) {
		if (n->weight * px_per_weight < MIN_WIDTH)
			continue;
		cd = max_depth(n, depth + 1, px_per_weight);
		if (cd > d)
			d = cd;
	}
	return d;
}

/* XML text: markup characters escaped, control and non-ASCII bytes as '?'. */
static void xml_write(FILE *f, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			fputc(c < 0x20 || c >= 0x7f ? '?' : c, f);
		}
	}
}

/* 1234567 -> "1,234,567" */
static const char *thousands(__u64 v, char *buf, size_t len)
{
	char tmp[32];
	size_t n, i, o = 0;

	n = (size_t)snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
	for (i = 0; i < n && o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

static unsigned int name_hash(const char *s, size_t len)
{
	unsigned int h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/* Reds for user code, orange-yellow for the kernel, grey for the unknown. */
static void frame_color(const struct node *n, int depth, char *buf, size_t len)
{
	unsigned int h = name_hash(n->name, n->len);
	double v1 = (h & 0xff) / 255.0, v2 = ((h >> 8) & 0xff) / 255.0;

	if (depth == 0)
		snprintf(buf, len, "rgb(200,200,200)");
	else if (n->len >= 4 && !memcmp(n->name + n->len - 4, "_[k]", 4))
		snprintf(buf, len, "rgb(%d,%d,%d)", 235 + (int)(20 * v1), 150 + (int)(60 * v2),
			 (int)(50 * v1));
	else if (n->len == 9 && !memcmp(n->name, "[unknown]", 9))
		snprintf(buf, len, "rgb(%d,%d,%d)", 160 + (int)(30 * v1), 160 + (int)(30 * v1),
			 160 + (int)(30 * v1));
	else
		snprintf(buf, len, "rgb(%d,%d,%d)", 200 + (int)(55 * v1), 40 + (int)(80 * v2),
			 40 + (int)(40 * v1));
}

struct draw {
	FILE *f;
	double px;
	int height;
	__u64 total;
	const char *units;
};

static void draw(struct draw *d, const struct node *n, int depth, __u64 start)
{
	double x = XPAD + start * d->px, w = n->weight * d->px;
	double y = d->height - YPAD_BOTTOM - (depth + 1) * FRAME_HEIGHT + 1;
	const struct node *c;
	size_t chars;
	char color[48], num[32];

	if (w < MIN_WIDTH)
		return;
	frame_color(n, depth, color, sizeof(color));
	fputs("<g><title>", d->f);
	xml_write(d->f, n->name, n->len);
	fprintf(d->f, " (%s %s, %.2f%%)</title>", thousands(n->weight, num, sizeof(num)), d->units,
		100.0 * n->weight / d->total);
	fprintf(d->f,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\" rx=\"2\" ry=\"2\"/>",
		x, y, w, FRAME_HEIGHT - 1, color);
	fprintf(d->f, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + 10.5);
	chars = (size_t)((w - 3) / (FONT_SIZE * FONT_WIDTH));
	if (chars >= 3) {
		if (n->len <= chars) {
			xml_write(d->f, n->name, n->len);
		} else {
			xml_write(d->f, n->name, chars - 2);
			fputs("..", d->f);
		}
	}
	fputs("</text></g>\n", d->f);

	for (c = n->child; c; c = c->sibling) {
		draw(d, c, depth + 1, start);
		start += c->weight;
	}
}

static const char script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"'use strict';\n"
	"var frames, details, unzoombtn, searchbtn, matchedtxt, svgw, fw = 12 * 0.59;\n"
	"var G = [], OX = [], OW = [], OY = [], NAME = [], FILL = [], searching = false;\n"
	"function init(evt) {\n"
	"  frames = document.getElementById('frames');\n"
	"  details = document.getElementById('details').firstChild;\n"
	"  unzoombtn = document.getElementById('unzoom');\n"
	"  searchbtn = document.getElementById('search');\n"
	"  matchedtxt = document.getElementById('matched');\n"
	"  svgw = parseFloat(document.documentElement.getAttribute('width'));\n"
	"  var gs = frames.getElementsByTagName('g');\n"
	"  for (var i = 0; i < gs.length; i++) {\n"
	"    var r = gs[i].getElementsByTagName('rect')[0];\n"
	"    var t = gs[i].getElementsByTagName('title')[0].textContent;\n"
	"    G.push(gs[i]); OX.push(parseFloat(r.getAttribute('x')));\n"
	"    OW.push(parseFloat(r.getAttribute('width'))); OY.push(parseFloat(r.getAttribute('y')));\n"
	"    NAME.push(t.substring(0, t.lastIndexOf(' ('))); FILL.push(r.getAttribute('fill'));\n"
	"    gs[i].setAttribute('data-i', i);\n"
	"  }\n"
	"  frames.addEventListener('click', function (e) {\n"
	"    var g = frame_of(e.target); if (g) zoom(+g.getAttribute('data-i'));\n"
	"  });\n"
	"  frames.addEventListener('mouseover', function (e) {\n"
	"    var g = frame_of(e.target);\n"
	"    if (g) details.nodeValue = g.getElementsByTagName('title')[0].textContent;\n"
	"  });\n"
	"  frames.addEventListener('mouseout', function () { details.nodeValue = ' '; });\n"
	"  window.addEventListener('keydown', function (e) {\n"
	"    if (e.keyCode === 114 || ((e.ctrlKey || e.metaKey) && e.keyCode === 70)) {\n"
	"      e.preventDefault(); search_prompt();\n"
	"    }\n"
	"  });\n"
	"}\n"
	"function frame_of(el) {\n"
	"  while (el && el !== frames) {\n"
	"    if (el.tagName === 'g') return el;\n"
	"    el = el.parentNode;\n"
	"  }\n"
	"  return null;\n"
	"}\n"
	"function place(i, x, w) {\n"
	"  var g = G[i], r = g.getElementsByTagName('rect')[0], t = g.getElementsByTagName('text')[0];\n"
	"  r.setAttribute('x', x); r.setAttribute('width', w); t.setAttribute('x', x + 3);\n"
	"  var n = Math.floor((w - 3) / fw), s = NAME[i];\n"
	"  t.textContent = n < 3 ? '' : (s.length <= n ? s : s.substring(0, n - 2) + '..');\n"
	"}\n"
	"function zoom(k) {\n"
	"  var x = OX[k], w = OW[k], y = OY[k], full = svgw - 20, scale = full / w, eps = 1e-3;\n"
	"  unzoombtn.classList.remove('hide');\n"
	"  for (var i = 0; i < G.length; i++) {\n"
	"    var inside = OX[i] >= x - eps && OX[i] + OW[i] <= x + w + eps;\n"
	"    var covers = OX[i] <= x + eps && OX[i] + OW[i] >= x + w - eps;\n"
	"    G[i].classList.remove('parent'); G[i].classList.remove('hide');\n"
	"    if (OY[i] > y + eps && covers) {\n"
	"      G[i].classList.add('parent'); place(i, 10, full);\n"
	"    } else if (OY[i] <= y + eps && inside) {\n"
	"      place(i, 10 + (OX[i] - x) * scale, OW[i] * scale);\n"
	"    } else {\n"
	"      G[i].classList.add('hide');\n"
	"    }\n"
	"  }\n"
	"}\n"
	"function unzoom() {\n"
	"  unzoombtn.classList.add('hide');\n"
	"  for (var i = 0; i < G.length; i++) {\n"
	"    G[i].classList.remove('parent'); G[i].classList.remove('hide');\n"
	"    place(i, OX[i], OW[i]);\n"
	"  }\n"
	"}\n"
	"function reset_search() {\n"
	"  for (var i = 0; i < G.length; i++)\n"
	"    G[i].getElementsByTagName('rect')[0].setAttribute('fill', FILL[i]);\n"
	"  matchedtxt.classList.add('hide'); searchbtn.classList.remove('show');\n"
	"  searching = false;\n"
	"}\n"
	"function search_prompt() {\n"
	"  if (searching) { reset_search(); return; }\n"
	"  var term = prompt('Search for a frame (a regular expression, e.g. ^do_page_fault)', '');\n"
	"  if (term) search(term);\n"
	"}\n"
	"function search(term) {\n"
	"  var re;\n"
	"  try { re = new RegExp(term); } catch (e) { alert(e); return; }\n"
	"  var spans = [];\n"
	"  for (var i = 0; i < G.length; i++) {\n"
	"    if (!re.test(NAME[i])) continue;\n"
	"    G[i].getElementsByTagName('rect')[0].setAttribute('fill', 'rgb(230,0,230)');\n"
	"    spans.push([OX[i], OX[i] + OW[i]]);\n"
	"  }\n"
	"  searching = true; searchbtn.classList.add('show');\n"
	"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
	"  var covered = 0, end = -1;\n"
	"  for (var j = 0; j < spans.length; j++) {\n"
	"    if (spans[j][0] >= end) { covered += spans[j][1] - spans[j][0]; end = spans[j][1]; }\n"
	"    else if (spans[j][1] > end) { covered += spans[j][1] - end; end = spans[j][1]; }\n"
	"  }\n"
	"  var total = OW.length ? OW[0] : 1;\n"
	"  matchedtxt.firstChild.nodeValue = 'Matched: ' + (100 * covered / total).toFixed(1) + '%';\n"
	"  matchedtxt.classList.remove('hide');\n"
	"}\n"
	"]]></script>\n";

static const char style[] =
	"<style type=\"text/css\">\n"
	"text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
	"#title { text-anchor: middle; font-size: 17px; }\n"
	"#subtitle { text-anchor: middle; fill: rgb(80,80,80); }\n"
	"#search, #unzoom { cursor: pointer; }\n"
	"#search.show { fill: rgb(230,0,230); }\n"
	"#matched { text-anchor: end; }\n"
	"#frames > g { cursor: pointer; }\n"
	"#frames > g:hover > rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
	".hide { display: none; }\n"
	".parent { opacity: 0.5; }\n"
	"</style>\n";

int flamegraph__write(FILE *f, const struct folded *lines, size_t n, const struct flame_opts *o)
{
	struct node root = { .name = "all", .len = 3 };
	struct draw d = { .f = f, .units = o->units };
	int width = o->width ? o->width : 1200, depth, err = 0;
	size_t i;

	for (i = 0; i < n && !err; i++)
		if (lines[i].weight)
			err = tree_add(&root, lines[i].stack, lines[i].weight);
	if (err)
		goto out;

	d.total = root.weight ? root.weight : 1;
	d.px = (double)(width - 2 * XPAD) / d.total;
	depth = max_depth(&root, 0, d.px);
	d.height = (depth + 1) * FRAME_HEIGHT + YPAD_TOP + YPAD_BOTTOM +
		   (o->subtitle ? FONT_SIZE * 2 : 0);

	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		   "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
		   "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n");
	fprintf(f,
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" onload=\"init(evt)\" "
		"viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\" "
		"xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n",
		width, d.height, width, d.height);
	fputs("<!-- Flame graph by pmbpf profile. Click a frame to zoom, Ctrl-F to search. -->\n",
	      f);
	fputs("<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
	      "<stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop stop-color=\"#eeeeb0\" offset=\"95%\"/>"
	      "</linearGradient></defs>\n",
	      f);
	fputs(style, f);
	fputs(script, f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"url(#background)\"/>\n",
		width, d.height);
	fprintf(f, "<text id=\"title\" x=\"%d\" y=\"%d\">", width / 2, FONT_SIZE * 2);
	xml_write(f, o->title, strlen(o->title));
	fputs("</text>\n", f);
	if (o->subtitle) {
		fprintf(f, "<text id=\"subtitle\" x=\"%d\" y=\"%d\">", width / 2, FONT_SIZE * 4);
		xml_write(f, o->subtitle, strlen(o->subtitle));
		fputs("</text>\n", f);
	}
	fprintf(f, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", XPAD, d.height - FONT_SIZE);
	fprintf(f,
		"<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"%d\" onclick=\"unzoom()\">Reset Zoom</text>\n",
		XPAD, FONT_SIZE * 2);
	fprintf(f,
		"<text id=\"search\" x=\"%d\" y=\"%d\" onclick=\"search_prompt()\">Search</text>\n",
		width - XPAD - 100, FONT_SIZE * 2);
	fprintf(f, "<text id=\"matched\" class=\"hide\" x=\"%d\" y=\"%d\"> </text>\n", width - XPAD,
		d.height - FONT_SIZE);
	fputs("<g id=\"frames\">\n", f);
	if (root.weight)
		draw(&d, &root, 0, 0);
	fputs("</g>\n</svg>\n", f);
	if (ferror(f))
		err = -EIO;
out:
	node_free(root.child);
	return err;
}
