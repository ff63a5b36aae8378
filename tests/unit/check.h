/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A tiny unit-test harness: every CHECK counts as one check; failures are
 * printed with file:line to stderr, and check_summary() prints the single
 * line "N passed, N failed" and gives the exit status.
 *
 * Also a minimal strict JSON validator (json_valid()) for the renderers'
 * output: RFC 8259 grammar, strings must be valid UTF-8 without raw control
 * characters.
 */
#ifndef __PMBPF_TEST_CHECK_H
#define __PMBPF_TEST_CHECK_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_passed;
static int check_failed;

static inline __attribute__((format(printf, 4, 5))) bool
check_record(bool ok, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		check_passed++;
		return true;
	}
	check_failed++;
	fprintf(stderr, "%s:%d: FAIL: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return false;
}

#define CHECK(cond) check_record(!!(cond), __FILE__, __LINE__, "%s", #cond)

#define CHECK_EQ_U64(a, b)                                                                      \
	({                                                                                      \
		unsigned long long __a = (unsigned long long)(a), __b = (unsigned long long)(b); \
		check_record(__a == __b, __FILE__, __LINE__, "%s == %s: %llu (0x%llx) != %llu (0x%llx)", \
			     #a, #b, __a, __a, __b, __b);                                       \
	})

#define CHECK_EQ_INT(a, b)                                                                     \
	({                                                                                     \
		long long __a = (long long)(a), __b = (long long)(b);                          \
		check_record(__a == __b, __FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, \
			     __a, __b);                                                        \
	})

/* Fails when either side is NaN: use CHECK_NAN for that. */
#define CHECK_NEAR(a, b, tol)                                                                  \
	({                                                                                     \
		double __a = (a), __b = (b), __t = (tol);                                      \
		check_record(fabs(__a - __b) <= __t, __FILE__, __LINE__,                       \
			     "%s ~= %s: %.17g vs %.17g (tol %g)", #a, #b, __a, __b, __t);      \
	})

#define CHECK_NAN(a)                                                                        \
	({                                                                                  \
		double __a = (a);                                                           \
		check_record(isnan(__a), __FILE__, __LINE__, "%s is NaN: got %.17g", #a, __a); \
	})

#define CHECK_STR(a, b)                                                                        \
	({                                                                                     \
		const char *__a = (a), *__b = (b);                                             \
		check_record(__a && __b && !strcmp(__a, __b), __FILE__, __LINE__,              \
			     "%s == %s: \"%s\" != \"%s\"", #a, #b, __a ? __a : "(null)",         \
			     __b ? __b : "(null)");                                            \
	})

/* haystack contains needle */
#define CHECK_SUBSTR(h, n)                                                                     \
	({                                                                                     \
		const char *__h = (h), *__n = (n);                                             \
		check_record(__h && __n && strstr(__h, __n), __FILE__, __LINE__,               \
			     "%s contains %s: \"%s\" not in \"%s\"", #h, #n, __n ? __n : "(null)", \
			     __h ? __h : "(null)");                                            \
	})

static inline int check_summary(void)
{
	printf("%d passed, %d failed\n", check_passed, check_failed);
	fflush(stdout);
	return check_failed ? 1 : 0;
}

/* JSON validation: a recursive descent over one value. */

static inline void jv_ws(const char **p)
{
	while (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r')
		(*p)++;
}

/* One UTF-8 sequence starting at *p (a byte >= 0x80); no overlongs or surrogates. */
static inline bool jv_utf8(const char **p)
{
	const unsigned char *s = (const unsigned char *)*p;
	unsigned int cp, n, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 1;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 2;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 3;
		cp = s[0] & 0x07;
	} else {
		return false;
	}
	for (i = 1; i <= n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return false;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return false;
	*p += n + 1;
	return true;
}

static inline bool jv_string(const char **p)
{
	int i;

	if (**p != '"')
		return false;
	(*p)++;
	for (;;) {
		unsigned char c = (unsigned char)**p;

		if (c == '"') {
			(*p)++;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c == '\\') {
			(*p)++;
			switch (**p) {
			case '"':
			case '\\':
			case '/':
			case 'b':
			case 'f':
			case 'n':
			case 'r':
			case 't':
				(*p)++;
				break;
			case 'u':
				(*p)++;
				for (i = 0; i < 4; i++, (*p)++)
					if (!**p || !strchr("0123456789abcdefABCDEF", **p))
						return false;
				break;
			default:
				return false;
			}
		} else if (c >= 0x80) {
			if (!jv_utf8(p))
				return false;
		} else {
			(*p)++;
		}
	}
}

static inline bool jv_digits(const char **p)
{
	const char *s = *p;

	while (**p >= '0' && **p <= '9')
		(*p)++;
	return *p != s;
}

static inline bool jv_number(const char **p)
{
	if (**p == '-')
		(*p)++;
	if (**p == '0')
		(*p)++;
	else if (!jv_digits(p))
		return false;
	if (**p == '.') {
		(*p)++;
		if (!jv_digits(p))
			return false;
	}
	if (**p == 'e' || **p == 'E') {
		(*p)++;
		if (**p == '+' || **p == '-')
			(*p)++;
		if (!jv_digits(p))
			return false;
	}
	return true;
}

static inline bool jv_value(const char **p, int depth);

static inline bool jv_container(const char **p, int depth, char close, bool object)
{
	(*p)++;
	jv_ws(p);
	if (**p == close) {
		(*p)++;
		return true;
	}
	for (;;) {
		jv_ws(p);
		if (object) {
			if (!jv_string(p))
				return false;
			jv_ws(p);
			if (**p != ':')
				return false;
			(*p)++;
		}
		if (!jv_value(p, depth + 1))
			return false;
		jv_ws(p);
		if (**p == close) {
			(*p)++;
			return true;
		}
		if (**p != ',')
			return false;
		(*p)++;
	}
}

static inline bool jv_value(const char **p, int depth)
{
	if (depth > 64)
		return false;
	jv_ws(p);
	switch (**p) {
	case '{':
		return jv_container(p, depth, '}', true);
	case '[':
		return jv_container(p, depth, ']', false);
	case '"':
		return jv_string(p);
	case 't':
		if (strncmp(*p, "true", 4))
			return false;
		*p += 4;
		return true;
	case 'f':
		if (strncmp(*p, "false", 5))
			return false;
		*p += 5;
		return true;
	case 'n':
		if (strncmp(*p, "null", 4))
			return false;
		*p += 4;
		return true;
	default:
		return jv_number(p);
	}
}

/* s holds exactly one JSON value (surrounding whitespace allowed). */
static inline bool json_valid(const char *s)
{
	const char *p = s;

	if (!jv_value(&p, 0))
		return false;
	jv_ws(&p);
	return *p == '\0';
}

#endif
