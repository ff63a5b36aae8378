// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* serve --listen ADDR:PORT, split before it is resolved. */
#include <errno.h>
#include <string.h>
#include "check.h"
#include "http.h"

static void check_split(const char *arg, const char *host, const char *port, int line)
{
	char buf[256];
	const char *p = NULL;
	int err = http__split_addr(arg, buf, sizeof(buf), &p);

	if (!host) {
		check_record(err == -EINVAL, __FILE__, line, "'%s': %d, want -EINVAL", arg, err);
		return;
	}
	check_record(!err && !strcmp(buf, host) && p && !strcmp(p, port), __FILE__, line,
		     "'%s': %d '%s' '%s', want '%s' '%s'", arg, err, err ? "" : buf,
		     err || !p ? "" : p, host, port);
}

int main(void)
{
	char big[400];

	check_split("127.0.0.1:9465", "127.0.0.1", "9465", __LINE__);
	check_split("localhost:0", "localhost", "0", __LINE__);
	check_split("[::1]:9465", "::1", "9465", __LINE__);
	check_split("[fe80::1%eth0]:65535", "fe80::1%eth0", "65535", __LINE__);
	check_split("::1:9465", NULL, NULL, __LINE__);
	check_split("[::1]9465", NULL, NULL, __LINE__);
	check_split("[::1:9465", NULL, NULL, __LINE__);
	check_split("[]:9465", NULL, NULL, __LINE__);
	check_split("127.0.0.1:", NULL, NULL, __LINE__);
	check_split(":9465", NULL, NULL, __LINE__);
	check_split("127.0.0.1", NULL, NULL, __LINE__);
	check_split("127.0.0.1:65536", NULL, NULL, __LINE__);
	check_split("127.0.0.1:-1", NULL, NULL, __LINE__);
	check_split("127.0.0.1:+80", NULL, NULL, __LINE__);
	/* atol() of a number past long is undefined: digits beyond a port are refused first */
	check_split("127.0.0.1:99999999999999999999999", NULL, NULL, __LINE__);
	check_split("127.0.0.1:000009465", NULL, NULL, __LINE__);
	check_split("", NULL, NULL, __LINE__);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	big[10] = ':';
	check_split(big, NULL, NULL, __LINE__);
	return check_summary();
}
