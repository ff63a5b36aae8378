// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A command run in a cgroup of its own (cmdrun.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/sched.h>
#include "cgroup.h"
#include "cmdrun.h"
#include "commands.h"
#include "util.h"

#define CMDRUN_PREFIX "pmbpf-stat-"

/* The signals received, for forwarding: the first passed on, more escalate. */
static volatile sig_atomic_t nr_signals, last_signal;
/* A command runs: a signal is the command's to act on, not pmbpf's. */
static volatile sig_atomic_t command_running;
/*
 * signals__setup()'s handler: pmbpf stops, and its output blocked by a
 * reader that does not read no longer keeps it (common.c).
 */
static struct sigaction stop_action;

/* pmbpf stops: signals__setup()'s handler sets exiting. */
static void stop(int sig)
{
	if (stop_action.sa_handler != SIG_DFL && stop_action.sa_handler != SIG_IGN)
		stop_action.sa_handler(sig);
	else
		exiting = 1;
}

/* While a command runs, pmbpf stops when it ends (command_ended()). */
static void on_signal(int sig)
{
	last_signal = sig;
	nr_signals++;
	if (!command_running)
		stop(sig);
}

/*
 * SIGINT and SIGTERM are held until both handlers are this file's: one
 * that came between signals__setup() and them stopped pmbpf without
 * last_signal, and stat exited 128 + 0 (seen under load).
 */
int cmdrun__signals_setup(void)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	sigset_t stops, old;
	int err = 0;

	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	sigprocmask(SIG_BLOCK, &stops, &old);
	sigemptyset(&sa.sa_mask);
	if (signals__setup())
		err = -1;
	else if (sigaction(SIGINT, &sa, &stop_action) || sigaction(SIGTERM, &sa, NULL))
		err = -errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return err;
}

/* The command has ended: a stop signal received meanwhile stops pmbpf too. */
static void command_ended(struct cmdrun *r)
{
	r->done = true;
	command_running = 0;
	if (nr_signals)
		stop(last_signal);
}

int cmdrun__last_signal(void)
{
	return last_signal;
}

/* Start time of a process in clock ticks since boot (field 22 of stat); 0 if gone. */
static unsigned long long proc_starttime(pid_t pid)
{
	unsigned long long start;
	char state;

	return task__stat(pid, 0, &state, &start) ? 0 : start;
}

/*
 * Whether the pmbpf that made the cgroup directory name is still running:
 * "pmbpf-stat-PID-START" names its pid and start time, which no later process
 * of this boot shares. Directories of older versions ("pmbpf-stat-PID") count
 * as live while a process named pmbpf has that pid.
 */
static bool owner_alive(const char *name)
{
	unsigned long long pid, start = 0;
	char comm[32] = "";
	char *end;

	pid = strtoull(name + strlen(CMDRUN_PREFIX), &end, 10);
	if (!pid || pid > INT_MAX)
		return true; /* not ours: leave it */
	if (*end == '-')
		start = strtoull(end + 1, &end, 10);
	if (*end)
		return true;
	if (start)
		return proc_starttime((pid_t)pid) == start;
	return !process__comm((pid_t)pid, comm, sizeof(comm)) && !strcmp(comm, "pmbpf");
}

/* rmdir a cgroup and its empty run-N children. */
static int rmdir_tree(const char *path)
{
	char sub[4700];
	struct dirent *de;
	DIR *d = opendir(path);

	if (d) {
		while ((de = readdir(d)))
			if (de->d_type == DT_DIR && !strncmp(de->d_name, "run-", 4)) {
				snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
				rmdir(sub);
			}
		closedir(d);
	}
	return rmdir(path) ? -errno : 0;
}

/* The cgroup or a descendant holds a process (cgroup.events "populated 1"). */
static bool populated(const char *path)
{
	char file[4500], line[64];
	bool yes = false;
	FILE *f;

	snprintf(file, sizeof(file), "%s/cgroup.events", path);
	f = fopen(file, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strcmp(line, "populated 1\n"))
			yes = true;
	fclose(f);
	return yes;
}

int cmdrun__stale_cgroups(bool remove, void (*cb)(const char *path, bool busy, void *ctx),
			  void *ctx)
{
	char mount[4096], path[4400];
	struct dirent *de;
	int nr = 0;
	DIR *d;

	if (cgroup__find_mount("/proc/self/mountinfo", mount, sizeof(mount)))
		return 0;
	d = opendir(mount);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		bool busy = true;

		if (de->d_type != DT_DIR ||
		    strncmp(de->d_name, CMDRUN_PREFIX, strlen(CMDRUN_PREFIX)) ||
		    owner_alive(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", mount, de->d_name);
		if (remove)
			busy = rmdir_tree(path) != 0;
		else
			busy = populated(path);
		nr++;
		if (cb)
			cb(path, busy, ctx);
	}
	closedir(d);
	return nr;
}

static void note_stale(const char *path, bool busy, void *ctx)
{
	if (busy)
		pr_err("%s, left by a killed pmbpf stat or profile, still holds processes: 'echo 1 > %s/cgroup.kill' ends them\n",
		       path, path);
}

int cmdrun__create_cgroup(char *buf, size_t len)
{
	char name[96];

	cmdrun__stale_cgroups(true, note_stale, NULL);
	snprintf(name, sizeof(name), CMDRUN_PREFIX "%d-%llu", (int)getpid(),
		 proc_starttime(getpid()));
	return cgroup__create(name, buf, len);
}

void cmdrun__remove_cgroup(const char *path)
{
	if (path[0] && rmdir_tree(path) == -EBUSY)
		pr_err("processes of the command are still running in %s\n", path);
}

/*
 * Fault in, before the stop, what the exec path runs after it. fork()
 * copies no page table entries of file mappings (libc's code) and shares
 * the stack copy-on-write, so each code page and deeper stack page the
 * child's execvp() first touches faults once: between the stop, where
 * counting starts, and the exec, where perf stat's enable_on_exec starts.
 * That was 2-4 page faults more than perf stat for /bin/true (medians of 7:
 * 51-52 against 49, the same as a counter attached at the stop); mostly
 * execvp()'s path to execve() and its strchr(); now 48-50. A bare name's
 * PATH walk still faults once or twice (51 against 49-50 for "true").
 */
static void exec_path_warm(void)
{
	volatile char stack[8192];
	char *none[] = { NULL };
	size_t i;

	for (i = 0; i < sizeof(stack); i += 256)
		stack[i] = 0;
	execvp("/", none); /* EACCES: execvp()'s path to execve() and the kernel's */
}

/*
 * The child: move into the cgroup (unless born there), stop, and once pmbpf
 * has taken what it needs and sent SIGCONT, run the command. What the child
 * does before the stop (its fork's page faults, this setup) is not the
 * command's: perf stat counts from the exec too (enable_on_exec).
 */
static void child(const char *cgroup, bool inside, char **argv)
{
	char path[4300];
	FILE *f;

	/* pmbpf ignores SIGPIPE; an ignored signal stays ignored across exec */
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (!inside) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
		f = fopen(path, "w");
		if (!f || fprintf(f, "0\n") < 0 || fclose(f)) {
			pr_err("cannot move into %s: %s\n", cgroup, strerror(errno));
			_exit(127);
		}
	}
	exec_path_warm();
	raise(SIGSTOP);
	execvp(argv[0], argv);
	pr_err("cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/*
 * A child born in the cgroup (clone3 CLONE_INTO_CGROUP, Linux 5.7): a task
 * that moves itself in while running would have its span split at the move,
 * and the part before it is not the command's. fork() and a move before
 * that.
 */
static pid_t fork_into(int cgroup_fd, bool *inside)
{
	struct clone_args args = {
		.flags = CLONE_INTO_CGROUP,
		.exit_signal = SIGCHLD,
		.cgroup = (__u64)cgroup_fd,
	};
	pid_t pid = -1;

	*inside = false;
	if (cgroup_fd >= 0) {
		pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
		if (pid >= 0) {
			*inside = true;
			return pid;
		}
	}
	return fork();
}

static int pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	errno = ENOSYS;
	return -1;
#endif
}

/*
 * Wait for the child to stop before its exec. Returns 1 when it stopped, 0
 * when it ended instead (*status has why), or -errno.
 */
static int wait_stopped(pid_t pid, int *status)
{
	for (;;) {
		if (waitpid(pid, status, WUNTRACED) == pid)
			return WIFSTOPPED(*status) ? 1 : 0;
		if (errno != EINTR)
			return -errno;
	}
}

int cmdrun__start(struct cmdrun *r, const char *parent, int index, char **argv)
{
	int err, cgfd, stopped;
	bool inside;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	r->pidfd = -1;
	snprintf(r->cgroup, sizeof(r->cgroup), "%s/run-%d", parent, index);
	if (mkdir(r->cgroup, 0755)) {
		err = -errno;
		pr_err("cannot create cgroup %s: %s\n", r->cgroup, strerror(-err));
		r->cgroup[0] = '\0';
		return err;
	}
	r->cgroup_id = cgroup__id_of(r->cgroup);
	cgfd = open(r->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	command_running = 1;
	pid = fork_into(cgfd, &inside);
	if (cgfd >= 0 && pid)
		close(cgfd);
	if (pid < 0) {
		err = -errno;
		command_running = 0;
		pr_err("fork: %s\n", strerror(-err));
		return err;
	}
	if (!pid)
		child(r->cgroup, inside, argv);
	r->pid = pid;
	r->pidfd = pidfd_open(pid);
	stopped = wait_stopped(pid, &r->status);
	if (stopped < 0) {
		pr_err("cannot wait for the command: %s\n", strerror(-stopped));
		cmdrun__kill(r);
		return stopped;
	}
	/* not stopped: it ended before its exec, and its exit code says why */
	if (!stopped)
		command_ended(r);
	return 0;
}

int cmdrun__go(struct cmdrun *r)
{
	int err;

	r->start_ns = now_ns(CLOCK_MONOTONIC);
	if (r->done || !kill(r->pid, SIGCONT))
		return 0;
	err = -errno;
	pr_err("cannot start the command: %s\n", strerror(-err));
	cmdrun__kill(r);
	return err;
}

/*
 * Pass a signal on: the first as received (SIGTERM stays SIGTERM, so that
 * `timeout` works), any further one as SIGKILL to the whole run cgroup.
 */
static void forward_signals(struct cmdrun *r)
{
	char path[4300];
	int fd;

	if (nr_signals == r->forwarded)
		return;
	if (!r->forwarded) {
		kill(r->pid, last_signal);
		r->forwarded = 1;
		return;
	}
	r->forwarded = nr_signals;
	snprintf(path, sizeof(path), "%s/cgroup.kill", r->cgroup);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "1", 1) != 1)
		kill(r->pid, SIGKILL); /* before Linux 5.14: the command, not its children */
	if (fd >= 0)
		close(fd);
}

static bool reap(struct cmdrun *r, int flags)
{
	if (waitpid(r->pid, &r->status, flags) != r->pid)
		return false;
	r->wall_ns = now_ns(CLOCK_MONOTONIC) - r->start_ns;
	command_ended(r);
	return true;
}

int cmdrun__wait(struct cmdrun *r, int fd, int timeout_ms)
{
	struct pollfd pfd[2] = { { .fd = r->pidfd, .events = POLLIN },
				 { .fd = fd, .events = POLLIN } };

	if (r->done)
		return 1;
	forward_signals(r);
	if (r->pidfd >= 0) {
		if (poll(pfd, 2, timeout_ms) > 0 && pfd[0].revents)
			return reap(r, 0);
		return 0;
	}
	/* no pidfd (before Linux 5.3): look every 5 ms */
	if (reap(r, WNOHANG))
		return 1;
	poll(pfd + 1, 1, timeout_ms < 5 ? timeout_ms : 5);
	return 0;
}

void cmdrun__kill(struct cmdrun *r)
{
	if (r->done || !r->pid)
		return;
	kill(r->pid, SIGKILL);
	while (waitpid(r->pid, &r->status, 0) < 0 && errno == EINTR)
		;
	command_ended(r);
}

void cmdrun__finish(struct cmdrun *r)
{
	if (r->pidfd >= 0)
		close(r->pidfd);
	r->pidfd = -1;
	if (r->cgroup[0] && rmdir(r->cgroup) && errno == EBUSY)
		pr_err("processes of the command are still running in %s\n", r->cgroup);
	r->cgroup[0] = '\0';
}
