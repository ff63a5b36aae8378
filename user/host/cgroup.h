/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __PMBPF_CGROUP_H
#define __PMBPF_CGROUP_H

#include <linux/types.h>

struct cgroup_cache;

/* Find the cgroup2 mount point in mountinfo; returns 0 and fills buf. */
int cgroup__find_mount(const char *mountinfo, char *buf, size_t len);
/* The cgroup id (kernfs inode) of a directory; 0 on error with errno set. */
__u64 cgroup__id_of(const char *path);
/* Depth of an absolute cgroup2 directory below its mount (root: 0). */
int cgroup__level(const char *abs_path);

/*
 * Resolve a --cgroup argument (absolute path, path below the cgroup2 mount,
 * or a container id or unique prefix of 12+ hex digits where no such path
 * exists) to an absolute cgroup2 directory; prints a one-line error.
 */
int cgroup__resolve(const char *arg, char *buf, size_t len);

/*
 * Create a new cgroup named name below the cgroup2 mount, for a command to
 * run in; the absolute path goes to buf. An existing one is an error (EEXIST):
 * never share a cgroup with what another run left in it.
 */
int cgroup__create(const char *name, char *buf, size_t len);

struct cgroup_cache *cgroup_cache__new(void);
/*
 * Path of a cgroup id below the cgroup2 mount ("/" for the root), or NULL
 * when unknown (for instance removed before it was seen). Rescans the
 * hierarchy at most once per collection generation for unknown ids.
 */
const char *cgroup_cache__path(struct cgroup_cache *c, __u64 id, __u64 gen);
/*
 * Id of the parent of the cgroup at path (0 for the root or when unknown);
 * depth is set to the number of path components.
 */
__u64 cgroup_cache__parent(struct cgroup_cache *c, const char *path, int *depth);
void cgroup_cache__free(struct cgroup_cache *c);

#endif
