// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgroup v2 ids to paths. A cgroup's id is its kernfs node id, which is the
 * inode number of its directory in the cgroup2 mount.
 */
#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include "cgroup.h"
#include "container.h"
#include "util.h"

struct cg_node {
	__u64 id;
	char *path;
};

struct cgroup_cache {
	char mount[4096];
	int have_mount;
	struct cg_node *nodes;
	size_t nr, cap;
	__u64 scanned_gen;
};

/* mountinfo writes space, tab, newline and backslash as \ooo octal. */
static void unescape_octal(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

int cgroup__find_mount(const char *mountinfo, char *buf, size_t len)
{
	char line[8192];
	FILE *f = fopen(mountinfo, "r");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char mnt[4096], *sep;

		/* id parent maj:min root mountpoint opts [optional...] - fstype src opts */
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		sep = strstr(line, " - ");
		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		unescape_octal(mnt);
		if (strlen(mnt) >= len) {
			err = -ENAMETOOLONG;
			break;
		}
		strcpy(buf, mnt);
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

__u64 cgroup__id_of(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return 0;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return 0;
	}
	return st.st_ino;
}

/* path is mount or below it */
static bool path_below(const char *path, const char *mount)
{
	size_t n = strlen(mount);

	if (n == 1 && mount[0] == '/')
		return true;
	return !strncmp(path, mount, n) && (path[n] == '/' || !path[n]);
}

static int not_v2(const char *arg, const char *path, const char *mount)
{
	struct statfs sfs;

	if (!statfs(path, &sfs) && sfs.f_type == CGROUP_SUPER_MAGIC)
		pr_err("cgroup %s is a cgroup v1 directory, not cgroup v2 (mounted at %s)\n", arg,
		       mount);
	else
		pr_err("%s is not a cgroup v2 directory (cgroup v2 is mounted at %s)\n", arg,
		       mount);
	return -EINVAL;
}

#define ID_MATCHES 8

/* The cgroups named after containers whose id starts with prefix: one per container. */
struct id_matches {
	const char *prefix;
	size_t mount_len;
	int nr; /* distinct containers, the first ID_MATCHES kept */
	char long_id[ID_MATCHES][sizeof(((struct container_info *)0)->long_id)];
	char *path[ID_MATCHES];
};

static struct id_matches *id_target;

static int id_cb(const char *fpath, const struct stat *sb, int type, struct FTW *ftw)
{
	struct id_matches *m = id_target;
	struct container_info ci;
	int i;

	if (type != FTW_D)
		return 0;
	container__parse(fpath + m->mount_len, &ci);
	if (!container__id_is(&ci, m->prefix))
		return 0;
	/* parents come first: a container's own cgroup before those inside it */
	for (i = 0; i < m->nr && i < ID_MATCHES; i++)
		if (!strcmp(m->long_id[i], ci.long_id))
			return 0;
	if (m->nr < ID_MATCHES) {
		memcpy(m->long_id[m->nr], ci.long_id, sizeof(ci.long_id));
		m->path[m->nr] = strdup(fpath);
		if (!m->path[m->nr])
			return -1;
	}
	m->nr++;
	return 0;
}

/*
 * A container id, or a prefix of one (container__id_arg()), to the cgroup
 * named after that container, by the rule that labels cgroups everywhere
 * (container__parse(), top's filter): one line and -EINVAL when no
 * container or several have it.
 */
static int resolve_container(const char *arg, const char *mount, char *buf, size_t len)
{
	struct id_matches m = { .prefix = arg, .mount_len = strlen(mount) };
	char more[1024];
	size_t off = 0;
	int i, err = 0;

	if (!strcmp(mount, "/"))
		m.mount_len = 0;
	id_target = &m;
	if (nftw(mount, id_cb, 32, FTW_PHYS | FTW_MOUNT))
		err = -ENOMEM;
	id_target = NULL;
	if (err) {
		pr_err("cannot look for container %s: %s\n", arg, strerror(-err));
	} else if (!m.nr) {
		pr_err("no container has an id starting %s: no cgroup below %s is named after one (docker-ID.scope, libpod-ID, ...)\n",
		       arg, mount);
		err = -EINVAL;
	} else if (m.nr > 1) {
		more[0] = '\0';
		for (i = 0; i < m.nr && i < 3 && off < sizeof(more); i++)
			off += snprintf(more + off, sizeof(more) - off, "%s%s", i ? ", " : "",
					m.path[i] + m.mount_len);
		pr_err("container id %s is ambiguous: %d containers' ids start with it: %s%s; give more digits\n",
		       arg, m.nr, more, m.nr > 3 ? ", ..." : "");
		err = -EINVAL;
	} else if ((size_t)snprintf(buf, len, "%s", m.path[0]) >= len) {
		pr_err("cgroup path too long: %s\n", m.path[0]);
		err = -ENAMETOOLONG;
	}
	for (i = 0; i < m.nr && i < ID_MATCHES; i++)
		free(m.path[i]);
	return err;
}

int cgroup__resolve(const char *arg, char *buf, size_t len)
{
	char mount[4096], joined[8192], *real = NULL;
	struct statfs sfs;
	int err, n;

	if (!*arg) {
		pr_err("empty cgroup path: give a cgroup v2 directory, / for all\n");
		return -EINVAL;
	}
	err = cgroup__find_mount("/proc/self/mountinfo", mount, sizeof(mount));
	if (err) {
		pr_err("no cgroup v2 hierarchy is mounted (%s)\n", strerror(-err));
		return err;
	}
	/*
	 * A path under the mount, or one relative to it ("/system.slice" and
	 * "system.slice" alike); then "." and ".." and links resolved, so the
	 * depth the kernel filter compares is the real one.
	 */
	if (arg[0] == '/' && path_below(arg, mount))
		n = snprintf(joined, sizeof(joined), "%s", arg);
	else
		n = snprintf(joined, sizeof(joined), "%s/%s", mount, arg[0] == '/' ? arg + 1 : arg);
	if (n < 0 || (size_t)n >= sizeof(joined)) {
		pr_err("cgroup path too long: %s\n", arg);
		return -ENAMETOOLONG;
	}
	real = realpath(joined, NULL);
	if (!real && container__id_arg(arg))
		return resolve_container(arg, mount, buf, len);
	if (!real && arg[0] == '/') {
		/* an absolute path elsewhere: say what it is */
		real = realpath(arg, NULL);
		if (real && !path_below(real, mount)) {
			free(real);
			return not_v2(arg, arg, mount);
		}
	}
	if (!real) {
		err = -errno;
		pr_err("cgroup %s: %s (cgroup v2 is mounted at %s)\n", arg, strerror(-err), mount);
		return err;
	}
	if (!path_below(real, mount)) {
		pr_err("cgroup %s is outside the cgroup v2 hierarchy (mounted at %s)\n", arg,
		       mount);
		free(real);
		return -EINVAL;
	}
	if (!cgroup__id_of(real)) {
		err = -errno;
		pr_err("cgroup %s: %s\n", arg, strerror(-err));
		free(real);
		return err;
	}
	if (statfs(real, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		err = not_v2(arg, real, mount);
		free(real);
		return err;
	}
	n = snprintf(buf, len, "%s", real);
	free(real);
	if (n < 0 || (size_t)n >= len) {
		pr_err("cgroup path too long: %s\n", arg);
		return -ENAMETOOLONG;
	}
	return 0;
}

int cgroup__create(const char *name, char *buf, size_t len)
{
	char mount[4096];
	int err, n;

	err = cgroup__find_mount("/proc/self/mountinfo", mount, sizeof(mount));
	if (err) {
		pr_err("no cgroup v2 hierarchy is mounted (%s)\n", strerror(-err));
		return err;
	}
	n = snprintf(buf, len, "%s/%s", mount, name);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (mkdir(buf, 0755)) {
		err = -errno;
		pr_err("cannot create cgroup %s: %s\n", buf, strerror(-err));
		return err;
	}
	return 0;
}

int cgroup__level(const char *abs_path)
{
	char mount[4096];
	const char *p;
	int level = 0;

	if (cgroup__find_mount("/proc/self/mountinfo", mount, sizeof(mount)) ||
	    strncmp(abs_path, mount, strlen(mount)))
		return 0;
	for (p = abs_path + strlen(mount); *p; p++)
		if (*p == '/' && p[1] && p[1] != '/')
			level++;
	return level;
}

struct cgroup_cache *cgroup_cache__new(void)
{
	struct cgroup_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->have_mount = !cgroup__find_mount("/proc/self/mountinfo", c->mount, sizeof(c->mount));
	c->scanned_gen = (__u64)-1;
	return c;
}

static struct cgroup_cache *scan_target;

static int add_node(struct cgroup_cache *c, __u64 id, const char *path)
{
	size_t i;

	for (i = 0; i < c->nr; i++) {
		if (c->nodes[i].id != id)
			continue;
		if (strcmp(c->nodes[i].path, path)) {
			char *p = strdup(path);

			if (!p)
				return -ENOMEM;
			free(c->nodes[i].path);
			c->nodes[i].path = p;
		}
		return 0;
	}
	if (c->nr == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct cg_node *n = realloc(c->nodes, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->nodes = n;
		c->cap = cap;
	}
	c->nodes[c->nr].id = id;
	c->nodes[c->nr].path = strdup(path);
	if (!c->nodes[c->nr].path)
		return -ENOMEM;
	c->nr++;
	return 0;
}

static int scan_cb(const char *fpath, const struct stat *sb, int type, struct FTW *ftw)
{
	struct cgroup_cache *c = scan_target;
	const char *rel;

	if (type != FTW_D)
		return 0;
	rel = fpath + strlen(c->mount);
	if (add_node(c, sb->st_ino, *rel ? rel : "/"))
		return 1;
	return 0;
}

const char *cgroup_cache__path(struct cgroup_cache *c, __u64 id, __u64 gen)
{
	size_t i;
	int pass;

	if (!c->have_mount)
		return NULL;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < c->nr; i++)
			if (c->nodes[i].id == id)
				return c->nodes[i].path;
		if (pass || c->scanned_gen == gen)
			break;
		c->scanned_gen = gen;
		scan_target = c;
		nftw(c->mount, scan_cb, 32, FTW_PHYS | FTW_MOUNT);
		scan_target = NULL;
	}
	return NULL;
}

void cgroup_cache__free(struct cgroup_cache *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nr; i++)
		free(c->nodes[i].path);
	free(c->nodes);
	free(c);
}

__u64 cgroup_cache__parent(struct cgroup_cache *c, const char *path, int *depth)
{
	char parent[4096];
	const char *p;
	size_t i, len;
	int d = 0;

	for (p = path; *p; p++)
		if (*p == '/' && p[1])
			d++;
	*depth = d;
	if (!strcmp(path, "/"))
		return 0;
	p = strrchr(path, '/');
	if (!p)
		return 0;
	len = p == path ? 1 : (size_t)(p - path);
	if (len >= sizeof(parent))
		return 0;
	memcpy(parent, path, len);
	parent[len] = '\0';
	for (i = 0; i < c->nr; i++)
		if (!strcmp(c->nodes[i].path, parent))
			return c->nodes[i].id;
	return 0;
}
