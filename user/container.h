/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __PMBPF_CONTAINER_H
#define __PMBPF_CONTAINER_H

#include "snapshot.h"

/*
 * Container identity from a cgroup path alone (no API server): docker,
 * containerd/CRI, CRI-O, podman, Kubernetes pods (QoS class, pod UID),
 * systemd services and user sessions. Unknown layouts leave ci empty.
 */
void container__parse(const char *path, struct container_info *ci);

#endif
