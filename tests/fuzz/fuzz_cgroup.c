// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cgroup paths and container ids: container__parse (the runtime, id, pod of
 * a path) and its label, the container-id rules (container__id_arg,
 * container__id_is), cgroup__level, a mountinfo file (cgroup__find_mount,
 * octal escapes), and -G as the commands take it (cgroup__resolve: a path or
 * a container id, looked up on this host, read only).
 */
#include <sys/mman.h>
#include <unistd.h>
#include "fuzz.h"
#include "cgroup.h"
#include "container.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz__quiet();
	return 0;
}

static void mountinfo(const uint8_t *data, size_t size)
{
	char path[64], buf[4096];
	int fd = memfd_create("mountinfo", MFD_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, data, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (!cgroup__find_mount(path, buf, sizeof(buf)) && strlen(buf) >= sizeof(buf))
			abort();
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct container_info ci;
	char buf[4096], *s;

	if (size > 4096)
		return -1;
	s = fuzz__str(data, size);
	memset(&ci, 0xa5, sizeof(ci));
	container__parse(s, &ci);
	if (!memchr(ci.runtime, '\0', sizeof(ci.runtime)) || !memchr(ci.id, '\0', sizeof(ci.id)) ||
	    !memchr(ci.pod_uid, '\0', sizeof(ci.pod_uid)) || !memchr(ci.qos, '\0', sizeof(ci.qos)))
		abort();
	if (container__label(&ci, buf, 64) && !memchr(buf, '\0', 64))
		abort();
	if (container__id_arg(s))
		container__id_is(&ci, s);
	if (*s == '/')
		cgroup__level(s);
	mountinfo(data, size);
	if (size < 256 && !strchr(s, '\n'))
		cgroup__resolve(s, buf, sizeof(buf));
	free(s);
	return 0;
}
