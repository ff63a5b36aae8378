// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Symbolization. A user address goes through the process's executable
 * mappings (recorded when the process was first seen) to a file offset, then
 * through the file's PT_LOAD segments to an ELF virtual address, which
 * libdwfl names from the file's symbol table or its separate debug file
 * (.gnu_debuglink, build-id). Files are opened once, when first mapped, and
 * shared by every process that maps them: one open file per inode, not per
 * process, and a file stays readable after its process is gone.
 *
 * C++ and Rust names are demangled (libiberty's cplus_demangle, which knows
 * the Itanium C++ ABI and both Rust manglings). Code outside every file
 * mapping (JIT code: Node.js, the JVM, Python 3.12 -X perf) is named from
 * /tmp/perf-PID.map, the "START SIZE name" lines (hex) such runtimes write.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libiberty/demangle.h>
#include "symbolize.h"
#include "util.h"

#define PROC_BUCKETS  4096
#define FILE_BUCKETS  1024
#define MAX_SEGS      16
#define KSYM_LAST_MAX 0x100000 /* past the last kernel symbol, at most 1 MB is its */

struct load_seg {
	__u64 off;
	__u64 filesz;
	__u64 vaddr;
};

/* A mapped file (one per device and inode), open for as long as we run. */
struct elf_file {
	dev_t dev;
	ino_t ino;
	char *base; /* basename, for "module+0xoff" */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	struct load_seg segs[MAX_SEGS];
	int nr_segs;
	struct elf_file *next;
};

struct mapping {
	__u64 start;
	__u64 end;
	__u64 pgoff;
	__u64 ino;
	struct elf_file *file; /* NULL when the file could not be opened */
	char *name; /* basename, or "[vdso]"-style name */
};

/* The executable mappings of a process at one point in time. */
struct maps_snap {
	struct mapping *m;
	size_t n;
	struct maps_snap *older;
};

/* One line of a /tmp/perf-PID.map. */
struct jit_sym {
	__u64 start;
	__u64 size;
	size_t name; /* offset into names */
	size_t line; /* later lines win over earlier ones at the same address */
};

/* A process's perf map, read when first needed and again when it grew. */
struct perf_map {
	struct jit_sym *syms; /* by start */
	size_t n;
	char *names;
	off_t read_size;
	__u64 checked_ns; /* when the file's size was last looked at */
};

/* A perf map is read whole into memory: a long-running JVM's is ~100 MB. */
#define PERF_MAP_MAX_BYTES  (1LL << 30)
#define PERF_MAP_RECHECK_NS 1000000000ULL /* a map still written to: read again after 1 s */

struct proc {
	pid_t tgid;
	struct maps_snap *snaps; /* newest first */
	struct perf_map *jit;
	bool perf_map_refused; /* and said why */
	struct proc *next;
};

struct ksym {
	__u64 addr;
	size_t name; /* offset into ksym_names */
};

struct symbolizer {
	struct proc *procs[PROC_BUCKETS];
	struct elf_file *files[FILE_BUCKETS];
	struct ksym *ksyms;
	size_t nr_ksyms;
	char *ksym_names;
	bool ksyms_loaded;
};

static char *debuginfo_path;

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

struct symbolizer *symbolizer__new(void)
{
	elf_version(EV_CURRENT);
	return calloc(1, sizeof(struct symbolizer));
}

static void snap_free(struct maps_snap *snap)
{
	size_t i;

	for (i = 0; i < snap->n; i++)
		free(snap->m[i].name);
	free(snap->m);
	free(snap);
}

void perf_map__free(struct perf_map *pm)
{
	if (!pm)
		return;
	free(pm->syms);
	free(pm->names);
	free(pm);
}

void symbolizer__free(struct symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < PROC_BUCKETS; i++) {
		while (s->procs[i]) {
			struct proc *p = s->procs[i];

			s->procs[i] = p->next;
			while (p->snaps) {
				struct maps_snap *snap = p->snaps;

				p->snaps = snap->older;
				snap_free(snap);
			}
			perf_map__free(p->jit);
			free(p);
		}
	}
	for (i = 0; i < FILE_BUCKETS; i++) {
		while (s->files[i]) {
			struct elf_file *f = s->files[i];

			s->files[i] = f->next;
			if (f->dwfl)
				dwfl_end(f->dwfl);
			free(f->base);
			free(f);
		}
	}
	free(s->ksyms);
	free(s->ksym_names);
	free(s);
}

static struct proc *proc_find(struct symbolizer *s, pid_t tgid)
{
	struct proc *p;

	for (p = s->procs[(unsigned int)tgid % PROC_BUCKETS]; p; p = p->next)
		if (p->tgid == tgid)
			return p;
	return NULL;
}

static struct proc *proc_new(struct symbolizer *s, pid_t tgid)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->tgid = tgid;
	p->next = s->procs[(unsigned int)tgid % PROC_BUCKETS];
	s->procs[(unsigned int)tgid % PROC_BUCKETS] = p;
	return p;
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Read the PT_LOAD segments, to turn file offsets into virtual addresses. */
static int elf_file__segments(struct elf_file *f)
{
	GElf_Phdr phdr;
	size_t nr, i;
	Elf *elf;

	elf = dwfl_module_getelf(f->mod, &f->bias);
	if (!elf || elf_getphdrnum(elf, &nr))
		return -EINVAL;
	for (i = 0; i < nr && f->nr_segs < MAX_SEGS; i++) {
		if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_LOAD)
			continue;
		f->segs[f->nr_segs].off = phdr.p_offset;
		f->segs[f->nr_segs].filesz = phdr.p_filesz;
		f->segs[f->nr_segs].vaddr = phdr.p_vaddr;
		f->nr_segs++;
	}
	return f->nr_segs ? 0 : -ENOEXEC;
}

/*
 * Open the file of a mapping. /proc/PID/map_files reaches the very file
 * mapped, even deleted or in another mount namespace (it needs
 * CAP_SYS_ADMIN); then the path in the process's root; then the path here.
 */
static int mapped_file_open(pid_t tgid, const struct mapping *m, const char *path)
{
	char buf[4096 + 64];
	struct stat st;
	int fd;

	snprintf(buf, sizeof(buf), "/proc/%d/map_files/%llx-%llx", tgid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	snprintf(buf, sizeof(buf), "/proc/%d/root%s", tgid, path);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* The path may now name another file: only the one mapped will do. */
	if (fstat(fd, &st) || st.st_ino != m->ino || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

static struct elf_file *elf_file__get(struct symbolizer *s, pid_t tgid, const struct mapping *m,
				      const char *path, dev_t dev)
{
	unsigned int h = (unsigned int)((m->ino * 31) ^ dev) % FILE_BUCKETS;
	struct elf_file *f;
	int fd;

	for (f = s->files[h]; f; f = f->next)
		if (f->ino == m->ino && f->dev == dev)
			return f->mod ? f : NULL;

	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->dev = dev;
	f->ino = m->ino;
	f->base = strdup(basename_of(path));
	f->next = s->files[h];
	s->files[h] = f;
	/* A failure is remembered too: it is not retried for every process. */
	fd = mapped_file_open(tgid, m, path);
	if (fd < 0)
		return NULL;
	f->dwfl = dwfl_begin(&offline_callbacks);
	if (!f->dwfl) {
		close(fd);
		return NULL;
	}
	dwfl_report_begin(f->dwfl);
	/* libdwfl owns fd from here; path is where debug files are looked for. */
	f->mod = dwfl_report_offline(f->dwfl, f->base, path, fd);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->mod || elf_file__segments(f)) {
		f->mod = NULL;
		return NULL;
	}
	return f;
}

static int mapping_cmp(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static bool snap_same(const struct maps_snap *a, const struct maps_snap *b)
{
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (a->m[i].start != b->m[i].start || a->m[i].end != b->m[i].end ||
		    a->m[i].pgoff != b->m[i].pgoff || a->m[i].ino != b->m[i].ino)
			return false;
	return true;
}

/* Parse one /proc/PID/maps line; only executable mappings are kept. */
static int maps_line(struct symbolizer *s, pid_t tgid, char *line, struct mapping *m)
{
	unsigned long long start, end, pgoff, ino;
	unsigned int major, minor;
	char perms[8], *path;
	int pos = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &major,
		   &minor, &ino, &pos) < 7 ||
	    !pos)
		return -EINVAL;
	if (strlen(perms) < 3 || perms[2] != 'x')
		return -ENOENT;
	path = line + pos;
	path[strcspn(path, "\n")] = '\0';
	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->ino = ino;
	if (path[0] == '/' && ino) {
		m->name = strdup(basename_of(path));
		m->file = elf_file__get(s, tgid, m, path, makedev(major, minor));
	} else if (path[0] == '[') {
		m->name = strdup(path);
	} else {
		m->name = NULL; /* anonymous: JIT code and the like */
	}
	if (!m->name && path[0])
		return -ENOMEM;
	return 0;
}

int symbolizer__add_process(struct symbolizer *s, pid_t tgid)
{
	struct maps_snap *snap;
	struct proc *p;
	char path[64], *line = NULL;
	size_t cap = 0, alloc = 0;
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", tgid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	snap = calloc(1, sizeof(*snap));
	if (!snap) {
		fclose(f);
		return -ENOMEM;
	}
	while (getline(&line, &cap, f) > 0) {
		struct mapping m, *nm;
		int r;

		nm = array__room(snap->m, snap->n, &alloc, sizeof(*nm));
		if (!nm) {
			err = -ENOMEM;
			break;
		}
		snap->m = nm;
		r = maps_line(s, tgid, line, &m);
		if (r == -ENOMEM) {
			err = r;
			break;
		}
		if (!r)
			snap->m[snap->n++] = m;
	}
	free(line);
	fclose(f);
	/* An exited process reads as empty: that is no snapshot. */
	if (!err && !snap->n)
		err = -ESRCH;
	if (err) {
		snap_free(snap);
		return err;
	}
	qsort(snap->m, snap->n, sizeof(*snap->m), mapping_cmp);

	p = proc_find(s, tgid) ?: proc_new(s, tgid);
	if (!p) {
		snap_free(snap);
		return -ENOMEM;
	}
	if (p->snaps && snap_same(p->snaps, snap)) {
		snap_free(snap);
		return 0;
	}
	snap->older = p->snaps;
	p->snaps = snap;
	return 0;
}

static const struct mapping *snap_find(const struct maps_snap *snap, __u64 addr)
{
	size_t lo = 0, hi = snap->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < snap->m[mid].start)
			hi = mid;
		else if (addr >= snap->m[mid].end)
			lo = mid + 1;
		else
			return &snap->m[mid];
	}
	return NULL;
}

static int jit_sym_cmp(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

const char *perf_map__refusal(const struct stat *st, uid_t uid, char *buf, size_t len)
{
	if (!S_ISREG(st->st_mode))
		return "not a regular file";
	if (st->st_size > PERF_MAP_MAX_BYTES)
		return "larger than 1 GiB";
	if (st->st_uid && st->st_uid != uid) {
		snprintf(buf, len, "owned by uid %u, neither the process's user (uid %u) nor root",
			 (unsigned int)st->st_uid, (unsigned int)uid);
		return buf;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(buf, len, "writable by %s (mode %04o)",
			 st->st_mode & S_IWOTH ? "others" : "its group",
			 (unsigned int)(st->st_mode & 07777));
		return buf;
	}
	return NULL;
}

/*
 * Open the process's perf map: in its root (a container) first, then here.
 * A map it may not be read from is said once per process (p->perf_map_refused).
 */
static FILE *perf_map_open(struct proc *p, struct stat *st)
{
	char path[128], proc[32], why[128];
	const char *refusal = NULL;
	struct stat owner;
	int fd;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/root/tmp/perf-%d.map", p->tgid, p->tgid);
	/* not a link (to a file of root's), nor a FIFO that would block the open */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", p->tgid);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	}
	if (fd < 0) {
		if (errno == ELOOP)
			refusal = "a symbolic link";
	} else {
		snprintf(proc, sizeof(proc), "/proc/%d", p->tgid);
		if (fstat(fd, st) || stat(proc, &owner)) {
			close(fd);
			fd = -1;
		} else {
			refusal = perf_map__refusal(st, owner.st_uid, why, sizeof(why));
		}
	}
	if (refusal) {
		if (!p->perf_map_refused)
			pr_err("%s not read, %s: JIT code of process %d stays unnamed\n", path,
			       refusal, p->tgid);
		p->perf_map_refused = true;
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

struct perf_map *perf_map__read(FILE *f)
{
	size_t cap = 0, names_len = 0, names_cap = 0, lcap = 0;
	struct perf_map *npm = calloc(1, sizeof(*npm));
	char *line = NULL;
	ssize_t len;

	if (!npm)
		return NULL;
	while ((len = getline(&line, &lcap, f)) > 0) {
		unsigned long long start, size;
		size_t nlen;
		int pos = 0;

		if (sscanf(line, "%llx %llx %n", &start, &size, &pos) < 2 || !pos || !size)
			continue;
		line[strcspn(line, "\n")] = '\0';
		nlen = strlen(line + pos) + 1;
		if (npm->n == cap) {
			size_t c = cap ? cap * 2 : 1024;
			struct jit_sym *js = realloc(npm->syms, c * sizeof(*js));

			if (!js)
				break;
			npm->syms = js;
			cap = c;
		}
		if (names_len + nlen > names_cap) {
			size_t c = names_cap ? names_cap * 2 : 65536;
			char *nn;

			while (c < names_len + nlen)
				c *= 2;
			nn = realloc(npm->names, c);
			if (!nn)
				break;
			npm->names = nn;
			names_cap = c;
		}
		memcpy(npm->names + names_len, line + pos, nlen);
		npm->syms[npm->n] = (struct jit_sym){ start, size, names_len, npm->n };
		npm->n++;
		names_len += nlen;
	}
	free(line);
	/* an empty map has no array, and qsort takes no NULL (C11 7.22.5) */
	if (npm->n > 1)
		qsort(npm->syms, npm->n, sizeof(*npm->syms), jit_sym_cmp);
	return npm;
}

size_t perf_map__nr(const struct perf_map *pm)
{
	return pm->n;
}

const char *perf_map__find(const struct perf_map *pm, __u64 addr)
{
	size_t lo = 0, hi = pm->n, i;

	/* The last symbol starting at or below addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Code can be moved and its space reused: of those that hold addr, the latest. */
	for (i = lo; i-- > 0 && lo - i <= 64;)
		if (addr - pm->syms[i].start < pm->syms[i].size)
			return pm->names + pm->syms[i].name;
	return NULL;
}

/* (Re)read a process's perf map if it is new or has grown. */
static struct perf_map *perf_map_get(struct proc *p)
{
	struct perf_map *pm = p->jit, *npm;
	struct stat st;
	__u64 now = now_ns(CLOCK_MONOTONIC);
	FILE *f;

	if (pm && now - pm->checked_ns < PERF_MAP_RECHECK_NS)
		return pm->n ? pm : NULL;
	if (pm)
		pm->checked_ns = now;
	f = perf_map_open(p, &st);
	if (!f)
		return pm && pm->n ? pm : NULL;
	if (pm && pm->read_size == st.st_size) {
		fclose(f);
		return pm;
	}
	npm = perf_map__read(f);
	fclose(f);
	if (!npm)
		return pm;
	npm->read_size = st.st_size;
	npm->checked_ns = now;
	perf_map__free(pm);
	p->jit = npm;
	return npm;
}

/* The name of a JIT address from the perf map, or NULL. */
static const char *perf_map_find(struct proc *p, __u64 addr)
{
	const struct perf_map *pm = perf_map_get(p);

	return pm ? perf_map__find(pm, addr) : NULL;
}

/*
 * An ELF symbol's name, without the version a symbol table may carry in it
 * ("__libc_start_main@@GLIBC_2.34", "memcpy@GLIBC_2.2.5": the names .symver
 * gives), as perf shows it, and demangled when it is a C++ or Rust symbol,
 * into buf. A mangled name has no '@'.
 */
static void name_copy(const char *name, char *buf, size_t len)
{
	size_t n = strcspn(name, "@");
	char *bare = NULL, *dm = NULL;

	if (!n) /* not a version: a name of its own */
		n = strlen(name);
	if (name[n]) {
		bare = strndup(name, n);
		if (bare)
			name = bare;
	}
	if (name[0] == '_' && (name[1] == 'Z' || name[1] == 'R'))
		dm = cplus_demangle(name, DMGL_AUTO);
	snprintf(buf, len, "%.*s", (int)(dm ? strlen(dm) : n), dm ? dm : name);
	free(dm);
	free(bare);
}

const char *symbolizer__user(struct symbolizer *s, pid_t tgid, __u64 addr, bool ret_addr, char *buf,
			     size_t len)
{
	const struct mapping *m = NULL;
	const struct maps_snap *snap;
	const struct elf_file *f;
	__u64 a = ret_addr && addr ? addr - 1 : addr, off, vaddr = 0;
	struct proc *p;
	const char *name;
	GElf_Off symoff;
	GElf_Sym sym;
	int i;

	p = proc_find(s, tgid);
	if (!p) {
		/* Never seen: read it now if it is alive, or remember it is not. */
		if (symbolizer__add_process(s, tgid))
			proc_new(s, tgid);
		p = proc_find(s, tgid);
	}
	for (snap = p ? p->snaps : NULL; snap && !m; snap = snap->older)
		m = snap_find(snap, a);
	if (!m || !m->name || !strncmp(m->name, "[anon", 5)) {
		/* Anonymous executable memory (or mapped since): JIT code. */
		name = p ? perf_map_find(p, a) : NULL;
		snprintf(buf, len, "%s", name ? name : "[unknown]");
		return buf;
	}
	if (m->name[0] == '[') {
		snprintf(buf, len, "%s", m->name);
		return buf;
	}
	off = a - m->start + m->pgoff;
	f = m->file;
	for (i = 0; f && i < f->nr_segs; i++) {
		if (off >= f->segs[i].off && off < f->segs[i].off + f->segs[i].filesz) {
			vaddr = off - f->segs[i].off + f->segs[i].vaddr;
			break;
		}
	}
	if (!f || i == f->nr_segs) {
		/* No ELF to look in: the offset in the file is all we have. */
		snprintf(buf, len, "%s+0x%llx", m->name, (unsigned long long)(off + (addr - a)));
		return buf;
	}
	name = dwfl_module_addrinfo(f->mod, vaddr + f->bias, &symoff, &sym, NULL, NULL, NULL);
	if (name && *name)
		name_copy(name, buf, len);
	else
		snprintf(buf, len, "%s+0x%llx", m->name, (unsigned long long)(vaddr + (addr - a)));
	return buf;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int ksyms_load(struct symbolizer *s)
{
	size_t names_len = 0, names_cap = 0, cap = 0;
	char line[512], name[256], type;
	unsigned long long addr;
	FILE *f;

	s->ksyms_loaded = true;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		size_t nlen;

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || !addr)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		nlen = strlen(name) + 1;
		if (s->nr_ksyms == cap) {
			size_t n = cap ? cap * 2 : 65536;
			struct ksym *k = realloc(s->ksyms, n * sizeof(*k));

			if (!k)
				break;
			s->ksyms = k;
			cap = n;
		}
		if (names_len + nlen > names_cap) {
			size_t n = names_cap ? names_cap * 2 : 1 << 20;
			char *p = realloc(s->ksym_names, n);

			if (!p)
				break;
			s->ksym_names = p;
			names_cap = n;
		}
		memcpy(s->ksym_names + names_len, name, nlen);
		s->ksyms[s->nr_ksyms].addr = addr;
		s->ksyms[s->nr_ksyms].name = names_len;
		s->nr_ksyms++;
		names_len += nlen;
	}
	fclose(f);
	/* none when kptr_restrict hides the addresses: then there is no array */
	if (s->nr_ksyms > 1)
		qsort(s->ksyms, s->nr_ksyms, sizeof(*s->ksyms), ksym_cmp);
	return 0;
}

const char *symbolizer__kernel(struct symbolizer *s, __u64 addr, bool ret_addr, char *buf,
			       size_t len)
{
	__u64 a = ret_addr && addr ? addr - 1 : addr;
	size_t lo = 0, hi;

	if (!s->ksyms_loaded)
		ksyms_load(s);
	hi = s->nr_ksyms;
	/* The last symbol at or below a. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ksyms[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || (lo == s->nr_ksyms && a - s->ksyms[lo - 1].addr > KSYM_LAST_MAX)) {
		snprintf(buf, len, "[unknown]");
		return buf;
	}
	snprintf(buf, len, "%s", s->ksym_names + s->ksyms[lo - 1].name);
	return buf;
}
