// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "outbuf.h"
#include "strbuf.h"

static bool grow(struct strbuf *sb, size_t n)
{
	size_t cap = sb->cap ? sb->cap * 2 : 65536;
	char *b;

	while (cap - sb->len <= n)
		cap *= 2;
	b = realloc(sb->buf, cap);
	if (!b) {
		sb->failed = true;
		return false;
	}
	sb->buf = b;
	sb->cap = cap;
	return true;
}

char *strbuf__room(struct strbuf *sb, size_t n)
{
	if (sb->failed)
		return NULL;
	if (sb->cap - sb->len <= n && !grow(sb, n))
		return NULL;
	return sb->buf + sb->len;
}

void strbuf__printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (sb->failed)
		return;
	for (;;) {
		size_t room = sb->cap - sb->len;

		va_start(ap, fmt);
		n = vsnprintf(sb->buf ? sb->buf + sb->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			sb->failed = true;
			return;
		}
		if ((size_t)n < room) {
			sb->len += n;
			return;
		}
		if (!grow(sb, n))
			return;
	}
}

void strbuf__u64(struct strbuf *sb, __u64 v)
{
	char *p = strbuf__room(sb, 20);

	if (p) {
		sb->len += fmt_u64(p, v);
		sb->buf[sb->len] = '\0';
	}
}

void strbuf__free(struct strbuf *sb)
{
	free(sb->buf);
	memset(sb, 0, sizeof(*sb));
}
