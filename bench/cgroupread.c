// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cost of reading the kernel's own per-cgroup figures (cpu.stat and the
 * three *.pressure files) once per refresh, as record, serve and top do:
 * N cgroups made under the cgroup2 mount, read REPEAT rounds through
 * cgroup_stats with their files kept open, then with none kept (a
 * descriptor limit under 16 leaves no budget: every file opened, read and
 * closed each round). Prints one JSON line per mode with the CPU time
 * (user + system) per cgroup per round. Root; removes its cgroups.
 *
 *   cgroupread [-n CGROUPS] [-r REPEAT]
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include "cgroup.h"

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

struct cg {
	char rel[64];
	__u64 id;
};

static int run(const struct cg *cgs, int n, int repeat, bool kept)
{
	struct rlimit rl, none;
	struct cgroup_stats *s;
	struct cgroup_stat out;
	double t0, t;
	int r, i, have = 0;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	none = rl;
	none.rlim_cur = 15;
	if (!kept && setrlimit(RLIMIT_NOFILE, &none))
		return -errno;
	s = cgroup_stats__new(1);
	if (!kept)
		setrlimit(RLIMIT_NOFILE, &rl);
	if (!s)
		return -ENOMEM;
	/* a first round opens (and keeps) the files: not timed */
	for (i = 0; i < n; i++)
		cgroup_stats__read(s, cgs[i].id, cgs[i].rel, &out);
	cgroup_stats__end(s);
	t0 = cpu_s();
	for (r = 0; r < repeat; r++) {
		for (i = 0; i < n; i++)
			have += !!cgroup_stats__read(s, cgs[i].id, cgs[i].rel, &out);
		cgroup_stats__end(s);
	}
	t = cpu_s() - t0;
	printf("{\"mode\": \"%s\", \"cgroups\": %d, \"rounds\": %d, \"read\": %d, "
	       "\"files_open\": %zu, \"us_per_cgroup\": %.3f}\n",
	       kept ? "kept open" : "reopened", n, repeat, have, cgroup_stats__open_files(s),
	       t * 1e6 / ((double)n * repeat));
	cgroup_stats__free(s);
	return have == n * repeat ? 0 : -EIO;
}

int main(int argc, char **argv)
{
	char mnt[4096], dir[4200];
	int n = 100, repeat = 50, c, i, made = 0, ret = 1;
	struct cg *cgs;
	struct stat sb;

	while ((c = getopt(argc, argv, "n:r:")) != -1) {
		if (c == 'n')
			n = atoi(optarg);
		else if (c == 'r')
			repeat = atoi(optarg);
		else
			return 2;
	}
	if (n <= 0 || repeat <= 0) {
		fprintf(stderr, "cgroupread: -n and -r take a positive number\n");
		return 2;
	}
	if (cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt))) {
		fprintf(stderr, "cgroupread: no cgroup2 mount\n");
		return 1;
	}
	cgs = calloc(n, sizeof(*cgs));
	if (!cgs)
		return 1;
	for (i = 0; i < n; i++, made++) {
		snprintf(cgs[i].rel, sizeof(cgs[i].rel), "/pmbpf-bench-%d-%d", getpid(), i);
		snprintf(dir, sizeof(dir), "%s%s", mnt, cgs[i].rel);
		if (mkdir(dir, 0755) || stat(dir, &sb)) {
			fprintf(stderr, "cgroupread: %s: %s\n", dir, strerror(errno));
			goto out;
		}
		cgs[i].id = sb.st_ino;
	}
	if (!run(cgs, n, repeat, true) && !run(cgs, n, repeat, false))
		ret = 0;
out:
	for (i = 0; i < made; i++) {
		snprintf(dir, sizeof(dir), "%s%s", mnt, cgs[i].rel);
		rmdir(dir);
	}
	free(cgs);
	return ret;
}
