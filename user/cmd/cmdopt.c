// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cmdopt.h"
#include "util.h"

/* Descriptions start at least this far in (after the two-space indent). */
#define SPEC_MIN_WIDTH 22

static bool short_letter(int val)
{
	return (val >= 'a' && val <= 'z') || (val >= 'A' && val <= 'Z') ||
	       (val >= '0' && val <= '9');
}

static bool long_name(const char *s)
{
	if (!*s || *s == '-')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return false;
	return true;
}

static bool help_lines_ok(const char *help)
{
	const char *line = help;

	if (!*help)
		return false;
	for (;;) {
		const char *nl = strchr(line, '\n');

		if (line == nl || *line == '-' || *line == ' ' || !*line)
			return false;
		if (!nl)
			return true;
		line = nl + 1;
	}
}

/* "[=HZ]": the argument may be left out (given as --name=HZ). */
static bool optional_arg(const struct cmdopt *o)
{
	return o->arg && o->arg[0] == '[';
}

int cmdopt__check(const struct cmdopts *c, char *msg, size_t len)
{
	const struct cmdopt *o, *p;
	int n = 0;

	for (o = c->opts; o->name; o++, n++) {
		if (n == CMDOPT_MAX) {
			snprintf(msg, len, "more than %d options", CMDOPT_MAX);
			return -EINVAL;
		}
		if (!long_name(o->name)) {
			snprintf(msg, len, "bad option name '%s'", o->name);
			return -EINVAL;
		}
		if (o->val < CMDOPT_LONG_ONLY && !short_letter(o->val)) {
			snprintf(msg, len, "--%s: value %d is no short letter and below %d",
				 o->name, o->val, CMDOPT_LONG_ONLY);
			return -EINVAL;
		}
		if (o->arg && (!*o->arg || strchr(o->arg, ' '))) {
			snprintf(msg, len, "--%s: bad placeholder '%s'", o->name, o->arg);
			return -EINVAL;
		}
		if (optional_arg(o) && (o->val < CMDOPT_LONG_ONLY || strncmp(o->arg, "[=", 2) ||
					o->arg[strlen(o->arg) - 1] != ']')) {
			snprintf(msg, len,
				 "--%s: an optional '%s' needs a long-only option and [=ARG]",
				 o->name, o->arg);
			return -EINVAL;
		}
		if (!o->help || !help_lines_ok(o->help)) {
			snprintf(msg, len,
				 "--%s: a help line missing, empty or starting with '-' or ' '",
				 o->name);
			return -EINVAL;
		}
		for (p = c->opts; p < o; p++) {
			if (!strcmp(p->name, o->name)) {
				snprintf(msg, len, "--%s twice", o->name);
				return -EINVAL;
			}
			if (p->val == o->val && o->val < CMDOPT_LONG_ONLY) {
				snprintf(msg, len, "-%c twice (--%s and --%s)", o->val, p->name,
					 o->name);
				return -EINVAL;
			}
			if (p->val == o->val) {
				snprintf(msg, len, "--%s and --%s have the same value %d", p->name,
					 o->name, o->val);
				return -EINVAL;
			}
		}
	}
	return 0;
}

int cmdopt__next(const struct cmdopts *c, struct cmdopt_getopt *g, int argc, char **argv)
{
	if (!g->built) {
		g->built = true;
		g->bad = cmdopt__build(c, g) != 0;
		optind = 1;
		if (g->bad)
			return '?';
	}
	if (g->bad)
		return -1;
	return getopt_long(argc, argv, g->shorts, g->longs, NULL);
}

int cmdopt__build(const struct cmdopts *c, struct cmdopt_getopt *g)
{
	const struct cmdopt *o;
	char msg[160], *s = g->shorts;
	int i = 0;

	if (cmdopt__check(c, msg, sizeof(msg))) {
		pr_err("internal error: options of %s: %s\n", c->cmd, msg);
		return -EINVAL;
	}
	if (!c->permute)
		*s++ = '+';
	for (o = c->opts; o->name; o++, i++) {
		g->longs[i] = (struct option){ o->name,
					       !o->arg	       ? no_argument :
					       optional_arg(o) ? optional_argument :
								 required_argument,
					       NULL, o->val };
		if (o->val < CMDOPT_LONG_ONLY) {
			*s++ = (char)o->val;
			if (o->arg)
				*s++ = ':';
		}
	}
	g->longs[i] = (struct option){};
	*s = '\0';
	return 0;
}

/* "-e, --events LIST" or "    --raw-tp" */
static int spec_width(const struct cmdopt *o)
{
	return 4 + 2 + (int)strlen(o->name) + (o->arg ? !optional_arg(o) + (int)strlen(o->arg) : 0);
}

void cmdopt__fprint(const struct cmdopts *c, FILE *f)
{
	const struct cmdopt *o;
	const char *line, *nl;
	int width = SPEC_MIN_WIDTH;

	for (o = c->opts; o->name; o++)
		if (spec_width(o) + 2 > width)
			width = spec_width(o) + 2;
	fprintf(f, "%s\n", c->head);
	for (o = c->opts; o->name; o++) {
		if (o->val < CMDOPT_LONG_ONLY)
			fprintf(f, "  -%c, ", o->val);
		else
			fputs("      ", f);
		fprintf(f, "--%s%s%s%*s", o->name, o->arg && !optional_arg(o) ? " " : "",
			o->arg ?: "", width - spec_width(o), "");
		for (line = o->help;; line = nl + 1) {
			nl = strchr(line, '\n');
			if (line != o->help)
				fprintf(f, "  %*s", width, "");
			fprintf(f, "%.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
			if (!nl)
				break;
		}
	}
	if (c->tail)
		fprintf(f, "\n%s", c->tail);
}

void cmdopt__default(const struct cmdopts *c, int opt)
{
	if (opt == 'h') {
		cmdopt__fprint(c, stdout);
		exit(0);
	}
	pr_err("try 'pmbpf %s --help'\n", c->cmd);
}

char *cmdopt__usage(const struct cmdopts *c, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	cmdopt__fprint(c, f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
