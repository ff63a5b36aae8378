# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# VM tests: pmbpf inside QEMU guests (an arm64 one with an emulated PMU, an
# amd64 one with another kernel). Included by the top-level Makefile; also
# usable alone: make -f tests/vm/vm.mk vmtest-infra
#
#   make vmtest         build the workloads, boot every guest, run all checks
#                       (needs PMBPF_ARM64 and PMBPF_X86: static pmbpf builds)
#   make vmtest-infra   the same without pmbpf: ground-truth checks only
#   make vm-deps        install QEMU, the cross compiler, arm64 libraries (root)
#   make vm-vmlinux-h   regenerate vmlinux/arm64/vmlinux.h from Debian's kernel
#   VMTEST_ARGS=...     passed to run.sh (e.g. VMTEST_ARGS="-k arm64-icount2")

# Included before the top-level Makefile's first rule, this fragment must not
# become the default goal: the goal in force now is restored at the end.
VM_SAVED_DEFAULT_GOAL := $(.DEFAULT_GOAL)
VM_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
VM_OUT ?= build/vm
VM_CC_arm64 ?= aarch64-linux-gnu-gcc
VM_CC_amd64 ?= gcc
VM_CFLAGS := -static -O1 -g0 -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE
PMBPF_ARM64 ?= build/arm64/pmbpf
PMBPF_X86 ?= build/x86-static/pmbpf
PMBPF_VM_CACHE ?= $(HOME)/.cache/pmbpf-vm

VM_WORKLOADS := loop busy pagetouch pmucheck
# the possible-CPU guests (amd64-cpus*): live processes, pmbpf's maps
VM_WORKLOADS_amd64 := $(VM_WORKLOADS) sleepers mapmem population
VM_BINS := $(addprefix $(VM_OUT)/arm64/,$(VM_WORKLOADS)) \
	$(addprefix $(VM_OUT)/amd64/,$(VM_WORKLOADS_amd64))

.PHONY: vmtest vmtest-infra vm-workloads vm-deps vm-vmlinux-h

vm-workloads: $(VM_BINS)

$(VM_OUT)/arm64/%: $(VM_DIR)/workloads/%.c $(VM_DIR)/workloads/spin.h
	@mkdir -p $(@D)
	$(VM_CC_arm64) $(VM_CFLAGS) $< -o $@

$(VM_OUT)/amd64/%: $(VM_DIR)/workloads/%.c $(VM_DIR)/workloads/spin.h
	@mkdir -p $(@D)
	$(VM_CC_amd64) $(VM_CFLAGS) $< -o $@

vmtest: vm-workloads $(PMBPF_ARM64) $(PMBPF_X86)
	$(VM_DIR)/run.sh -o $(VM_OUT) --pmbpf-arm64 $(PMBPF_ARM64) --pmbpf-x86 $(PMBPF_X86) $(VMTEST_ARGS)

vmtest-infra: vm-workloads
	$(VM_DIR)/run.sh -o $(VM_OUT) $(VMTEST_ARGS)

vm-deps:
	$(VM_DIR)/deps.sh

vm-vmlinux-h:
	$(VM_DIR)/fetch-kernels.sh arm64
	$(VM_DIR)/gen-vmlinux-h.sh $(PMBPF_VM_CACHE)/vmlinuz-arm64 vmlinux/arm64/vmlinux.h

.DEFAULT_GOAL := $(VM_SAVED_DEFAULT_GOAL)
