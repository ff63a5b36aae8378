# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""pmbpf serve under abuse: slow clients, libmicrohttpd's own answers."""
import re
import socket
import time

import pytest

from conftest import needs_root
from test_serve import Serve, http_get, value

pytestmark = needs_root


def requests_total(serve):
    s = serve.scrape()
    return {c: value(s, "pmbpf_http_requests_total", code=c) for c in ("2xx", "4xx", "5xx")}


def test_scrapes_get_through_200_slow_clients():
    """200 connections trickling a header byte each: every probe answers within 1 s."""
    serve = Serve("-e", "task-clock", "-i", "1")
    host, port = serve.addr.rsplit(":", 1)
    slow = []
    try:
        for _ in range(200):
            c = socket.socket()
            c.setblocking(False)
            try:
                c.connect((host, int(port)))
            except BlockingIOError:
                pass
            slow.append(c)
        time.sleep(0.2)
        for c in slow:
            try:
                c.send(b"GET /metrics HTTP/1.1\r\n")
            except OSError:
                pass
        late = []
        for i in range(6):
            for c in slow:  # one more byte each: the idle timeout never fires
                try:
                    c.send(b"X")
                except OSError:
                    pass
            t0 = time.monotonic()
            status, _, body = http_get(serve.addr, timeout=5)
            late.append(time.monotonic() - t0)
            assert status == 200 and "pmbpf_collections_total" in body
            time.sleep(0.3)
        assert max(late) < 1.0, late
    finally:
        for c in slow:
            c.close()
        serve.stop()


def test_every_answer_is_counted():
    """libmicrohttpd's own 4xx answers (bad request, header too large) count."""
    serve = Serve("-e", "task-clock", "-i", "1")
    host, port = serve.addr.rsplit(":", 1)

    def raw(data):
        c = socket.create_connection((host, int(port)), timeout=10)
        try:
            c.sendall(data)
        except OSError:
            pass
        try:
            reply = c.recv(4096)
        except OSError:
            reply = b""
        c.close()
        return reply

    try:
        before = requests_total(serve)
        answers = [
            raw(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 60000 + b"\r\n\r\n"),
            raw(b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n"),
            raw(b"GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n"),
        ]
        codes = [int(m.group(1)) for m in
                 (re.match(rb"HTTP/1\.[01] (\d{3})", a) for a in answers) if m]
        assert len(codes) == 3, answers
        # the figures are those of the last collection (every second)
        start = value(serve.scrape(), "pmbpf_collections_total")
        while value(serve.scrape(), "pmbpf_collections_total") < start + 2:
            time.sleep(0.1)
        after = requests_total(serve)
        fours = sum(1 for c in codes if 400 <= c < 500)
        assert after["4xx"] - before["4xx"] == fours, (codes, before, after)
        assert after["2xx"] > before["2xx"], (before, after)
    finally:
        serve.stop()
