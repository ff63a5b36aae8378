#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The README's first commands on a fresh Debian 12: a copy of the committed
# tree (git archive HEAD, as a user has "a copy of this tree") in a copy of a
# minimal debootstrapped root (apt-get, bash, coreutils: no make, git, sudo,
# man), then in a chroot on this kernel, exactly as the README says:
# ./deploy/install-deps.sh (after which the commands of the README's command
# blocks are there), make run (ARGS="-c 2": two intervals), make unit, and
# the set-up's own tests (tests/test_install.py, through make test). Prints
# each step's time, the disk the root grew by, PASS/FAIL lines; exits 1 if a
# step fails. Usage:
#
#   run.sh [--no-lists]    (make freshtest; --no-lists: no apt package lists,
#                           as in a container image: install-deps.sh reads them)
#
# The base root is make debtest's, $PMBPF_VM_CACHE/rootfs-bookworm-minbase
# (made once if missing: tests/deb/root.sh); each run works on a copy under
# $TMPDIR, removed at the end. Needs root, the Debian archive and about 2 GB. A policy-rc.d in the
# copy keeps packages from starting daemons (prometheus) in the host's
# namespaces: a real host would start them.
set -eu

no_lists=0
case ${1:-} in
--no-lists) no_lists=1 ;;
"") ;;
*)
	echo "usage: run.sh [--no-lists]" >&2
	exit 2
	;;
esac
tree=$(cd "$(dirname "$0")/../.." && pwd)
tag=freshtest
# shellcheck source=tests/deb/root.sh
. "$tree/tests/deb/root.sh"
t_all=$(now)
fresh_root
if [ "$no_lists" = 1 ]; then
	rm -rf "$root/var/lib/apt/lists"
	mkdir -p "$root/var/lib/apt/lists/partial"
fi
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
git -C "$tree" archive --prefix=pmbpf/ HEAD | tar -x -C "$root/root"
in_tree() {
	chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LC_ALL=C.UTF-8 TERM=dumb sh -c "cd /root/pmbpf && $1"
}
mb() { du -sxm "$1" | cut -f1; }
absent=
for c in make git sudo man gcc; do
	in_tree "command -v $c" >/dev/null && absent="$absent $c"
done
size0=$(mb "$root")
echo "freshtest: $(git -C "$tree" rev-parse --short HEAD) in a copy of $base (${size0} MB$([ "$no_lists" = 1 ] && echo ", no package lists"))"
if [ -n "$absent" ]; then
	fail base "the base root has$absent: not a fresh minbase root"
fi

# The log of each step is in the root while it lives; its tail is printed on failure.
step() {
	local name=$1 cmd=$2 t rc=0
	t=$(now)
	in_tree "$cmd" >"$root/tmp/$name.log" 2>&1 || rc=$?
	secs=$(since "$t")
	if [ "$rc" -ne 0 ]; then
		fail "$name" "'$cmd': exit $rc after $secs s"
		tail -n 30 "$root/tmp/$name.log" | sed 's/^/    | /'
	fi
	return "$rc"
}

if step install ./deploy/install-deps.sh; then
	pkgs=$(grep -c '^Setting up' "$root/tmp/install.log" || true)
	got=$(sed -n 's/^Need to get \(.*\) of archives.*/\1/p' "$root/tmp/install.log" | tail -n 1)
	update=
	if grep -q '^install-deps: apt-get update' "$root/tmp/install.log"; then
		update=", lists read first"
	fi
	pass install "./deploy/install-deps.sh: $pkgs packages ($got downloaded$update) in $secs s;" \
		"the root grew by $(($(mb "$root") - size0)) MB ($(mb "$root/var/cache/apt/archives") MB of them" \
		"downloaded packages: apt-get clean)"
	# a new user's screen: no wall of errors before it recovers
	if grep -q '^E: ' "$root/tmp/install.log"; then
		fail install-errors "exit 0, but apt printed errors on the way:"
		grep '^E: ' "$root/tmp/install.log" | head -n 5 | sed 's/^/    | /'
	fi
else
	echo "freshtest: $npass passed, $nfail failed, $(since "$t_all") s"
	exit 1
fi
# what the README's command blocks run (sudo aside: "where it is installed")
cmds=$(awk '/^```sh$/ { b = 1; next } /^```$/ { b = 0 } b && NF { print $1 == "sudo" ? $2 : $1 }' \
	"$tree/README.md" | grep -v -e '^\./' -e '^pmbpf$' | sort -u | tr '\n' ' ')
lacking=
for c in $cmds; do
	in_tree "command -v $c" >/dev/null || lacking="$lacking $c"
done
if [ -z "$lacking" ]; then
	pass commands "the README's command blocks' commands are installed: $cmds"
else
	fail commands "the README's command blocks run$lacking, not installed"
fi
if step run 'make run ARGS="-c 2"'; then
	n=$(grep -c 'interval .* processes' "$root/tmp/run.log" || true)
	if [ "$n" = 2 ] && grep -q '^ *[0-9]* pmbpf ' "$root/tmp/run.log"; then
		pass run "make run ARGS=\"-c 2\" (build and 2 intervals of pmbpf record) in $secs s"
	else
		fail run "make run: $n intervals, or no row of pmbpf itself"
		head -n 20 "$root/tmp/run.log" | sed 's/^/    | /'
	fi
fi
if step unit 'make unit'; then
	pass unit "make unit: $(awk '/ passed, [0-9]+ failed/ { p += $1 } END { print p }' "$root/tmp/unit.log") checks in $secs s"
fi
if step setup-tests 'make test PYTEST_ARGS="-k test_install"'; then
	pass setup-tests "make test PYTEST_ARGS=\"-k test_install\": $(sed -n 's/^=* \(.*\) in [0-9.]*s.*/\1/p' "$root/tmp/setup-tests.log" | tail -n 1) in $secs s"
fi

echo "freshtest: $npass passed, $nfail failed, $(since "$t_all") s"
[ "$nfail" -eq 0 ]
