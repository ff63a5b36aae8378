// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * serve --listen ADDR:PORT: the split (http__split_addr), then the lookup
 * serve makes, numeric only here (no name service from a fuzzer).
 */
#include <netdb.h>
#include "fuzz.h"
#include "http.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz__quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV | AI_NUMERICHOST,
	};
	struct addrinfo *res = NULL;
	const char *port = NULL;
	char host[256], *s;

	if (size > 1024)
		return -1;
	s = fuzz__str(data, size);
	if (!http__split_addr(s, host, sizeof(host), &port)) {
		if (!port || !*host || !*port || strlen(host) >= sizeof(host) || atoi(port) > 65535)
			abort();
		if (!getaddrinfo(host, port, &hints, &res))
			freeaddrinfo(res);
	}
	free(s);
	return 0;
}
