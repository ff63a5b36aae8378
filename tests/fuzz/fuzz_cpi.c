// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pmbpf cpi FILE: 'record -b cgroup -o json' lines, as a file (a memfd) read
 * by the command itself with the shortest window (20 intervals, so that
 * small inputs reach the detector), table or JSON output (to /dev/null) and
 * -k 1 or 3 after the first byte.
 */
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>
#include "fuzz.h"
#include "commands.h"

static int null_fd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz__quiet();
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], *argv[9];
	int fd, out, argc = 0;

	if (!size || size > 65536)
		return -1;
	fd = memfd_create("cpi", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	argv[argc++] = "cpi";
	argv[argc++] = "-w";
	argv[argc++] = "20";
	argv[argc++] = "-k";
	argv[argc++] = data[0] & 2 ? "3" : "1";
	if (data[0] & 1) {
		argv[argc++] = "-o";
		argv[argc++] = "json";
	}
	argv[argc++] = path;
	argv[argc] = NULL;
	fflush(stdout);
	out = dup(STDOUT_FILENO);
	dup2(null_fd, STDOUT_FILENO);
	cmd_cpi(argc, argv);
	fflush(stdout);
	dup2(out, STDOUT_FILENO);
	close(out);
	close(fd);
	return 0;
}
