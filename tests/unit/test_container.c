// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Container identity from cgroup paths, for every layout pmbpf knows. */
#include "check.h"
#include "container.h"

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID  "12345678-90ab-cdef-1234-567890abcdef"
#define UID_ "12345678_90ab_cdef_1234_567890abcdef"

static void expect(const char *path, const char *runtime, const char *id, const char *pod,
		   const char *qos)
{
	struct container_info ci;

	container__parse(path, &ci);
	CHECK_STR(ci.runtime, runtime);
	CHECK_STR(ci.id, id);
	CHECK_STR(ci.pod_uid, pod);
	CHECK_STR(ci.qos, qos);
}

/* issue 34: -G and top's filter take ids; tables show runtime:id12 (one rule) */
static void test_ids_and_labels(void)
{
	struct container_info ci;
	char buf[64];

	container__parse("/libpod_parent/libpod-" ID64, &ci);
	CHECK_STR(ci.long_id, ID64);
	CHECK_STR(container__label(&ci, buf, sizeof(buf)), "podman:0123456789ab");
	CHECK(container__id_is(&ci, "0123456789ab"));
	CHECK(container__id_is(&ci, "0123456789ABCDEF0"));
	CHECK(container__id_is(&ci, ID64));
	CHECK(!container__id_is(&ci, "0123456789a")); /* under 12 digits */
	CHECK(!container__id_is(&ci, "123456789abc")); /* a prefix, not a substring */
	CHECK(!container__id_is(&ci, "0123456789ab/"));
	CHECK(!container__id_is(&ci, ID64 "0"));
	container__parse("/system.slice/docker-in-docker/docker/" ID64, &ci);
	CHECK_STR(ci.long_id, ID64);
	container__parse("/kubepods/pod" UID "/" ID64, &ci);
	CHECK_STR(ci.long_id, ID64);
	CHECK_STR(container__label(&ci, buf, sizeof(buf)), "kubernetes:0123456789ab");
	/* systemd units and sessions: the path tells more; no id to take */
	container__parse("/system.slice/nginx.service", &ci);
	CHECK(!container__label(&ci, buf, sizeof(buf)));
	CHECK_STR(ci.long_id, "");
	CHECK(!container__id_is(&ci, "0123456789ab"));
	container__parse("/user.slice/user-1000.slice/session-42.scope", &ci);
	CHECK(!container__label(&ci, buf, sizeof(buf)));
	container__parse("/my/own/group", &ci);
	CHECK(!container__label(&ci, buf, sizeof(buf)));
	CHECK(container__id_arg("0123456789ab"));
	CHECK(container__id_arg(ID64));
	CHECK(!container__id_arg(ID64 "0"));
	CHECK(!container__id_arg("0123456789a"));
	CHECK(!container__id_arg("/0123456789ab"));
	CHECK(!container__id_arg("0123456789ag"));
	CHECK(!container__id_arg(""));
}

int main(void)
{
	test_ids_and_labels();
	/* docker, systemd and cgroupfs drivers */
	expect("/system.slice/docker-" ID64 ".scope", "docker", "0123456789ab", "", "");
	expect("/docker/" ID64, "docker", "0123456789ab", "", "");
	/* containerd (CRI) and CRI-O under a Kubernetes pod, systemd driver */
	expect("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	       ".slice/cri-containerd-" ID64 ".scope",
	       "containerd", "0123456789ab", UID, "burstable");
	expect("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
	       ".slice/crio-" ID64 ".scope",
	       "cri-o", "0123456789ab", UID, "besteffort");
	/* guaranteed pods sit right under kubepods */
	expect("/kubepods.slice/kubepods-pod" UID_ ".slice", "kubernetes", "", UID, "guaranteed");
	/* cgroupfs driver: /kubepods/QOS/podUID/ID */
	expect("/kubepods/burstable/pod" UID "/" ID64, "kubernetes", "0123456789ab", UID,
	       "burstable");
	expect("/kubepods/pod" UID "/" ID64, "kubernetes", "0123456789ab", UID, "guaranteed");
	/* CRI-O, cgroupfs manager: crio-ID without .scope */
	expect("/kubepods/burstable/pod" UID "/crio-" ID64, "cri-o", "0123456789ab", UID,
	       "burstable");
	expect("/kubepods/besteffort/pod" UID "/crio-" ID64, "cri-o", "0123456789ab", UID,
	       "besteffort");
	/* CRI-O's conmon is not the container */
	expect("/kubepods/burstable/pod" UID "/crio-conmon-" ID64, "kubernetes", "", UID,
	       "burstable");
	/* podman: systemd manager (crun's "container" leaf below), cgroupfs manager */
	expect("/machine.slice/libpod-" ID64 ".scope", "podman", "0123456789ab", "", "");
	expect("/machine.slice/libpod-" ID64 ".scope/container", "podman", "0123456789ab", "", "");
	expect("/libpod_parent/libpod-" ID64, "podman", "0123456789ab", "", "");
	expect("/libpod_parent/libpod-conmon-" ID64, "", "", "", "");
	/* docker, cgroupfs driver, nested inside another cgroup */
	expect("/system.slice/docker-in-docker/docker/" ID64, "docker", "0123456789ab", "", "");
	/* systemd services and login sessions */
	expect("/system.slice/nginx.service", "systemd", "nginx", "", "");
	expect("/user.slice/user-1000.slice/session-42.scope", "session", "42", "", "");
	/* nothing known */
	expect("/", "", "", "", "");
	expect("/system.slice", "", "", "", "");
	expect("/my/own/group", "", "", "", "");
	/* a scope whose id is not 64 hex digits is not a container */
	expect("/system.slice/docker-1234.scope", "", "", "", "");
	expect("/system.slice/docker-" ID64 "x.scope", "", "", "", "");
	return check_summary();
}
