// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <math.h>
#include "json_writer.h"

int utf8_len(const unsigned char *p)
{
	int n, i;
	unsigned int cp;

	if (*p < 0x80)
		return 1;
	if ((*p & 0xe0) == 0xc0) {
		n = 2;
		cp = *p & 0x1f;
	} else if ((*p & 0xf0) == 0xe0) {
		n = 3;
		cp = *p & 0x0f;
	} else if ((*p & 0xf8) == 0xf0) {
		n = 4;
		cp = *p & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Command names are cut at 15 bytes by the kernel, often mid-character. */
void json_escape(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		if (*p >= 0x80) {
			int n = utf8_len(p);

			if (!n) {
				fputs("\\ufffd", f);
				continue;
			}
			fwrite(p, 1, n, f);
			p += n - 1;
			continue;
		}
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

void jw_init(struct json_writer *w, FILE *f)
{
	w->f = f;
	w->depth = 0;
	w->need_comma[0] = false;
}

static void value_prefix(struct json_writer *w)
{
	if (w->need_comma[w->depth])
		fputc(',', w->f);
	w->need_comma[w->depth] = true;
}

void jw_key(struct json_writer *w, const char *key)
{
	value_prefix(w);
	json_escape(w->f, key);
	fputc(':', w->f);
	/* the value that follows must not add a comma */
	w->need_comma[w->depth] = false;
}

static void after_value(struct json_writer *w)
{
	w->need_comma[w->depth] = true;
}

static void open_container(struct json_writer *w, char c)
{
	value_prefix(w);
	fputc(c, w->f);
	if (w->depth < JW_MAX_DEPTH - 1)
		w->depth++;
	w->need_comma[w->depth] = false;
}

static void close_container(struct json_writer *w, char c)
{
	fputc(c, w->f);
	if (w->depth > 0)
		w->depth--;
	after_value(w);
	if (w->depth == 0)
		w->need_comma[0] = false;
}

void jw_start_object(struct json_writer *w)
{
	open_container(w, '{');
}

void jw_end_object(struct json_writer *w)
{
	close_container(w, '}');
}

void jw_start_array(struct json_writer *w)
{
	open_container(w, '[');
}

void jw_end_array(struct json_writer *w)
{
	close_container(w, ']');
}

void jw_string(struct json_writer *w, const char *s)
{
	value_prefix(w);
	json_escape(w->f, s ? s : "");
}

void jw_u64(struct json_writer *w, __u64 v)
{
	value_prefix(w);
	fprintf(w->f, "%llu", (unsigned long long)v);
}

void jw_s64(struct json_writer *w, long long v)
{
	value_prefix(w);
	fprintf(w->f, "%lld", v);
}

void jw_double(struct json_writer *w, double v, int decimals)
{
	value_prefix(w);
	if (!isfinite(v))
		fputs("null", w->f);
	else
		fprintf(w->f, "%.*f", decimals, v);
}

void jw_bool(struct json_writer *w, bool v)
{
	value_prefix(w);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct json_writer *w)
{
	value_prefix(w);
	fputs("null", w->f);
}
