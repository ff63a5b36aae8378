/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __PMBPF_CONTAINER_H
#define __PMBPF_CONTAINER_H

#include <stdbool.h>

/* Container identity read from a cgroup path alone. */
struct container_info {
	char runtime[16]; /* docker, containerd, cri-o, podman, kubernetes, systemd, session, "" */
	char id[16]; /* short (12 hex) container id, or the unit/session name */
	char long_id[65]; /* the whole 64-hex container id, "" where there is none */
	char pod_uid[40];
	char qos[16]; /* guaranteed, burstable, besteffort */
};

/*
 * Container identity from a cgroup path alone (no API server): docker,
 * containerd/CRI, CRI-O, podman, Kubernetes pods (QoS class, pod UID),
 * systemd services and user sessions. Unknown layouts leave ci empty.
 */
void container__parse(const char *path, struct container_info *ci);
/*
 * The label a table shows for a container instead of its cgroup path,
 * "runtime:id12" ("podman:05fc48fc6308"), in buf; NULL where the path tells
 * more (systemd units, sessions) or no container was recognised.
 */
const char *container__label(const struct container_info *ci, char *buf, size_t len);

/* The fewest hex digits that name a container (docker's short id). */
#define CONTAINER_ID_MIN 12
/* s is a container id or a prefix of one: CONTAINER_ID_MIN to 64 hex digits. */
bool container__id_arg(const char *s);
/* The container of ci has an id that starts with prefix (container__id_arg()). */
bool container__id_is(const struct container_info *ci, const char *prefix);

#endif
