# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make install                 binary, systemd unit, defaults, sysusers, sysctl, docs
#                              (then: systemctl daemon-reload; systemctl enable --now pmbpf)
# make install DESTDIR=/tmp/x PREFIX=/usr    staged or elsewhere
#
# The unit goes where systemd looks for local units ($(PREFIX)/lib/systemd/system);
# its ExecStart= names $(BINDIR)/pmbpf. /etc/default/pmbpf is not overwritten.

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
SYSCTLDIR ?= $(PREFIX)/lib/sysctl.d
DOCDIR ?= $(PREFIX)/share/doc/pmbpf
SYSCONFDIR ?= /etc
INSTALL ?= install

install: $(OUTPUT)pmbpf
	$(call msg,INSTALL,$(DESTDIR)$(BINDIR)/pmbpf)
	$(Q)$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(SYSCTLDIR) \
		$(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSCONFDIR)/default
	$(Q)$(INSTALL) -m 0755 $(OUTPUT)pmbpf $(DESTDIR)$(BINDIR)/pmbpf
	$(Q)sed -e 's|/usr/local/bin/pmbpf|$(BINDIR)/pmbpf|' \
		-e 's|/usr/local/share/doc/pmbpf|$(DOCDIR)|' deploy/pmbpf.service > $(OUTPUT)pmbpf.service
	$(Q)$(INSTALL) -m 0644 $(OUTPUT)pmbpf.service $(DESTDIR)$(UNITDIR)/pmbpf.service
	$(Q)$(INSTALL) -m 0644 deploy/pmbpf.sysusers $(DESTDIR)$(SYSUSERSDIR)/pmbpf.conf
	$(Q)$(INSTALL) -m 0644 deploy/pmbpf.sysctl $(DESTDIR)$(SYSCTLDIR)/50-pmbpf.conf
	$(Q)if [ ! -e $(DESTDIR)$(SYSCONFDIR)/default/pmbpf ]; then \
		$(INSTALL) -m 0644 deploy/pmbpf.default $(DESTDIR)$(SYSCONFDIR)/default/pmbpf; fi
	$(Q)$(INSTALL) -m 0644 README.md $(wildcard docs/*.md) $(DESTDIR)$(DOCDIR)/
	$(Q)if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
		systemd-sysusers $(SYSUSERSDIR)/pmbpf.conf && \
		sysctl -q -p $(SYSCTLDIR)/50-pmbpf.conf && systemctl daemon-reload; fi
	@echo "installed; start with: systemctl enable --now pmbpf   (then: curl -s http://127.0.0.1:9465/metrics)"

uninstall:
	$(Q)rm -f $(DESTDIR)$(BINDIR)/pmbpf $(DESTDIR)$(UNITDIR)/pmbpf.service \
		$(DESTDIR)$(SYSUSERSDIR)/pmbpf.conf $(DESTDIR)$(SYSCTLDIR)/50-pmbpf.conf
	$(Q)rm -rf $(DESTDIR)$(DOCDIR)

.PHONY: uninstall
