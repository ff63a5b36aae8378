# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make bench           overhead benchmark against the alternatives (root, ~20 min);
#                      installs its peers from Debian, writes $(OUTPUT)bench/results.json
#                      and $(OUTPUT)bench/summary.md (see docs/benchmarks.md)
# make bench QUICK=1   the same, scaled down (~3 min smoke run)
# BENCH_ARGS=...       more options for bench/run.py (--help)

BENCH_OUT := $(OUTPUT)bench/
BENCH_BINS := $(BENCH_OUT)naive $(BENCH_OUT)workload $(BENCH_OUT)tiptop_sw.so $(BENCH_OUT)render \
	$(BENCH_OUT)floor $(BENCH_OUT)cgroupread

.SECONDARY: $(BENCH_OUT)naive.bpf.o $(BENCH_OUT)naive.skel.h

$(BENCH_OUT):
	$(Q)mkdir -p $@

$(BENCH_OUT)naive.bpf.o: bench/naive.bpf.c $(VMLINUX_H) | $(BENCH_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -MT $@ -MF $(BENCH_OUT)naive.bpf.d -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	$(Q)rm -f $@.tmp

$(BENCH_OUT)naive.skel.h: $(BENCH_OUT)naive.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name naive_bpf > $@

$(BENCH_OUT)naive: bench/naive.c $(BENCH_OUT)naive.skel.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(BENCH_OUT) -MMD -MP $< $(ALL_LDFLAGS) -lbpf -lelf -lz -o $@

$(BENCH_OUT)workload: bench/workload.c | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -MMD -MP $< $(ALL_LDFLAGS) -lpthread -o $@

# a plain batch read of another process's maps: the floor of a refresh
$(BENCH_OUT)floor: bench/floor.c | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP $< $(ALL_LDFLAGS) -lbpf -lelf -lz -o $@

# the renderers alone, on a synthetic snapshot (no BPF)
$(BENCH_OUT)render: bench/render.c $(USER_OBJS) | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP $< $(USER_OBJS) $(ALL_LDFLAGS) $(LIBS) -o $@

# the kernel's per-cgroup files (cpu.stat, PSI) read per refresh: kept open or not
$(BENCH_OUT)cgroupread: bench/cgroupread.c $(USER_OBJS) | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP $< $(USER_OBJS) $(ALL_LDFLAGS) $(LIBS) -o $@

$(BENCH_OUT)tiptop_sw.so: bench/tiptop_sw.c | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -fPIC -shared -MMD -MP $< \
		$(ALL_LDFLAGS) -ldl -o $@

bench: $(OUTPUT)pmbpf $(BENCH_BINS)
	$(Q)./bench/install-peers.sh
	$(Q)$(PYTHON) bench/run.py --pmbpf $(OUTPUT)pmbpf --bin $(BENCH_OUT) --out $(BENCH_OUT) \
		$(if $(filter 1,$(QUICK)),--quick) $(BENCH_ARGS)

-include $(wildcard $(BENCH_OUT)*.d)
