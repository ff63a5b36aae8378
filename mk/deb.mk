# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make deb       the Debian package, built by dpkg-buildpackage (debian/rules
#                runs this Makefile) in a copy of the tree under $(OUTPUT)deb/,
#                so nothing is written next to the checkout:
#                $(OUTPUT)deb/pmbpf_VERSION_ARCH.deb
# make lintian   lintian on it: fails on any error or warning not overridden
#                (debian/pmbpf.lintian-overrides says why for each)

DEB_DIR := $(OUTPUT)deb/
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
DEB := $(DEB_DIR)pmbpf_$(VERSION)_$(DEB_ARCH).deb
DEB_SRC := $(DEB_DIR)src/pmbpf-$(VERSION)

.PHONY: deb lintian
deb:
	$(call msg,DEB,$(DEB))
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	$(Q)tar -c --exclude=./.git --exclude=./$(patsubst $(abspath .)/%,%,$(OUTPUT)) \
		--exclude=./build --exclude=./debian/pmbpf --exclude=./debian/.debhelper . | tar -x -C $(DEB_SRC)
	$(Q)cd $(DEB_SRC) && dpkg-buildpackage -us -uc -b > $(abspath $(DEB_DIR))/build.log 2>&1 || \
		{ tail -n 40 $(abspath $(DEB_DIR))/build.log; echo "make deb: dpkg-buildpackage failed (log: $(DEB_DIR)build.log)"; exit 1; }
	$(Q)mv $(DEB_DIR)src/*.deb $(DEB_DIR)src/*.changes $(DEB_DIR)src/*.buildinfo $(DEB_DIR)
	$(Q)rm -rf $(DEB_DIR)src
	@ls -l $(DEB_DIR)*.deb

lintian:
	$(Q)lintian --fail-on error,warning --display-info $(DEB)

# make debtest   the .deb installed with apt into a fresh debootstrapped Debian 12
#                root, run there (chroot), purged: tests/deb/run.sh (root, CI)
.PHONY: debtest
debtest: deb lintian
	$(Q)tests/deb/run.sh $(DEB)

# make vmtest-systemd-deb   the package under a real systemd: the systemd
#                guest (tests/vm/systemd/) with the .deb installed by dpkg
#                instead of make install; the same checks (unit, user,
#                capabilities, sandbox, metrics, stop).
.PHONY: vmtest-systemd-deb
vmtest-systemd-deb: deb
	$(Q)tests/vm/systemd/run.sh -o $(VM_OUT)/deb -d $(DEB) $(VMTEST_SYSTEMD_ARGS)
