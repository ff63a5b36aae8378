# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make install                 binary, systemd unit, defaults, sysusers, man pages,
#                              bash completion, docs, Prometheus rules and their
#                              promtool tests ($(DATADIR)/prometheus/), and the sysctl
#                              file inactive ($(DATADIR)/50-pmbpf.conf)
#                              (then: systemctl daemon-reload; systemctl enable --now pmbpf)
# make install DESTDIR=/tmp/x PREFIX=/usr    staged or elsewhere
# make install PERF_EVENT_PARANOID=2         asked for: also put the sysctl file in
#                              $(SYSCTLDIR) (active at boot) and apply it now
#
# kernel.perf_event_paranoid is a host-wide security setting: left alone unless
# asked for, as the Debian package leaves it (docs/service.md).
#
# The unit goes where systemd looks for local units ($(PREFIX)/lib/systemd/system);
# its ExecStart= names $(BINDIR)/pmbpf. /etc/default/pmbpf is not overwritten.
# The docs keep the checkout's layout (README.md, docs/...) so that their
# relative links (README -> docs/fields.md, profile.md -> the example SVG) hold.

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
SYSCTLDIR ?= $(PREFIX)/lib/sysctl.d
DOCDIR ?= $(PREFIX)/share/doc/pmbpf
# Data that must stay as it is (not compressed as docs are): the Prometheus rules
# and their tests, whose rule_files: name ../pmbpf-rules.yml.
DATADIR ?= $(PREFIX)/share/pmbpf
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
SYSCONFDIR ?= /etc
INSTALL ?= install
PERF_EVENT_PARANOID ?=

# What the installed docs link to, besides each other.
DOC_FILES := $(wildcard docs/*.md) docs/flamegraph-example.svg docs/flamegraph-example.png \
	docs/top-screen.txt

install: $(OUTPUT)pmbpf man
	$(call msg,INSTALL,$(DESTDIR)$(BINDIR)/pmbpf)
	$(Q)if [ -n "$(PERF_EVENT_PARANOID)" ] && [ "$(PERF_EVENT_PARANOID)" != 2 ]; then \
		echo "PERF_EVENT_PARANOID=$(PERF_EVENT_PARANOID): only 2 (or nothing: leave the level alone)" >&2; exit 2; fi
	$(Q)$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) \
		$(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(DATADIR)/prometheus/tests $(DESTDIR)$(SYSCONFDIR)/default $(DESTDIR)$(MANDIR)/man7 \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR)
	$(Q)$(INSTALL) -m 0755 $(OUTPUT)pmbpf $(DESTDIR)$(BINDIR)/pmbpf
	$(Q)sed -e 's|/usr/local/bin/pmbpf|$(BINDIR)/pmbpf|' \
		-e 's|file:/usr/local/share/doc/pmbpf/|file:$(DOCDIR)/docs/|' deploy/pmbpf.service > $(OUTPUT)pmbpf.service
	$(Q)$(INSTALL) -m 0644 $(OUTPUT)pmbpf.service $(DESTDIR)$(UNITDIR)/pmbpf.service
	$(Q)$(INSTALL) -m 0644 deploy/pmbpf.sysusers $(DESTDIR)$(SYSUSERSDIR)/pmbpf.conf
	$(Q)$(INSTALL) -m 0644 deploy/pmbpf.sysctl $(DESTDIR)$(DATADIR)/50-pmbpf.conf
	$(Q)if [ -n "$(PERF_EVENT_PARANOID)" ]; then \
		$(INSTALL) -d $(DESTDIR)$(SYSCTLDIR) && \
		$(INSTALL) -m 0644 deploy/pmbpf.sysctl $(DESTDIR)$(SYSCTLDIR)/50-pmbpf.conf; fi
	$(Q)if [ ! -e $(DESTDIR)$(SYSCONFDIR)/default/pmbpf ]; then \
		$(INSTALL) -m 0644 deploy/pmbpf.default $(DESTDIR)$(SYSCONFDIR)/default/pmbpf; fi
	$(Q)$(INSTALL) -m 0644 $(filter %.8,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man8/
	$(Q)$(INSTALL) -m 0644 $(filter %.7,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man7/
	$(Q)$(INSTALL) -m 0644 deploy/pmbpf.bash-completion $(DESTDIR)$(BASHCOMPDIR)/pmbpf
	$(Q)$(INSTALL) -m 0644 README.md $(DESTDIR)$(DOCDIR)/
	$(Q)$(INSTALL) -m 0644 $(DOC_FILES) $(DESTDIR)$(DOCDIR)/docs/
	$(Q)$(INSTALL) -m 0644 deploy/prometheus/pmbpf-rules.yml $(DESTDIR)$(DATADIR)/prometheus/
	$(Q)$(INSTALL) -m 0644 deploy/prometheus/tests/*.test.yml $(DESTDIR)$(DATADIR)/prometheus/tests/
	$(Q)if [ -n "$(DESTDIR)" ]; then \
		echo "staged into $(DESTDIR) (nothing enabled or started)"; \
	elif [ -d /run/systemd/system ]; then \
		was=$$(cat /proc/sys/kernel/perf_event_paranoid); \
		systemd-sysusers $(SYSUSERSDIR)/pmbpf.conf && systemctl daemon-reload && \
		if [ -n "$(PERF_EVENT_PARANOID)" ]; then \
			sysctl -q -p $(SYSCTLDIR)/50-pmbpf.conf && \
			echo "kernel.perf_event_paranoid: $$was -> 2, now and at every boot, as asked ($(SYSCTLDIR)/50-pmbpf.conf)"; \
		elif [ "$$was" -gt 2 ]; then \
			echo "kernel.perf_event_paranoid is $$was, left as it is: the service counts no perf event at 3 (docs/service.md); to allow it, as root: sysctl -w kernel.perf_event_paranoid=2 | tee /etc/sysctl.d/50-pmbpf.conf"; \
		fi && \
		echo "installed; start with: systemctl enable --now pmbpf   (then: curl -s http://127.0.0.1:9465/metrics)"; \
	else \
		if [ -n "$(PERF_EVENT_PARANOID)" ]; then \
			sysctl -q -p $(SYSCTLDIR)/50-pmbpf.conf && \
			echo "kernel.perf_event_paranoid set to 2, now and at every boot, as asked ($(SYSCTLDIR)/50-pmbpf.conf)"; \
		fi && \
		echo "installed; systemd is not running here: run $(BINDIR)/pmbpf by hand (pmbpf serve for the metrics)"; \
	fi

uninstall:
	$(Q)rm -f $(DESTDIR)$(BINDIR)/pmbpf $(DESTDIR)$(UNITDIR)/pmbpf.service \
		$(DESTDIR)$(SYSUSERSDIR)/pmbpf.conf $(DESTDIR)$(SYSCTLDIR)/50-pmbpf.conf \
		$(DESTDIR)$(BASHCOMPDIR)/pmbpf \
		$(patsubst $(OUTPUT)man/%,$(DESTDIR)$(MANDIR)/man8/%,$(filter %.8,$(MAN_PAGES))) \
		$(patsubst $(OUTPUT)man/%,$(DESTDIR)$(MANDIR)/man7/%,$(filter %.7,$(MAN_PAGES)))
	$(Q)rm -rf $(DESTDIR)$(DOCDIR) $(DESTDIR)$(DATADIR)

.PHONY: uninstall
