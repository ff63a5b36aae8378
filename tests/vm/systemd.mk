# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# deploy/pmbpf.service under a real systemd (tests/vm/systemd/): a Debian 12
# rootfs from debootstrap (cached), `make install` of the dynamically linked
# build/pmbpf into a copy, systemd as PID 1 on Debian's 6.1 amd64 kernel under
# QEMU (TCG). Included by mk/vm.mk (needs the top-level Makefile's install).
#
#   make vmtest-systemd                  build, install, boot, check (root)
#   VMTEST_SYSTEMD_ARGS=-k               keep the console log and image

VM_SYSTEMD_SAVED_DEFAULT_GOAL := $(.DEFAULT_GOAL)
VM_SYSTEMD_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))/systemd
VM_OUT ?= build/vm

.PHONY: vmtest-systemd

vmtest-systemd: $(OUTPUT)pmbpf
	$(VM_SYSTEMD_DIR)/run.sh -o $(VM_OUT) $(VMTEST_SYSTEMD_ARGS)

.DEFAULT_GOAL := $(VM_SYSTEMD_SAVED_DEFAULT_GOAL)
