// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "container.h"

static void set(char *dst, size_t len, const char *src, size_t n)
{
	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* A container id: 64 hex digits; shown as its first 12. */
static bool hex_id(const char *s, size_t n)
{
	size_t i;

	if (n != 64)
		return false;
	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* A container's id at s (64 hex digits): whole, and its first 12 as shown. */
static void set_id(struct container_info *ci, const char *s)
{
	set(ci->long_id, sizeof(ci->long_id), s, 64);
	set(ci->id, sizeof(ci->id), s, 12);
}

bool container__id_arg(const char *s)
{
	size_t n = strspn(s, "0123456789abcdefABCDEF");

	return !s[n] && n >= CONTAINER_ID_MIN && n <= 64;
}

bool container__id_is(const struct container_info *ci, const char *prefix)
{
	return ci->long_id[0] && container__id_arg(prefix) &&
	       !strncasecmp(ci->long_id, prefix, strlen(prefix));
}

static bool has_prefix(const char *s, size_t n, const char *prefix)
{
	size_t p = strlen(prefix);

	return n >= p && !strncmp(s, prefix, p);
}

static bool has_suffix(const char *s, size_t n, const char *suffix)
{
	size_t p = strlen(suffix);

	return n >= p && !strncmp(s + n - p, suffix, p);
}

/* "kubepods-burstable-pod<uid>.slice" or cgroupfs "pod<uid>": systemd writes '_' for '-'. */
static bool pod_uid(const char *comp, size_t n, struct container_info *ci)
{
	const char *p;
	size_t i, len;

	for (p = comp; p + 3 <= comp + n; p++)
		if (!strncmp(p, "pod", 3) && (p == comp || p[-1] == '-'))
			break;
	if (p + 3 > comp + n)
		return false;
	p += 3;
	len = comp + n - p;
	if (has_suffix(p, len, ".slice"))
		len -= 6;
	if (len < 32 || len >= sizeof(ci->pod_uid))
		return false;
	for (i = 0; i < len; i++)
		ci->pod_uid[i] = p[i] == '_' ? '-' : p[i];
	ci->pod_uid[len] = '\0';
	return true;
}

static bool container_scope(const char *comp, size_t n, struct container_info *ci)
{
	static const struct {
		const char *prefix;
		const char *runtime;
	} scopes[] = {
		{ "docker-", "docker" },
		{ "cri-containerd-", "containerd" },
		{ "crio-", "cri-o" },
		{ "libpod-", "podman" },
	};
	size_t i;

	/* systemd driver: "<prefix><id>.scope"; cgroupfs driver: "<prefix><id>" */
	if (has_suffix(comp, n, ".scope"))
		n -= 6;
	for (i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++) {
		size_t p = strlen(scopes[i].prefix);

		if (!has_prefix(comp, n, scopes[i].prefix) || !hex_id(comp + p, n - p))
			continue;
		snprintf(ci->runtime, sizeof(ci->runtime), "%s", scopes[i].runtime);
		set_id(ci, comp + p);
		return true;
	}
	return false;
}

const char *container__label(const struct container_info *ci, char *buf, size_t len)
{
	if (!ci->runtime[0] || !ci->id[0] || !strcmp(ci->runtime, "systemd") ||
	    !strcmp(ci->runtime, "session"))
		return NULL;
	snprintf(buf, len, "%s:%s", ci->runtime, ci->id);
	return buf;
}

void container__parse(const char *path, struct container_info *ci)
{
	const char *comp = path, *end;
	bool kube = false;

	memset(ci, 0, sizeof(*ci));
	while (*comp) {
		size_t n;

		while (*comp == '/')
			comp++;
		if (!*comp)
			break;
		end = strchr(comp, '/');
		n = end ? (size_t)(end - comp) : strlen(comp);

		if (has_prefix(comp, n, "kubepods")) {
			kube = true;
			snprintf(ci->runtime, sizeof(ci->runtime), "kubernetes");
			if (has_prefix(comp, n, "kubepods-burstable") ||
			    !strncmp(comp, "burstable", n))
				snprintf(ci->qos, sizeof(ci->qos), "burstable");
			else if (has_prefix(comp, n, "kubepods-besteffort"))
				snprintf(ci->qos, sizeof(ci->qos), "besteffort");
			else if (!ci->qos[0])
				snprintf(ci->qos, sizeof(ci->qos), "guaranteed");
			pod_uid(comp, n, ci);
		} else if (kube && !strncmp(comp, "burstable", n) && n == 9) {
			snprintf(ci->qos, sizeof(ci->qos), "burstable");
		} else if (kube && !strncmp(comp, "besteffort", n) && n == 10) {
			snprintf(ci->qos, sizeof(ci->qos), "besteffort");
		} else if (kube && has_prefix(comp, n, "pod")) {
			pod_uid(comp, n, ci);
		} else if (container_scope(comp, n, ci)) {
			/* runtime and id set; under kubepods the runtime is the CRI's */
		} else if (kube && hex_id(comp, n)) {
			set_id(ci, comp); /* cgroupfs driver */
		} else if (n == 6 && !strncmp(comp, "docker", 6) && end &&
			   hex_id(end + 1, strcspn(end + 1, "/"))) {
			snprintf(ci->runtime, sizeof(ci->runtime), "docker");
			set_id(ci, end + 1);
			comp = end + 1 + 64;
			continue;
		} else if (has_suffix(comp, n, ".service") && !ci->runtime[0]) {
			snprintf(ci->runtime, sizeof(ci->runtime), "systemd");
			set(ci->id, sizeof(ci->id), comp, n - 8);
		} else if (has_prefix(comp, n, "session-") && has_suffix(comp, n, ".scope") &&
			   !ci->runtime[0]) {
			snprintf(ci->runtime, sizeof(ci->runtime), "session");
			set(ci->id, sizeof(ci->id), comp + 8, n - 14);
		}
		if (!end)
			break;
		comp = end;
	}
}
