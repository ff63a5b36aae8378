// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Facts about the host (host.h). */
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "host.h"
#include "util.h"

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

long host__live_tasks(bool threads)
{
	struct dirent *de;
	long n = 0;
	FILE *f;
	DIR *d;

	if (threads) {
		/* the kernel's scheduling entities: /proc/loadavg's "running/total" */
		f = fopen("/proc/loadavg", "re");
		if (!f)
			return -1;
		if (fscanf(f, "%*f %*f %*f %*d/%ld", &n) != 1)
			n = -1;
		fclose(f);
		return n;
	}
	d = opendir("/proc");
	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += isdigit((unsigned char)de->d_name[0]) != 0;
	closedir(d);
	return n;
}

__u64 host__switches(void)
{
	return file__key_u64("/proc/stat", "ctxt %llu");
}

/*
 * /proc gives the start in clock ticks on the boot-time clock, which runs
 * ahead of the monotonic one by the time the host spent suspended.
 */
bool host__thread_alive(pid_t pid, pid_t tid, __u64 start_ns)
{
	long hz = sysconf(_SC_CLK_TCK);
	unsigned long long ticks;
	double want;
	char state;

	if (hz <= 0 || task__stat(pid, tid, &state, &ticks) || state == 'Z' || state == 'X' ||
	    state == 'x')
		return false;
	if (!start_ns)
		return true;
	want = (double)(start_ns + (now_ns(CLOCK_BOOTTIME) - now_ns(CLOCK_MONOTONIC))) * hz / 1e9;
	return fabs((double)ticks - want) <= 1.5;
}
