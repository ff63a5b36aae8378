// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json_reader.h"

#define JSON_MAX_DEPTH 64

struct parser {
	const char *p, *end, *start;
	const char *why;
};

static void ws(struct parser *ps)
{
	while (ps->p < ps->end &&
	       (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static int fail(struct parser *ps, const char *why)
{
	if (!ps->why)
		ps->why = why;
	return -EINVAL;
}

static void put_utf8(char *out, size_t *n, unsigned int cp)
{
	if (cp < 0x80) {
		out[(*n)++] = (char)cp;
	} else if (cp < 0x800) {
		out[(*n)++] = (char)(0xc0 | cp >> 6);
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		out[(*n)++] = (char)(0xe0 | cp >> 12);
		out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		out[(*n)++] = (char)(0xf0 | cp >> 18);
		out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
		out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	}
}

static int hex4(struct parser *ps, unsigned int *cp)
{
	int i;

	*cp = 0;
	if (ps->end - ps->p < 4)
		return fail(ps, "truncated \\u escape");
	for (i = 0; i < 4; i++) {
		char c = *ps->p++;

		*cp <<= 4;
		if (c >= '0' && c <= '9')
			*cp |= c - '0';
		else if (c >= 'a' && c <= 'f')
			*cp |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			*cp |= c - 'A' + 10;
		else
			return fail(ps, "bad \\u escape");
	}
	return 0;
}

/* At the opening quote; the decoded string is never longer than its source. */
static int string(struct parser *ps, char **out)
{
	const char *q = ++ps->p;
	size_t n = 0;
	char *s;

	while (q < ps->end && *q != '"')
		q += *q == '\\' ? 2 : 1;
	if (q >= ps->end)
		return fail(ps, "truncated string");
	s = malloc(q - ps->p + 1);
	if (!s)
		return -ENOMEM;
	while (*ps->p != '"') {
		unsigned char c = (unsigned char)*ps->p++;
		unsigned int cp, lo;

		if (c < 0x20) {
			free(s);
			return fail(ps, "control character in string");
		}
		if (c != '\\') {
			s[n++] = (char)c;
			continue;
		}
		c = (unsigned char)*ps->p++;
		switch (c) {
		case '"':
		case '\\':
		case '/':
			s[n++] = (char)c;
			break;
		case 'b':
			s[n++] = '\b';
			break;
		case 'f':
			s[n++] = '\f';
			break;
		case 'n':
			s[n++] = '\n';
			break;
		case 'r':
			s[n++] = '\r';
			break;
		case 't':
			s[n++] = '\t';
			break;
		case 'u':
			if (hex4(ps, &cp))
				goto bad;
			if (cp >= 0xd800 && cp <= 0xdbff && ps->end - ps->p >= 6 &&
			    ps->p[0] == '\\' && ps->p[1] == 'u') {
				ps->p += 2;
				if (hex4(ps, &lo) || lo < 0xdc00 || lo > 0xdfff)
					goto bad;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xd800 && cp <= 0xdfff) {
				cp = 0xfffd;
			}
			put_utf8(s, &n, cp);
			break;
		default:
			fail(ps, "bad escape");
			goto bad;
		}
	}
	ps->p++;
	s[n] = '\0';
	*out = s;
	return 0;
bad:
	free(s);
	return fail(ps, "bad escape");
}

static int number(struct parser *ps, double *v)
{
	char buf[64], *e;
	size_t n = 0;

	/* strchr() finds the terminator too: a NUL byte is no digit */
	while (ps->p + n < ps->end && n < sizeof(buf) - 1 && ps->p[n] &&
	       strchr("+-0123456789.eE", ps->p[n]))
		n++;
	if (!n)
		return fail(ps, "unexpected character");
	memcpy(buf, ps->p, n);
	buf[n] = '\0';
	*v = strtod(buf, &e);
	if (e != buf + n || (buf[0] == '-' ? buf[1] : buf[0]) == '.')
		return fail(ps, "bad number");
	/* 1e999 would be infinity, which no JSON writer can give back */
	if (!isfinite(*v))
		return fail(ps, "number out of range");
	ps->p += n;
	return 0;
}

static int literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
		return fail(ps, ps->end - ps->p < (long)n ? "truncated" : "unexpected character");
	ps->p += n;
	return 0;
}

static int value(struct parser *ps, struct json_value *v, int depth);

static int append(struct json_value *v, size_t *cap)
{
	if (v->len == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct json_value *items = realloc(v->items, ncap * sizeof(*items));

		if (!items)
			return -ENOMEM;
		v->items = items;
		if (v->type == JSON_OBJECT) {
			char **keys = realloc(v->keys, ncap * sizeof(*keys));

			if (!keys)
				return -ENOMEM;
			v->keys = keys;
		}
		*cap = ncap;
	}
	memset(&v->items[v->len], 0, sizeof(v->items[0]));
	if (v->type == JSON_OBJECT)
		v->keys[v->len] = NULL;
	v->len++;
	return 0;
}

static int container(struct parser *ps, struct json_value *v, int depth)
{
	bool object = *ps->p == '{';
	char close = object ? '}' : ']';
	size_t cap = 0;
	int err;

	v->type = object ? JSON_OBJECT : JSON_ARRAY;
	ps->p++;
	ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return 0;
	}
	for (;;) {
		ws(ps);
		err = append(v, &cap);
		if (err)
			return err;
		if (object) {
			if (ps->p >= ps->end)
				return fail(ps, "truncated");
			if (*ps->p != '"')
				return fail(ps, "expected a key");
			err = string(ps, &v->keys[v->len - 1]);
			if (err)
				return err;
			ws(ps);
			if (ps->p >= ps->end)
				return fail(ps, "truncated");
			if (*ps->p != ':')
				return fail(ps, "expected ':'");
			ps->p++;
		}
		err = value(ps, &v->items[v->len - 1], depth + 1);
		if (err)
			return err;
		ws(ps);
		if (ps->p >= ps->end)
			return fail(ps, "truncated");
		if (*ps->p == close) {
			ps->p++;
			return 0;
		}
		if (*ps->p != ',')
			return fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
		ps->p++;
	}
}

static int value(struct parser *ps, struct json_value *v, int depth)
{
	memset(v, 0, sizeof(*v));
	if (depth > JSON_MAX_DEPTH)
		return fail(ps, "nested too deeply");
	ws(ps);
	if (ps->p >= ps->end)
		return fail(ps, ps->p == ps->start ? "empty" : "truncated");
	switch (*ps->p) {
	case '{':
	case '[':
		return container(ps, v, depth);
	case '"':
		v->type = JSON_STRING;
		return string(ps, &v->string);
	case 't':
		v->type = JSON_BOOL;
		v->number = 1;
		return literal(ps, "true");
	case 'f':
		v->type = JSON_BOOL;
		return literal(ps, "false");
	case 'n':
		v->type = JSON_NULL;
		return literal(ps, "null");
	default:
		v->type = JSON_NUMBER;
		return number(ps, &v->number);
	}
}

int json__parse(const char *text, size_t len, struct json_value *out, char *err, size_t err_len)
{
	struct parser ps = { .p = text, .end = text + len, .start = text };
	int ret;

	ret = value(&ps, out, 0);
	if (!ret) {
		ws(&ps);
		if (ps.p < ps.end)
			ret = fail(&ps, "more after the value");
	}
	if (ret) {
		json__free(out);
		if (err_len)
			snprintf(err, err_len, "%s at byte %zu", ps.why ? ps.why : strerror(-ret),
				 (size_t)(ps.p - text));
	}
	return ret;
}

void json__free(struct json_value *v)
{
	size_t i;

	for (i = 0; i < v->len; i++) {
		json__free(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->string);
	memset(v, 0, sizeof(*v));
}

const struct json_value *json__get(const struct json_value *v, const char *key)
{
	size_t i;

	if (!v || v->type != JSON_OBJECT)
		return NULL;
	for (i = 0; i < v->len; i++)
		if (v->keys[i] && !strcmp(v->keys[i], key))
			return &v->items[i];
	return NULL;
}

const char *json__str(const struct json_value *v)
{
	return v && v->type == JSON_STRING ? v->string : NULL;
}
