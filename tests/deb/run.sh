#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck disable=SC2016 # dpkg-query formats and the literal $PMBPF_OPTS are meant as written
#
# The Debian package on a fresh Debian 12: `apt install ./pmbpf_*.deb` into a
# copy of a minimal debootstrapped root (nothing added: apt pulls systemd and
# the libraries), then in a chroot on this kernel: the files, the user, the
# unit enabled and not started, pmbpf --version, pmbpf doctor, pmbpf record
# -c 1, bash completion; then `apt purge` and nothing left but what Debian
# policy keeps (the system user). Usage:
#
#   run.sh DEB            (make debtest builds the .deb and runs this)
#
# The base root is kept in $PMBPF_VM_CACHE/rootfs-bookworm-minbase (debootstrap
# --variant=minbase, about 2 minutes once; root.sh); each run works on a copy
# under $TMPDIR. Needs root and the Debian archive. Prints PASS/FAIL lines, exits 1
# if any check fails.
set -eu

deb=${1:?usage: run.sh DEB}
deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")
tag=debtest
# shellcheck source=tests/deb/root.sh
. "$(dirname "$0")/root.sh"
t_all=$(now)
t=$(now)
fresh_root
cp "$deb" "$root/tmp/"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 "$@"; }
name=$(basename "$deb")
version=$(dpkg-deb -f "$deb" Version)
echo "debtest: $name on a copy of $base ($(since "$t") s)"

# --- apt install ./pmbpf_*.deb --------------------------------------------------
t=$(now)
if in_root sh -c "apt-get update -q >/tmp/apt.log 2>&1 && cd /tmp && DEBIAN_FRONTEND=noninteractive apt install -y -q ./$name >>/tmp/apt.log 2>&1"; then
	pass install "apt install ./$name: $(grep -c '^Setting up' "$root/tmp/apt.log") packages set up in $(since "$t") s"
else
	fail install "apt install ./$name failed:"
	tail -n 30 "$root/tmp/apt.log" | sed 's/^/    | /'
	echo "debtest: 0 checks after a failed install"
	exit 1
fi
grep -i -E '^(W|E):|warning' "$root/tmp/apt.log" | grep -v 'apt does not have a stable CLI' | sed 's/^/    apt: /' || true
files=$(in_root dpkg -L pmbpf | sort)

# --- the files ------------------------------------------------------------------
missing=
for f in /usr/sbin/pmbpf /lib/systemd/system/pmbpf.service /usr/lib/sysusers.d/pmbpf.conf \
	/usr/share/pmbpf/50-pmbpf.conf /etc/default/pmbpf /usr/share/man/man8/pmbpf.8.gz \
	/usr/share/man/man8/pmbpf-record.8.gz /usr/share/man/man8/pmbpf-serve.8.gz \
	/usr/share/man/man7/pmbpf-fields.7.gz \
	/usr/share/bash-completion/completions/pmbpf /usr/share/doc/pmbpf/README.md \
	/usr/share/doc/pmbpf/docs/fields.md /usr/share/doc/pmbpf/docs/flamegraph-example.svg \
	/usr/share/doc/pmbpf/copyright /usr/share/doc/pmbpf/README.Debian \
	/usr/share/doc/pmbpf/NEWS.Debian.gz /usr/share/pmbpf/prometheus/pmbpf-rules.yml \
	/usr/share/pmbpf/prometheus/tests/alerts.test.yml \
	/usr/share/pmbpf/prometheus/tests/recording.test.yml; do
	[ -e "$root$f" ] || missing="$missing $f"
done
conffiles=$(in_root dpkg-query -W -f='${Conffiles}' pmbpf | awk '{ print $1 }' | tr '\n' ' ')
exec_start=$(sed -n 's/^ExecStart=//p' "$root/lib/systemd/system/pmbpf.service")
docs=$(sed -n 's/^Documentation=//p' "$root/lib/systemd/system/pmbpf.service")
# the unit's man page is in the package; the doc file it names too
doc_ok=1
for d in $docs; do
	case $d in
	man:pmbpf-serve\(8\)) [ -e "$root/usr/share/man/man8/pmbpf-serve.8.gz" ] || doc_ok=0 ;;
	file:*) [ -e "$root${d#file:}" ] || doc_ok=0 ;;
	*) doc_ok=0 ;;
	esac
done
case $docs in man:pmbpf-serve\(8\)*) ;; *) doc_ok=0 ;; esac
if [ -z "$missing" ] && [ "$conffiles" = "/etc/default/pmbpf " ] &&
	[ "$exec_start" = '/usr/sbin/pmbpf serve $PMBPF_OPTS' ] && [ "$doc_ok" = 1 ]; then
	pass files "$(echo "$files" | wc -l) paths; conffiles: $conffiles; ExecStart=$exec_start; Documentation=$docs"
else
	fail files "missing:${missing:- none}; conffiles '$conffiles'; ExecStart=$exec_start; Documentation=$docs"
fi

# --- kernel.perf_event_paranoid is the admin's ---------------------------------------
# No sysctl.d file of the package's (it would lower the level at every boot),
# the setting explained in README.Debian and NEWS.Debian with the command.
fix='sysctl -w kernel.perf_event_paranoid=2 | tee /etc/sysctl.d/50-pmbpf.conf'
active=$(echo "$files" | grep -E '/sysctl\.d/' || true)
if [ -z "$active" ] && grep -qF "$fix" "$root/usr/share/doc/pmbpf/README.Debian" &&
	zcat "$root/usr/share/doc/pmbpf/NEWS.Debian.gz" | grep -qF "$fix" &&
	! grep -Eq '^[[:space:]]*(/lib/systemd/|/usr/lib/systemd/)?(systemd-)?sysctl ' "$root/var/lib/dpkg/info/pmbpf.postinst"; then
	pass paranoid "no sysctl.d file; README.Debian and NEWS.Debian give '$fix'; the postinst sets nothing"
else
	fail paranoid "sysctl.d files: ${active:-none}; README.Debian/NEWS.Debian without '$fix', or the postinst runs sysctl"
fi
# the rules' tests run where they are installed (promtool reads ../pmbpf-rules.yml)
if command -v promtool >/dev/null 2>&1; then
	if (cd "$root/usr/share/pmbpf/prometheus/tests" && promtool test rules ./*.test.yml >/dev/null 2>&1); then
		pass rules "promtool test rules in /usr/share/pmbpf/prometheus/tests: passed"
	else
		fail rules "promtool test rules in /usr/share/pmbpf/prometheus/tests failed"
	fi
fi

# --- the user, made by systemd-sysusers from the package's sysusers.d file ---------
pw=$(in_root getent passwd pmbpf || true)
uid=$(echo "$pw" | cut -d: -f3)
shell=$(echo "$pw" | cut -d: -f7)
if [ -n "$uid" ] && [ "$uid" -lt 1000 ] && [ "$uid" -gt 0 ] && [ "$shell" = /usr/sbin/nologin ] &&
	in_root getent group pmbpf >/dev/null; then
	pass user "$pw (system uid, group pmbpf)"
else
	fail user "passwd entry '$pw'"
fi

# --- enabled (starts at the next boot), not started ---------------------------------
wants=$root/etc/systemd/system/multi-user.target.wants/pmbpf.service
if [ -L "$wants" ] && [ "$(readlink "$wants")" = /lib/systemd/system/pmbpf.service ]; then
	pass enabled "multi-user.target.wants/pmbpf.service -> $(readlink "$wants")"
else
	fail enabled "no multi-user.target.wants/pmbpf.service symlink"
fi

# --- the version from one place --------------------------------------------------
v=$(in_root pmbpf --version 2>&1)
man_v=$(zcat "$root/usr/share/man/man8/pmbpf.8.gz" | sed -n 's/^\.TH .*"pmbpf \([^"]*\)".*/\1/p')
if [ "$v" = "pmbpf $version" ] && [ "$man_v" = "$version" ]; then
	pass version "pmbpf --version: '$v', .deb $version, man page $man_v"
else
	fail version "pmbpf --version '$v', .deb '$version', man page '$man_v'"
fi

# --- it runs: doctor, record ------------------------------------------------------
if in_root pmbpf doctor >"$root/tmp/doctor.txt" 2>&1; then
	pass doctor "exit 0: $(grep -c . "$root/tmp/doctor.txt") lines, $(grep -ci warn "$root/tmp/doctor.txt") warnings"
else
	fail doctor "exit $?"
	sed 's/^/    | /' "$root/tmp/doctor.txt"
fi
if in_root pmbpf record -c 1 >"$root/tmp/record.txt" 2>"$root/tmp/record.err" &&
	grep -q 'interval .* processes' "$root/tmp/record.txt" && grep -q '^ *[0-9]* pmbpf ' "$root/tmp/record.txt"; then
	pass record "pmbpf record -c 1: $(sed -n 's/.*interval [^ ]* *\([0-9]*\) processes.*/\1/p' "$root/tmp/record.txt") processes"
else
	fail record "pmbpf record -c 1"
	sed 's/^/    | /' "$root/tmp/record.txt" "$root/tmp/record.err" | head -n 20
fi

# --- bash completion, as installed ----------------------------------------------------
comp=$(in_root bash -c 'source /usr/share/bash-completion/completions/pmbpf
	COMP_WORDS=(pmbpf re); COMP_CWORD=1; _pmbpf; echo "${COMPREPLY[*]}"
	COMP_WORDS=(pmbpf record -e task-c); COMP_CWORD=3; _pmbpf; echo "${COMPREPLY[*]}"' 2>&1)
if [ "$comp" = "record
task-clock" ]; then
	pass completion "pmbpf re<TAB> -> record, -e task-c<TAB> -> task-clock"
else
	fail completion "got: $(echo "$comp" | tr '\n' '|')"
fi

# --- apt purge: nothing left but the system user -------------------------------------
t=$(now)
if in_root sh -c 'DEBIAN_FRONTEND=noninteractive apt purge -y -q pmbpf >/tmp/purge.log 2>&1'; then
	left=
	for f in $files; do
		[ -d "$root$f" ] && continue # directories other packages share
		[ -e "$root$f" ] || [ -L "$root$f" ] && left="$left $f"
	done
	state=$(in_root dpkg-query -W -f='${db:Status-Abbrev}' pmbpf 2>/dev/null || echo gone)
	others=$(cd "$root" && find etc usr lib var -name '*pmbpf*' 2>/dev/null | grep -v -e '^var/log/' -e '^var/lib/dpkg/' -e '^var/cache/' -e '^tmp/' | tr '\n' ' ')
	if [ -z "$left" ] && [ -z "$others" ] && [ "${state% }" != rc ]; then
		pass purge "apt purge in $(since "$t") s: no file left (dpkg state '${state}'); kept by policy: user $(in_root getent passwd pmbpf | cut -d: -f1,3)"
	else
		fail purge "left:${left:- none}; other paths: ${others:-none}; dpkg state '$state'"
	fi
else
	fail purge "apt purge pmbpf failed"
	tail -n 20 "$root/tmp/purge.log" | sed 's/^/    | /'
fi

echo "debtest: $npass passed, $nfail failed, $(since "$t_all") s"
[ "$nfail" -eq 0 ]
