// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Finding the cgroup2 mount in a mountinfo file; parsing cpu.stat and the PSI files. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "check.h"
#include "cgroup.h"
#include "snapshot.h"

/* Ubuntu 20.04 style: v1 controllers, cgroup2 at .../unified */
static const char hybrid[] =
	"25 30 0:23 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
	"30 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n"
	"34 25 0:29 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755\n"
	"35 34 0:30 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate\n"
	"36 34 0:31 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup rw,xattr,name=systemd\n"
	"38 34 0:33 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:15 - cgroup cgroup rw,memory\n";

/* Debian 12 style: the unified hierarchy only */
static const char unified[] =
	"22 28 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
	"28 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
	"29 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"
	"30 22 0:27 / /sys/fs/pstore rw,nosuid,nodev,noexec,relatime shared:5 - pstore pstore rw\n";

/* v1 only; "cgroup2" appears, but not as a filesystem type */
static const char legacy[] =
	"30 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
	"34 25 0:29 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755\n"
	"36 34 0:31 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup rw,xattr,name=systemd\n"
	"40 30 0:40 / /run/cgroup2 rw,relatime - tmpfs cgroup2 rw\n"
	"41 30 0:41 / /mnt/x rw,relatime - cgroup2fs none rw\n";

/* a container: no optional fields, several of them, a non-root source path */
static const char container[] =
	"600 500 0:50 / / rw,relatime master:1 shared:2 - overlay overlay rw,lowerdir=/a,upperdir=/b\n"
	"610 600 0:60 /../.. /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw\n"
	"611 600 0:60 / /other rw - cgroup2 cgroup rw\n";

/* mountinfo escapes a space in a mount point as \040 */
static const char spaced[] = "50 1 0:30 / /tmp/my\\040cg rw,relatime - cgroup2 cgroup2 rw\n";

static char path[PATH_MAX];

static const char *write_mountinfo(const char *text)
{
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/pmbpf-mountinfo-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	fd = mkstemp(path);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		perror("mountinfo temporary file");
		exit(2);
	}
	fputs(text, f);
	fclose(f);
	return path;
}

static int find(const char *text, char *buf, size_t len)
{
	int err = cgroup__find_mount(write_mountinfo(text), buf, len);

	unlink(path);
	return err;
}

static void test_find_mount(void)
{
	char buf[256];

	CHECK_EQ_INT(find(hybrid, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "/sys/fs/cgroup/unified");

	CHECK_EQ_INT(find(unified, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "/sys/fs/cgroup");

	CHECK_EQ_INT(find(container, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "/sys/fs/cgroup");

	strcpy(buf, "untouched");
	CHECK_EQ_INT(find(legacy, buf, sizeof(buf)), -ENOENT);
	CHECK_EQ_INT(find("", buf, sizeof(buf)), -ENOENT);
	CHECK_EQ_INT(find("garbage\n\n-\n", buf, sizeof(buf)), -ENOENT);
	CHECK_STR(buf, "untouched");

	/* exactly fits, and one byte short */
	CHECK_EQ_INT(find(unified, buf, sizeof("/sys/fs/cgroup")), 0);
	CHECK_STR(buf, "/sys/fs/cgroup");
	CHECK_EQ_INT(find(unified, buf, sizeof("/sys/fs/cgroup") - 1), -ENAMETOOLONG);

	CHECK_EQ_INT(cgroup__find_mount("/nonexistent/pmbpf/mountinfo", buf, sizeof(buf)), -ENOENT);

	/* the path as the filesystem knows it, octal escapes decoded */
	CHECK_EQ_INT(find(spaced, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "/tmp/my cg");
}

/* cpu.stat of a cgroup2 cgroup with the cpu controller (6.12), and without it. */
static void test_cpu_stat(void)
{
	struct cgroup_stat st = {};

	cgroup_stat__parse_cpu("usage_usec 9613282\nuser_usec 9300133\nsystem_usec 313149\n"
			       "core_sched.force_idle_usec 0\nnr_periods 97\nnr_throttled 96\n"
			       "throttled_usec 7773104\nnr_bursts 0\nburst_usec 0\n",
			       &st);
	CHECK_EQ_INT(st.have,
		     (1u << CGS_NR_PERIODS) | (1u << CGS_NR_THROTTLED) | (1u << CGS_THROTTLED_NS));
	CHECK(st.v[CGS_NR_PERIODS] == 97);
	CHECK(st.v[CGS_NR_THROTTLED] == 96);
	CHECK(st.v[CGS_THROTTLED_NS] == 7773104000ULL);

	/* the cpu controller on cgroup v1: usage only, nothing of throttling */
	memset(&st, 0, sizeof(st));
	cgroup_stat__parse_cpu("usage_usec 120\nuser_usec 100\nsystem_usec 20\n", &st);
	CHECK_EQ_INT(st.have, 0);

	/* a key that only starts like one, a value that is not a number, no newline at the end */
	memset(&st, 0, sizeof(st));
	cgroup_stat__parse_cpu("nr_periods_x 5\nnr_throttled x\nthrottled_usec 12", &st);
	CHECK_EQ_INT(st.have, 1u << CGS_THROTTLED_NS);
	CHECK(st.v[CGS_THROTTLED_NS] == 12000);
}

static void test_pressure(void)
{
	struct cgroup_stat st = {};

	cgroup_stat__parse_pressure("some avg10=12.50 avg60=3.10 avg300=0.66 total=1234567\n"
				    "full avg10=0.00 avg60=0.00 avg300=0.00 total=89\n",
				    &st, CGS_PSI_MEMORY_SOME_NS);
	CHECK_EQ_INT(st.have, (1u << CGS_PSI_MEMORY_SOME_NS) | (1u << CGS_PSI_MEMORY_FULL_NS));
	CHECK(st.v[CGS_PSI_MEMORY_SOME_NS] == 1234567000ULL);
	CHECK(st.v[CGS_PSI_MEMORY_FULL_NS] == 89000);

	/* cpu.pressure before 5.13: no full line */
	memset(&st, 0, sizeof(st));
	cgroup_stat__parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=0", &st,
				    CGS_PSI_CPU_SOME_NS);
	CHECK_EQ_INT(st.have, 1u << CGS_PSI_CPU_SOME_NS);
	CHECK(st.v[CGS_PSI_CPU_SOME_NS] == 0);

	/* PSI disabled (psi=0): the file reads as an error, or holds nothing usable */
	memset(&st, 0, sizeof(st));
	cgroup_stat__parse_pressure("", &st, CGS_PSI_IO_SOME_NS);
	cgroup_stat__parse_pressure("some total=\nfull avg10=1.00\n", &st, CGS_PSI_IO_SOME_NS);
	CHECK_EQ_INT(st.have, 0);
}

static int write_str(const char *path, const char *v)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -errno;
	ret = fputs(v, f) < 0 ? -EIO : 0;
	if (fclose(f))
		ret = -errno;
	return ret;
}

/* How many of the four files pmbpf reads the cgroup dir has */
static size_t count_files(const char *dir)
{
	static const char *const names[] = { "cpu.stat", "cpu.pressure", "memory.pressure",
					     "io.pressure" };
	char path[4500];
	size_t i, n = 0;

	for (i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		n += !access(path, R_OK);
	}
	return n;
}

/* A child that spins, in the cgroup dir, until killed */
static pid_t spinner_in(const char *dir)
{
	char path[4500], pid[32];
	pid_t p = fork();

	if (p == 0) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
		snprintf(pid, sizeof(pid), "%d", getpid());
		if (write_str(path, pid))
			_exit(1);
		for (;;)
			;
	}
	return p;
}

/*
 * A cgroup's files are kept open between reads and read again from offset 0:
 * a reading through a kept descriptor is the kernel's new one (CPU pressure
 * grows while 3 spinners share 2 CPUs in it); a removed cgroup's descriptors
 * are closed at its next read; the budget follows RLIMIT_NOFILE.
 */
static void test_kept_files(void)
{
	char mnt[4096], dir[4400], rel[64];
	struct cgroup_stat out;
	struct cgroup_stats *s;
	struct rlimit rl, low;
	struct stat sb;
	size_t files, i;
	pid_t kids[3];
	__u32 have;

	if (geteuid() || cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt))) {
		printf("skip test_kept_files: needs root and a cgroup2 mount\n");
		return;
	}
	snprintf(rel, sizeof(rel), "/pmbpf-unit-%d", getpid());
	snprintf(dir, sizeof(dir), "%s%s", mnt, rel);
	if (mkdir(dir, 0755) || stat(dir, &sb)) {
		printf("skip test_kept_files: cannot make %s: %s\n", dir, strerror(errno));
		return;
	}
	files = count_files(dir);
	s = cgroup_stats__new(1);
	CHECK(s);
	if (!s)
		goto out;
	have = cgroup_stats__read(s, sb.st_ino, rel, &out);
	CHECK_EQ_INT(out.have, 0); /* no earlier reading */
	CHECK_EQ_INT(cgroup_stats__open_files(s), files);
	cgroup_stats__end(s);
	for (i = 0; i < 3; i++)
		kids[i] = spinner_in(dir);
	usleep(300 * 1000);
	for (i = 0; i < 3; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	CHECK_EQ_INT(cgroup_stats__read(s, sb.st_ino, rel, &out), have);
	CHECK_EQ_INT(cgroup_stats__open_files(s), files); /* none opened again */
	if (have & (1u << CGS_PSI_CPU_SOME_NS)) {
		/* 3 spinners on 2 CPUs (or more, on a busy host) for 300 ms: some wait all along */
		CHECK(out.v[CGS_PSI_CPU_SOME_NS] > 100 * 1000 * 1000ULL);
	} else {
		printf("skip: no cpu.pressure (PSI off): freshness not checked\n");
	}
	cgroup_stats__end(s);
	/* removed: its descriptors are closed at its next read, nothing is read */
	CHECK(!rmdir(dir));
	CHECK_EQ_INT(cgroup_stats__read(s, sb.st_ino, rel, &out), 0);
	CHECK_EQ_INT(cgroup_stats__open_files(s), 0);
	cgroup_stats__free(s);

	/* a descriptor limit of 64: 4 files kept (64 / 16), the others still read */
	CHECK(!getrlimit(RLIMIT_NOFILE, &rl));
	low = rl;
	low.rlim_cur = 64;
	if (!mkdir(dir, 0755) && !stat(dir, &sb) && !setrlimit(RLIMIT_NOFILE, &low)) {
		s = cgroup_stats__new(1);
		setrlimit(RLIMIT_NOFILE, &rl);
		CHECK(s);
		if (s) {
			struct stat root;

			CHECK(!stat(mnt, &root));
			cgroup_stats__read(s, root.st_ino, "/", &out);
			CHECK_EQ_INT(cgroup_stats__open_files(s), count_files(mnt));
			cgroup_stats__read(s, sb.st_ino, rel, &out);
			CHECK_EQ_INT(cgroup_stats__open_files(s), 4); /* up to the budget */
			/* the third is read without keeping it */
			CHECK_EQ_INT(cgroup_stats__read(s, sb.st_ino + 1000000, rel, &out), have);
			CHECK_EQ_INT(cgroup_stats__open_files(s), 4);
			cgroup_stats__free(s);
		}
	}
out:
	rmdir(dir);
}

int main(void)
{
	test_find_mount();
	test_cpu_stat();
	test_pressure();
	test_kept_files();
	return check_summary();
}
