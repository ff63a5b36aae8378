# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make                 build build/pmbpf
# make run             build and run `pmbpf record` on this host (root)
# make test            unit and integration tests (root)
# make deps            install build and test dependencies (= ./deploy/install-deps.sh)
# make man             man pages (build/man/); make deb: the Debian package (mk/deb.mk)
# make V=1             show full commands
# make OUTPUT=dir/     build elsewhere; ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-
# make STATIC=1        link statically (for VM guests)

OUTPUT ?= build/
override OUTPUT := $(abspath $(OUTPUT))/

CROSS_COMPILE ?=
CC := $(CROSS_COMPILE)gcc
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config
PYTHON ?= /usr/bin/python3

HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
ARCH ?= $(HOST_ARCH)
ifeq ($(ARCH),x86_64)
override ARCH := x86
endif
ifeq ($(ARCH),aarch64)
override ARCH := arm64
endif

VMLINUX_H := vmlinux/$(ARCH)/vmlinux.h

# The version and its date live in one place, the top entry of debian/changelog
# (as dpkg-parsechangelog reads it): pmbpf --version, the man pages, the .deb.
VERSION := $(shell sed -n '1s/^pmbpf (\([^ ]*\)) .*/\1/p' debian/changelog)
VERSION_DATE := $(shell date -u -d "$$(sed -n 's/^ -- .*>  //p;T;q' debian/changelog)" +%Y-%m-%d)

CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers
# user/ in layers, each folder including only those below it (docs/architecture.md):
# lib (no pmbpf knowledge), host (what the machine offers), account (counts to
# figures), collect (kernel to counts), render (figures to text), cmd
# (one subcommand each). One -I per folder: #include "x.h" names no folder.
USER_DIRS := user/lib user/host user/account user/collect user/render user/cmd
ALL_CFLAGS = $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -DPMBPF_VERSION='"$(VERSION)"' -I$(OUTPUT) -Ibpf $(addprefix -I,$(USER_DIRS)) $(MINIMAL_CFLAGS) $(EXTRA_CFLAGS)
BPF_CFLAGS := -O2 -g -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-I$(dir $(VMLINUX_H)) -Ibpf

# Subcommands that need more than libbpf (ncurses, libdw, libmicrohttpd) are
# left out of static builds (VM guests), which carry record, stat, doctor, list.
FULL_SRCS := $(foreach d,$(USER_DIRS),$(wildcard $(d)/top*.c $(d)/serve*.c $(d)/prom*.c \
	$(d)/http*.c $(d)/profile*.c $(d)/symbol*.c $(d)/flame*.c $(d)/hot.c))
LIBS := -lbpf -lelf -lz -lm -lncursesw -ltinfo -ldw -liberty -lmicrohttpd
ifeq ($(STATIC),1)
LIBS := -Wl,-Bstatic -lbpf -lelf -lz -lzstd -lm -static
MINIMAL_CFLAGS := -DPMBPF_MINIMAL
endif
ALL_LDFLAGS := $(LDFLAGS) $(EXTRA_LDFLAGS)

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(patsubst $(abspath .)/%,%,$(2))";
endif

BPF_OBJS := $(patsubst bpf/%.bpf.c,%,$(wildcard bpf/*.bpf.c))
USER_SRCS := $(filter-out user/cmd/main.c,$(wildcard $(addsuffix /*.c,$(USER_DIRS))))
ifeq ($(STATIC),1)
USER_SRCS := $(filter-out $(FULL_SRCS),$(USER_SRCS))
endif
# objects stay flat in $(OUTPUT) (module names are unique across folders)
USER_OBJS := $(patsubst %.c,$(OUTPUT)%.o,$(notdir $(USER_SRCS)))
vpath %.c $(USER_DIRS)
# pmbpf.bpf.c twice: pmbpf_nokf without kfunc externs, for kernels before 6.2 (fold.bpf.h)
SKELS := $(patsubst %,$(OUTPUT)%.skel.h,$(BPF_OBJS) pmbpf_nokf)

UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)tests/%,$(UNIT_SRCS))
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
WORKLOAD_BINS := $(patsubst tests/workloads/%.c,$(OUTPUT)workloads/%,$(WORKLOAD_SRCS))

.DELETE_ON_ERROR:
.SECONDARY: $(SKELS) $(patsubst %,$(OUTPUT)%.bpf.o,$(BPF_OBJS) pmbpf_nokf)
.PHONY: all clean run test unit integration deps install check-format bench vmtest

all: $(OUTPUT)pmbpf

$(OUTPUT) $(OUTPUT)tests $(OUTPUT)workloads:
	$(Q)mkdir -p $@

$(OUTPUT)%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(VMLINUX_H) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -MT $@ -MF $(OUTPUT)$*.bpf.d -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	$(Q)rm -f $@.tmp

$(OUTPUT)pmbpf_nokf.bpf.o: bpf/pmbpf.bpf.c $(wildcard bpf/*.h) $(VMLINUX_H) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DPMBPF_NO_KFUNC -MMD -MP -MT $@ -MF $(OUTPUT)pmbpf_nokf.bpf.d -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	$(Q)rm -f $@.tmp

$(OUTPUT)%.skel.h: $(OUTPUT)%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

$(OUTPUT)%.o: %.c $(SKELS) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(OUTPUT)main.o $(USER_OBJS): debian/changelog

$(OUTPUT)pmbpf: $(OUTPUT)main.o $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $^ $(ALL_LDFLAGS) $(LIBS) -o $@

$(OUTPUT)tests/%: tests/unit/%.c $(USER_OBJS) | $(OUTPUT)tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP $< $(USER_OBJS) $(ALL_LDFLAGS) $(LIBS) -o $@

$(OUTPUT)workloads/%: tests/workloads/%.c | $(OUTPUT)workloads
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE $< -o $@

run: $(OUTPUT)pmbpf
	$(OUTPUT)pmbpf record $(ARGS)

unit: $(UNIT_BINS)
	$(Q)rc=0; for t in $(UNIT_BINS); do echo "$$t:"; $$t || rc=1; done; exit $$rc

test: $(OUTPUT)pmbpf $(UNIT_BINS) $(WORKLOAD_BINS)
	$(Q)PMBPF=$(OUTPUT)pmbpf PMBPF_BUILD=$(OUTPUT) $(PYTHON) -m pytest -v -p no:cacheprovider --durations=30 tests $(PYTEST_ARGS)

deps:
	$(Q)./deploy/install-deps.sh

check-format:
	$(Q)clang-format --dry-run -Werror bpf/*.c bpf/*.h $(wildcard $(addsuffix /*.[ch],$(USER_DIRS)))

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

# Fragments for optional parts (benchmarks, VM tests, profiling workloads).
include $(wildcard mk/*.mk)

-include $(wildcard $(OUTPUT)*.d $(OUTPUT)tests/*.d)
# A source a .d file names that is gone (moved to another folder of user/):
# nothing to make, the object is rebuilt from where vpath finds it now.
user/%.c: ;
