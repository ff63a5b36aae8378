// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Facts about the host's CPUs (host.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "host.h"

/* The first CPU's block is at the start of /proc/cpuinfo, which is large on many CPUs. */
#define CPUINFO_HEAD (64 << 10)

void host_cpu__parse(struct host_cpu *h, const char *text)
{
	const char *line = text, *end, *colon;
	size_t key;

	memset(h, 0, sizeof(*h));
	h->family = h->model = -1;
	for (; *line && *line != '\n'; line = *end ? end + 1 : end) {
		end = line + strcspn(line, "\n");
		colon = memchr(line, ':', end - line);
		if (!colon)
			continue;
		for (key = colon - line; key && (line[key - 1] == '\t' || line[key - 1] == ' ');)
			key--;
		if (key == 9 && !strncmp(line, "vendor_id", 9))
			sscanf(colon + 1, "%31s", h->vendor);
		else if (key == 10 && !strncmp(line, "cpu family", 10))
			h->family = atoi(colon + 1);
		else if (key == 5 && !strncmp(line, "model", 5))
			h->model = atoi(colon + 1);
		else if (key == 10 && !strncmp(line, "model name", 10))
			snprintf(h->model_name, sizeof(h->model_name), "%.*s",
				 (int)(end - colon - (colon[1] == ' ' ? 2 : 1)),
				 colon + (colon[1] == ' ' ? 2 : 1));
		else if (key == 5 && !strncmp(line, "flags", 5))
			h->hypervisor = memmem(colon, end - colon, " hypervisor", 11) != NULL;
	}
}

const struct host_cpu *host__cpu(void)
{
	static struct host_cpu cpu;
	static bool done;
	char *text;
	size_t n = 0;
	FILE *f;

	if (done)
		return &cpu;
	done = true;
	text = calloc(1, CPUINFO_HEAD + 1);
	f = fopen("/proc/cpuinfo", "re");
	if (text && f)
		n = fread(text, 1, CPUINFO_HEAD, f);
	if (f)
		fclose(f);
	if (text)
		text[n] = '\0';
	host_cpu__parse(&cpu, text ? text : "");
	free(text);
	return &cpu;
}
