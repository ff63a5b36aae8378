// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mapmem PID: the BPF maps that process PID holds open and the kernel's own
 * figure of their memory, as `bpftool map show` would print it: for each
 * "anon_inode:bpf-map" fd of PID, its /proc/PID/fdinfo (map_type, key_size,
 * value_size, max_entries, map_flags, memlock, map_id) and its name
 * (BPF_MAP_GET_FD_BY_ID, BPF_OBJ_GET_INFO_BY_FD). One line per map:
 *
 *   map id=N name=NAME type=T key=K value=V entries=E flags=0xF memlock=B
 *
 * then "total maps=N memlock=B possible_cpus=C". A map held by several fds
 * is listed once. Needs root (CAP_SYS_ADMIN for the name).
 */
#include <dirent.h>
#include <linux/bpf.h>
#include <sys/syscall.h>

#include "spin.h"

#define MAX_MAPS 256

struct map {
	unsigned type, key, value, entries, flags, id;
	unsigned long long memlock;
};

static int fdinfo_map(const char *path, struct map *m)
{
	char line[256];
	FILE *f = fopen(path, "r");
	int have = 0;

	if (!f)
		return -1;
	memset(m, 0, sizeof(*m));
	while (fgets(line, sizeof(line), f)) {
		have += sscanf(line, "map_type: %u", &m->type) == 1;
		have += sscanf(line, "key_size: %u", &m->key) == 1;
		have += sscanf(line, "value_size: %u", &m->value) == 1;
		have += sscanf(line, "max_entries: %u", &m->entries) == 1;
		have += sscanf(line, "map_flags: %x", &m->flags) == 1;
		have += sscanf(line, "memlock: %llu", &m->memlock) == 1;
		have += sscanf(line, "map_id: %u", &m->id) == 1;
	}
	fclose(f);
	return have == 7 ? 0 : -1;
}

static void map_name(unsigned id, char *name, size_t size)
{
	struct bpf_map_info info;
	union bpf_attr attr;
	int fd;

	snprintf(name, size, "?");
	memset(&attr, 0, sizeof(attr));
	attr.map_id = id;
	fd = syscall(__NR_bpf, BPF_MAP_GET_FD_BY_ID, &attr, sizeof(attr));
	if (fd < 0)
		return;
	memset(&info, 0, sizeof(info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (unsigned long)&info;
	if (!syscall(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr)) && info.name[0])
		snprintf(name, size, "%s", info.name);
	close(fd);
}

static int possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	int a, b, n = 0, c;

	if (!f)
		return -1;
	while ((c = fscanf(f, "%d-%d", &a, &b)) >= 1) {
		n += c == 2 ? b - a + 1 : 1;
		if (fgetc(f) != ',')
			break;
	}
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	static struct map maps[MAX_MAPS];
	char path[512], link[128], name[BPF_OBJ_NAME_LEN + 1];
	unsigned long long total = 0;
	struct dirent *d;
	int nr = 0, i;
	DIR *dir;

	if (argc != 2 || parse_count("mapmem", argv[1]) == 0) {
		fprintf(stderr, "usage: mapmem PID\n");
		return 2;
	}
	snprintf(path, sizeof(path), "/proc/%s/fd", argv[1]);
	dir = opendir(path);
	if (!dir) {
		fprintf(stderr, "mapmem: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while ((d = readdir(dir))) {
		struct map m;
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/%s/fd/%s", argv[1], d->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len < 0)
			continue;
		link[len] = 0;
		if (strcmp(link, "anon_inode:bpf-map"))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", argv[1], d->d_name);
		if (fdinfo_map(path, &m)) {
			fprintf(stderr, "mapmem: %s: not a map's fdinfo\n", path);
			return 1;
		}
		for (i = 0; i < nr && maps[i].id != m.id; i++)
			;
		if (i < nr)
			continue;
		if (nr == MAX_MAPS) {
			fprintf(stderr, "mapmem: more than %d maps\n", MAX_MAPS);
			return 1;
		}
		maps[nr++] = m;
	}
	closedir(dir);
	for (i = 0; i < nr; i++) {
		map_name(maps[i].id, name, sizeof(name));
		printf("map id=%u name=%s type=%u key=%u value=%u entries=%u flags=0x%x memlock=%llu\n",
		       maps[i].id, name, maps[i].type, maps[i].key, maps[i].value, maps[i].entries,
		       maps[i].flags, maps[i].memlock);
		total += maps[i].memlock;
	}
	printf("total maps=%d memlock=%llu possible_cpus=%d\n", nr, total, possible_cpus());
	return 0;
}
