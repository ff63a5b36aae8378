// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One options table per command: the getopt_long() arrays, the short-option
 * string and the usage text made from it, the refusal of bad tables, and
 * every command's own table.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "check.h"
#include "cmdopt.h"
#include "commands.h"

enum { OPT_DEMO_RAW = CMDOPT_LONG_ONLY, OPT_DEMO_TITLE };

static const struct cmdopt demo_opts[] = {
	{ 'e', "events", "LIST", "event names\nsecond line" },
	{ 'v', "verbose", NULL, "more output" },
	{ OPT_DEMO_RAW, "raw-tp", NULL, "raw tracepoints" },
	{ OPT_DEMO_TITLE, "title", "TEXT", "a title" },
	{ 'h', "help", NULL, "this help" },
	{},
};

static const struct cmdopts demo = {
	.cmd = "demo",
	.head = "Usage: pmbpf demo [OPTIONS]\nA demo.\n",
	.opts = demo_opts,
	.tail = "The end.\n",
};

/* The usage of demo: descriptions at column 24 (the minimum), continuations under them. */
static const char demo_usage[] = "Usage: pmbpf demo [OPTIONS]\n"
				 "A demo.\n"
				 "\n"
				 "  -e, --events LIST     event names\n"
				 "                        second line\n"
				 "  -v, --verbose         more output\n"
				 "      --raw-tp          raw tracepoints\n"
				 "      --title TEXT      a title\n"
				 "  -h, --help            this help\n"
				 "\n"
				 "The end.\n";

/* getopt_long() over argv (argc words) from the start; the first value and its optarg. */
static int parse_one(const struct cmdopt_getopt *g, int argc, char **argv, const char **arg)
{
	int c;

	optind = 0; /* glibc: start afresh, re-reading the '+' */
	opterr = 0;
	optarg = NULL;
	c = getopt_long(argc, argv, g->shorts, g->longs, NULL);
	*arg = optarg;
	return c;
}

/* Every option of c is taken as the table says, by its long name and by its letter. */
static void check_accepted(const struct cmdopts *c, const struct cmdopt_getopt *g)
{
	const struct cmdopt *o;
	char lng[64], eq[80], shrt[3], joined[16];
	const char *arg;
	int v;

	for (o = c->opts; o->name; o++) {
		snprintf(lng, sizeof(lng), "--%s", o->name);
		snprintf(eq, sizeof(eq), "--%s=x1", o->name);
		if (o->arg && o->arg[0] == '[') {
			/* optional: only --name=ARG gives it; the next word stays an operand */
			v = parse_one(g, 3, (char *[]){ "t", lng, "x1", NULL }, &arg);
			check_record(v == o->val && !arg, __FILE__, __LINE__, "%s: %s x1: %d '%s'",
				     c->cmd, lng, v, arg ?: "(null)");
			v = parse_one(g, 2, (char *[]){ "t", eq, NULL }, &arg);
			check_record(v == o->val && arg && !strcmp(arg, "x1"), __FILE__, __LINE__,
				     "%s: %s: %d", c->cmd, eq, v);
		} else if (o->arg) {
			v = parse_one(g, 3, (char *[]){ "t", lng, "x1", NULL }, &arg);
			check_record(v == o->val && arg && !strcmp(arg, "x1"), __FILE__, __LINE__,
				     "%s: %s x1: %d '%s'", c->cmd, lng, v, arg ?: "(null)");
			v = parse_one(g, 2, (char *[]){ "t", eq, NULL }, &arg);
			check_record(v == o->val && arg && !strcmp(arg, "x1"), __FILE__, __LINE__,
				     "%s: %s: %d", c->cmd, eq, v);
			v = parse_one(g, 2, (char *[]){ "t", lng, NULL }, &arg);
			check_record(v == '?' || v == ':', __FILE__, __LINE__,
				     "%s: %s without its argument: %d", c->cmd, lng, v);
		} else {
			v = parse_one(g, 2, (char *[]){ "t", lng, NULL }, &arg);
			check_record(v == o->val && !arg, __FILE__, __LINE__, "%s: %s: %d", c->cmd,
				     lng, v);
			v = parse_one(g, 2, (char *[]){ "t", eq, NULL }, &arg);
			check_record(v == '?', __FILE__, __LINE__, "%s: %s (takes none): %d",
				     c->cmd, eq, v);
		}
		if (o->val >= CMDOPT_LONG_ONLY)
			continue;
		snprintf(shrt, sizeof(shrt), "-%c", o->val);
		snprintf(joined, sizeof(joined), "-%cx1", o->val);
		if (o->arg) {
			v = parse_one(g, 3, (char *[]){ "t", shrt, "x1", NULL }, &arg);
			check_record(v == o->val && arg && !strcmp(arg, "x1"), __FILE__, __LINE__,
				     "%s: %s x1: %d", c->cmd, shrt, v);
			v = parse_one(g, 2, (char *[]){ "t", joined, NULL }, &arg);
			check_record(v == o->val && arg && !strcmp(arg, "x1"), __FILE__, __LINE__,
				     "%s: %s: %d", c->cmd, joined, v);
		} else {
			v = parse_one(g, 2, (char *[]){ "t", shrt, NULL }, &arg);
			check_record(v == o->val && !arg, __FILE__, __LINE__, "%s: %s: %d", c->cmd,
				     shrt, v);
		}
	}
	v = parse_one(g, 2, (char *[]){ "t", "--no-such-option", NULL }, &arg);
	check_record(v == '?', __FILE__, __LINE__, "%s: --no-such-option: %d", c->cmd, v);
}

/* The usage holds the head, every option (spec and each help line) and the tail. */
static void check_usage(const struct cmdopts *c)
{
	const struct cmdopt *o;
	char spec[128], line[256], *u;
	const char *h, *nl;
	size_t len = 0;

	u = cmdopt__usage(c, &len);
	if (!CHECK(u))
		return;
	CHECK_EQ_INT(len, strlen(u));
	check_record(!strncmp(u, c->head, strlen(c->head)), __FILE__, __LINE__,
		     "%s: usage starts with its head", c->cmd);
	if (c->tail)
		check_record(len > strlen(c->tail) && !strcmp(u + len - strlen(c->tail), c->tail),
			     __FILE__, __LINE__, "%s: usage ends with its tail", c->cmd);
	for (o = c->opts; o->name; o++) {
		if (o->val < CMDOPT_LONG_ONLY)
			snprintf(spec, sizeof(spec), "\n  -%c, --%s%s%s  ", o->val, o->name,
				 o->arg ? " " : "", o->arg ?: "");
		else
			snprintf(spec, sizeof(spec), "\n      --%s%s%s  ", o->name,
				 o->arg && o->arg[0] != '[' ? " " : "", o->arg ?: "");
		check_record(strstr(u, spec), __FILE__, __LINE__, "%s: '%s' in the usage", c->cmd,
			     spec + 1);
		for (h = o->help;; h = nl + 1) {
			nl = strchr(h, '\n');
			snprintf(line, sizeof(line), " %.*s\n", nl ? (int)(nl - h) : (int)strlen(h),
				 h);
			check_record(strstr(u, line), __FILE__, __LINE__,
				     "%s --%s: '%s' in the usage", c->cmd, o->name, line);
			if (!nl)
				break;
		}
	}
	free(u);
}

static void test_demo(void)
{
	struct cmdopt_getopt g;
	struct cmdopts permuting = demo;
	const char *arg;
	char msg[160];
	size_t len;
	char *u;
	int i;

	CHECK_EQ_INT(cmdopt__check(&demo, msg, sizeof(msg)), 0);
	if (!CHECK(!cmdopt__build(&demo, &g)))
		return;
	CHECK_STR(g.shorts, "+e:vh");
	for (i = 0; demo_opts[i].name; i++) {
		CHECK_STR(g.longs[i].name, demo_opts[i].name);
		CHECK_EQ_INT(g.longs[i].has_arg,
			     demo_opts[i].arg ? required_argument : no_argument);
		CHECK(!g.longs[i].flag);
		CHECK_EQ_INT(g.longs[i].val, demo_opts[i].val);
	}
	CHECK(!g.longs[i].name && !g.longs[i].val);
	check_accepted(&demo, &g);
	/* '+': the first operand ends the options (pmbpf stat -- CMD -v) */
	CHECK_EQ_INT(parse_one(&g, 3, (char *[]){ "t", "cmd", "-v", NULL }, &arg), -1);
	CHECK_EQ_INT(optind, 1);

	u = cmdopt__usage(&demo, &len);
	CHECK_STR(u, demo_usage);
	free(u);
	check_usage(&demo);

	permuting.permute = true;
	permuting.tail = NULL;
	if (!CHECK(!cmdopt__build(&permuting, &g)))
		return;
	CHECK_STR(g.shorts, "e:vh");
	CHECK_EQ_INT(parse_one(&g, 3, (char *[]){ "t", "file", "-v", NULL }, &arg), 'v');
	u = cmdopt__usage(&permuting, &len);
	CHECK(u && len > 10 && !strcmp(u + len - 10, "this help\n"));
	free(u);
}

/* A longer spec moves every description: two spaces after the longest. */
static void test_alignment(void)
{
	static const struct cmdopt opts[] = {
		{ 't', "threshold", "NAME=+P%", "a threshold\nrepeatable" },
		{ 'h', "help", NULL, "this help" },
		{},
	};
	static const struct cmdopts c = { .cmd = "wide", .head = "Usage: wide\n", .opts = opts };
	char *u = cmdopt__usage(&c, &(size_t){ 0 });

	CHECK_STR(u, "Usage: wide\n"
		     "\n"
		     "  -t, --threshold NAME=+P%  a threshold\n"
		     "                            repeatable\n"
		     "  -h, --help                this help\n");
	free(u);
}

static void check_refused(const struct cmdopt *opts, const char *why, int line)
{
	struct cmdopts c = { .cmd = "bad", .head = "Usage: bad\n", .opts = opts };
	struct cmdopt_getopt g;
	char msg[160] = "";
	int err = cmdopt__check(&c, msg, sizeof(msg));

	check_record(err == -EINVAL && strstr(msg, why), __FILE__, line,
		     "table refused (%d) saying '%s': '%s'", err, why, msg);
	check_record(cmdopt__build(&c, &g) == -EINVAL, __FILE__, line, "cmdopt__build refuses");
	/* the loop of a command with such a table: '?' (a usage error), then the end */
	memset(&g, 0, sizeof(g));
	check_record(cmdopt__next(&c, &g, 2, (char *[]){ "t", "-v", NULL }) == '?', __FILE__, line,
		     "cmdopt__next: '?' first");
	check_record(cmdopt__next(&c, &g, 2, (char *[]){ "t", "-v", NULL }) == -1, __FILE__, line,
		     "cmdopt__next: then -1");
}

/* cmdopt__next(): the loop of every command, built at its first call, from argv[1]. */
static void test_next(void)
{
	char *argv[] = { "t", "-v", "-e", "cycles", "--verbose", "x", NULL };
	struct cmdopt_getopt g = {};

	optind = 3; /* left by an earlier parse: the first call starts again */
	CHECK_EQ_INT(cmdopt__next(&demo, &g, 6, argv), 'v');
	CHECK(g.built && !g.bad);
	CHECK_EQ_INT(cmdopt__next(&demo, &g, 6, argv), 'e');
	CHECK_STR(optarg, "cycles");
	CHECK_EQ_INT(cmdopt__next(&demo, &g, 6, argv), 'v');
	CHECK_EQ_INT(cmdopt__next(&demo, &g, 6, argv), -1);
	CHECK_STR(argv[optind], "x");
}

#define REFUSED(why, ...) check_refused((const struct cmdopt[]){ __VA_ARGS__, {} }, why, __LINE__)

static void test_refused(void)
{
	static struct cmdopt many[CMDOPT_MAX + 2];
	static char names[CMDOPT_MAX + 1][8];
	int i;

	REFUSED("-e twice", { 'e', "events", "LIST", "events" }, { 'v', "verbose", NULL, "more" },
		{ 'e', "event", "NAME", "one event" });
	REFUSED("--events twice", { 'e', "events", "LIST", "events" },
		{ 'E', "events", "LIST", "events again" });
	REFUSED("same value 256", { 256, "folded", NULL, "folded" }, { 256, "svg", NULL, "svg" });
	REFUSED("no short letter", { '?', "what", NULL, "what" });
	REFUSED("needs a long-only option", { 'f', "freq", "[=HZ]", "a rate" });
	REFUSED("needs a long-only option", { 256, "freq", "[HZ]", "a rate" });
	REFUSED("no short letter", { 0, "zero", NULL, "zero" });
	REFUSED("bad option name", { 'e', "--events", "LIST", "events" });
	REFUSED("bad option name", { 'e', "Events", "LIST", "events" });
	REFUSED("bad option name", { 'e', "", "LIST", "events" });
	REFUSED("bad placeholder", { 'e', "events", "A LIST", "events" });
	REFUSED("bad placeholder", { 'e', "events", "", "events" });
	REFUSED("--events: a help line", { 'e', "events", "LIST", NULL });
	REFUSED("--events: a help line", { 'e', "events", "LIST", "" });
	REFUSED("--events: a help line", { 'e', "events", "LIST", "events\n-e again" });
	REFUSED("--events: a help line", { 'e', "events", "LIST", "events\n  indented" });
	REFUSED("--events: a help line", { 'e', "events", "LIST", "events\n" });
	REFUSED("--events: a help line", { 'e', "events", "LIST", "events\n\nmore" });

	for (i = 0; i < CMDOPT_MAX + 1; i++) {
		snprintf(names[i], sizeof(names[i]), "opt%d", i);
		many[i] = (struct cmdopt){ CMDOPT_LONG_ONLY + i, names[i], NULL, "an option" };
	}
	check_refused(many, "more than", __LINE__);
	many[CMDOPT_MAX] = (struct cmdopt){};
	CHECK_EQ_INT(cmdopt__check(&(struct cmdopts){ .cmd = "full", .head = "", .opts = many },
				   (char[8]){}, 8),
		     0);
}

/*
 * Each command's own table: well formed, with -h/--help, every option taken
 * and in the usage. The short-option strings are those of before the tables
 * (in particular the leading '+' of all but compare, which takes options
 * after its files).
 */
static void test_commands(void)
{
	static const struct {
		const struct cmdopts *c;
		const char *shorts;
	} cmds[] = {
		{ &record_cmdopts, "+e:M:i:d:c:p:G:o:b:m:vh" },
		{ &stat_cmdopts, "+e:M:r:t:o:O:i:m:vh" },
		{ &doctor_cmdopts, "+o:e:vh" },
		{ &compare_cmdopts, "t:o:h" },
		{ &cpi_cmdopts, "o:w:k:n:h" },
#ifndef PMBPF_MINIMAL
		{ &serve_cmdopts, "+l:i:k:e:M:G:m:vh" },
		{ &top_cmdopts, "+e:M:d:i:p:G:m:vh" },
		{ &profile_cmdopts, "+e:F:c:d:p:G:o:vh" },
#endif
	};
	struct cmdopt_getopt g;
	const struct cmdopt *o;
	char msg[160];
	size_t i;
	bool help;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const struct cmdopts *c = cmds[i].c;

		msg[0] = '\0';
		check_record(!cmdopt__check(c, msg, sizeof(msg)), __FILE__, __LINE__, "%s: %s",
			     c->cmd, msg);
		if (!CHECK(!cmdopt__build(c, &g)))
			continue;
		check_record(!strcmp(g.shorts, cmds[i].shorts), __FILE__, __LINE__,
			     "%s: short options '%s', want '%s'", c->cmd, g.shorts, cmds[i].shorts);
		for (help = false, o = c->opts; o->name; o++)
			help |= o->val == 'h' && !strcmp(o->name, "help") && !o->arg;
		check_record(help, __FILE__, __LINE__, "%s: -h, --help", c->cmd);
		check_record(!strncmp(c->head, "Usage: pmbpf ", 13), __FILE__, __LINE__,
			     "%s: head starts with its Usage: line", c->cmd);
		check_accepted(c, &g);
		check_usage(c);
	}
}

/*
 * The default case of every option switch, in a child: 'h' writes demo's
 * usage on stdout and exits 0; '?' writes one line to stderr and returns
 * (the child then exits 3).
 */
static void default_case(int opt, int *status, char *out, size_t out_len, char *err, size_t err_len)
{
	int po[2], pe[2];
	ssize_t n;
	pid_t pid;

	if (pipe(po) || pipe(pe)) {
		check_record(false, __FILE__, __LINE__, "pipe: %s", strerror(errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(po[1], STDOUT_FILENO);
		dup2(pe[1], STDERR_FILENO);
		cmdopt__default(&demo, opt);
		fflush(NULL);
		_exit(3);
	}
	close(po[1]);
	close(pe[1]);
	n = read(po[0], out, out_len - 1);
	out[n > 0 ? n : 0] = '\0';
	n = read(pe[0], err, err_len - 1);
	err[n > 0 ? n : 0] = '\0';
	close(po[0]);
	close(pe[0]);
	waitpid(pid, status, 0);
}

static void test_default(void)
{
	char out[4096], err[256];
	int status = -1;

	default_case('h', &status, out, sizeof(out), err, sizeof(err));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_STR(out, demo_usage);
	CHECK_STR(err, "");
	default_case('?', &status, out, sizeof(out), err, sizeof(err));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	CHECK_STR(out, "");
	CHECK_SUBSTR(err, "try 'pmbpf demo --help'\n");
}

int main(void)
{
	test_demo();
	test_alignment();
	test_refused();
	test_next();
	test_default();
	test_commands();
	return check_summary();
}
