/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A growing string buffer (Prometheus expositions, profile's folded
 * stacks): appends never fail loudly, a failed allocation marks it failed
 * and later appends do nothing.
 */
#ifndef __PMBPF_STRBUF_H
#define __PMBPF_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <linux/types.h>

struct strbuf {
	char *buf;
	size_t len;
	size_t cap;
	bool failed; /* an allocation failed: the content is incomplete */
};

void strbuf__printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf__free(struct strbuf *sb);
/*
 * Room for n more bytes at sb->buf + sb->len and a NUL after them (the
 * content stays a C string), or NULL (sb failed).
 */
char *strbuf__room(struct strbuf *sb, size_t n);

static inline void strbuf__add(struct strbuf *sb, const char *s, size_t n)
{
	char *p = strbuf__room(sb, n);

	if (p) {
		memcpy(p, s, n);
		sb->len += n;
		p[n] = '\0';
	}
}

static inline void strbuf__puts(struct strbuf *sb, const char *s)
{
	strbuf__add(sb, s, strlen(s));
}

static inline void strbuf__putc(struct strbuf *sb, char c)
{
	strbuf__add(sb, &c, 1);
}

/* "%llu" */
void strbuf__u64(struct strbuf *sb, __u64 v);

#endif
