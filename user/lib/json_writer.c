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

/* Bytes written as they are: printable ASCII but '"' and '\\'. */
static inline bool plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

/*
 * The escape of the byte or UTF-8 sequence at p into dst (at most 6 bytes);
 * *n: the bytes of p it stands for. Command names are cut at 15 bytes by the
 * kernel, often mid-character: bad UTF-8 becomes U+FFFD.
 */
static size_t escape_one(char *dst, const unsigned char *p, int *n)
{
	static const char hex[] = "0123456789abcdef";

	*n = 1;
	if (*p >= 0x80) {
		int k = utf8_len(p);

		if (!k) {
			memcpy(dst, "\\ufffd", 6);
			return 6;
		}
		memcpy(dst, p, k);
		*n = k;
		return k;
	}
	switch (*p) {
	case '"':
		memcpy(dst, "\\\"", 2);
		return 2;
	case '\\':
		memcpy(dst, "\\\\", 2);
		return 2;
	case '\n':
		memcpy(dst, "\\n", 2);
		return 2;
	case '\r':
		memcpy(dst, "\\r", 2);
		return 2;
	case '\t':
		memcpy(dst, "\\t", 2);
		return 2;
	}
	if (*p < 0x20 || *p == 0x7f) {
		memcpy(dst, "\\u00", 4);
		dst[4] = hex[*p >> 4];
		dst[5] = hex[*p & 15];
		return 6;
	}
	*dst = *p;
	return 1;
}

size_t json_quote(char *dst, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = 0;
	int n;

	dst[len++] = '"';
	while (*p) {
		if (plain(*p)) {
			dst[len++] = *p++;
			continue;
		}
		len += escape_one(dst + len, p, &n);
		p += n;
	}
	dst[len++] = '"';
	return len;
}

static void put_string(struct outbuf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	outbuf__putc(b, '"');
	while (*p) {
		const unsigned char *q = p;

		while (plain(*q))
			q++;
		if (q > p) {
			outbuf__write(b, (const char *)p, q - p);
			p = q;
			continue;
		}
		b->len += escape_one(outbuf__room(b, 6), p, &n);
		p += n;
	}
	outbuf__putc(b, '"');
}

void json_escape(FILE *f, const char *s)
{
	struct outbuf b;

	outbuf__init(&b, f);
	put_string(&b, s);
	outbuf__flush(&b);
}

void jw_init(struct json_writer *w, FILE *f)
{
	outbuf__init(&w->out, f);
	w->depth = 0;
	w->need_comma[0] = false;
	w->lines = false;
}

void jw_init_lines(struct json_writer *w, FILE *f)
{
	jw_init(w, f);
	w->lines = true;
}

void jw_flush(struct json_writer *w)
{
	outbuf__flush(&w->out);
}

static void value_prefix(struct json_writer *w)
{
	if (w->need_comma[w->depth])
		outbuf__putc(&w->out, ',');
	w->need_comma[w->depth] = true;
}

/* After a value: the outermost one is complete, the stream gets it. */
static void after_value(struct json_writer *w)
{
	w->need_comma[w->depth] = true;
	if (w->depth)
		return;
	if (!w->lines) {
		outbuf__flush(&w->out);
		return;
	}
	outbuf__putc(&w->out, '\n');
	w->need_comma[0] = false;
}

void jw_key(struct json_writer *w, const char *key)
{
	value_prefix(w);
	put_string(&w->out, key);
	outbuf__putc(&w->out, ':');
	/* the value that follows must not add a comma */
	w->need_comma[w->depth] = false;
}

void jw_string_field(struct json_writer *w, const char *key, const char *s)
{
	jw_key(w, key);
	jw_string(w, s);
}

void jw_u64_field(struct json_writer *w, const char *key, __u64 v)
{
	jw_key(w, key);
	jw_u64(w, v);
}

void jw_double_field(struct json_writer *w, const char *key, double v, int decimals)
{
	jw_key(w, key);
	jw_double(w, v, decimals);
}

void jw_bool_field(struct json_writer *w, const char *key, bool v)
{
	jw_key(w, key);
	jw_bool(w, v);
}

void jw_key_raw(struct json_writer *w, const char *quoted, size_t len)
{
	value_prefix(w);
	outbuf__write(&w->out, quoted, len);
	outbuf__putc(&w->out, ':');
	w->need_comma[w->depth] = false;
}

struct outbuf *jw_fields_raw(struct json_writer *w)
{
	value_prefix(w);
	return &w->out;
}

static void open_container(struct json_writer *w, char c)
{
	value_prefix(w);
	outbuf__putc(&w->out, c);
	if (w->depth < JW_MAX_DEPTH - 1)
		w->depth++;
	w->need_comma[w->depth] = false;
}

static void close_container(struct json_writer *w, char c)
{
	outbuf__putc(&w->out, c);
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
	put_string(&w->out, s ? s : "");
	after_value(w);
}

void jw_u64(struct json_writer *w, __u64 v)
{
	value_prefix(w);
	outbuf__u64(&w->out, v);
	after_value(w);
}

void jw_s64(struct json_writer *w, long long v)
{
	value_prefix(w);
	outbuf__s64(&w->out, v);
	after_value(w);
}

void jw_double(struct json_writer *w, double v, int decimals)
{
	value_prefix(w);
	if (!isfinite(v))
		outbuf__write(&w->out, "null", 4);
	else
		outbuf__fixed(&w->out, v, decimals);
	after_value(w);
}

void jw_bool(struct json_writer *w, bool v)
{
	value_prefix(w);
	if (v)
		outbuf__write(&w->out, "true", 4);
	else
		outbuf__write(&w->out, "false", 5);
	after_value(w);
}

void jw_null(struct json_writer *w)
{
	value_prefix(w);
	outbuf__write(&w->out, "null", 4);
	after_value(w);
}
