// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "top_user.h"

#define UID_GONE ((__s64)-1)

struct pid_slot {
	__u32 pid; /* 0: empty */
	__u64 start_ns;
	__s64 uid;
	__u64 seen_gen;
};

struct uid_name {
	__s64 uid;
	char *name;
};

struct top_users {
	char proc_root[256];
	struct pid_slot *slots;
	size_t cap, used; /* cap: a power of two */
	struct uid_name *names;
	size_t nr_names, cap_names;
	__u64 gen;
};

struct top_users *top_users__new(const char *proc_root)
{
	struct top_users *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	snprintf(u->proc_root, sizeof(u->proc_root), "%s", proc_root);
	u->cap = 1024;
	u->slots = calloc(u->cap, sizeof(*u->slots));
	if (!u->slots) {
		free(u);
		return NULL;
	}
	return u;
}

static __s64 read_uid(const struct top_users *u, __u32 pid)
{
	char path[300], buf[4096], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%u/status", u->proc_root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return UID_GONE;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return UID_GONE;
	buf[n] = '\0';
	p = strstr(buf, "\nUid:");
	if (!p)
		return UID_GONE;
	return strtoll(p + 5, NULL, 10);
}

static const char *uid_name(struct top_users *u, __s64 uid)
{
	struct passwd pw, *res = NULL;
	char buf[1024], num[24];
	size_t i;

	if (uid == UID_GONE)
		return "-";
	for (i = 0; i < u->nr_names; i++)
		if (u->names[i].uid == uid)
			return u->names[i].name;
	if (u->nr_names == u->cap_names) {
		size_t cap = u->cap_names ? u->cap_names * 2 : 16;
		struct uid_name *names = realloc(u->names, cap * sizeof(*names));

		if (!names)
			return "?";
		u->names = names;
		u->cap_names = cap;
	}
	getpwuid_r((uid_t)uid, &pw, buf, sizeof(buf), &res);
	snprintf(num, sizeof(num), "%lld", (long long)uid);
	u->names[u->nr_names].uid = uid;
	u->names[u->nr_names].name = strdup(res ? res->pw_name : num);
	if (!u->names[u->nr_names].name)
		return "?";
	return u->names[u->nr_names++].name;
}

static struct pid_slot *slot_of(struct pid_slot *slots, size_t cap, __u32 pid)
{
	size_t i = (pid * 2654435761U) & (cap - 1);

	while (slots[i].pid && slots[i].pid != pid)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

/* Rehash into a table twice as big as what is still in use, dropping the stale. */
static void rehash(struct top_users *u)
{
	size_t cap = 1024, i, live = 0;
	struct pid_slot *slots;

	for (i = 0; i < u->cap; i++)
		if (u->slots[i].pid && u->slots[i].seen_gen + 2 >= u->gen)
			live++;
	while (cap < live * 4)
		cap *= 2;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return;
	for (i = 0; i < u->cap; i++)
		if (u->slots[i].pid && u->slots[i].seen_gen + 2 >= u->gen)
			*slot_of(slots, cap, u->slots[i].pid) = u->slots[i];
	free(u->slots);
	u->slots = slots;
	u->cap = cap;
	u->used = live;
}

const char *top_users__name(struct top_users *u, __u32 pid, __u64 start_ns)
{
	struct pid_slot *s;

	if (pid == 0)
		return "root";
	if (u->used * 2 >= u->cap) {
		rehash(u);
		if (u->used * 2 >= u->cap)
			return uid_name(u, read_uid(u, pid));
	}
	s = slot_of(u->slots, u->cap, pid);
	if (!s->pid) {
		s->pid = pid;
		u->used++;
	} else if (s->start_ns == start_ns && s->uid != UID_GONE) {
		s->seen_gen = u->gen;
		return uid_name(u, s->uid);
	}
	s->start_ns = start_ns;
	s->uid = read_uid(u, pid);
	s->seen_gen = u->gen;
	return uid_name(u, s->uid);
}

void top_users__next_gen(struct top_users *u)
{
	u->gen++;
	if (u->gen % 64 == 0)
		rehash(u);
}

void top_users__free(struct top_users *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->nr_names; i++)
		free(u->names[i].name);
	free(u->names);
	free(u->slots);
	free(u);
}
