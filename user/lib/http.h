/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The HTTP endpoint of pmbpf serve (libmicrohttpd, one internal polling
 * thread): GET /metrics answers with the last published exposition. Requests
 * only copy that buffer under a mutex, so collection never waits on clients.
 */
#ifndef __PMBPF_HTTP_H
#define __PMBPF_HTTP_H

#include <stddef.h>
#include <linux/types.h>

struct http_server;

/*
 * Bind and listen on "ADDR:PORT" ("127.0.0.1:9465", "[::1]:9465",
 * "localhost:9465"). Returns a listening socket, or a negative errno after
 * printing a one-line message.
 */
int http__listen(const char *addr_port);
/*
 * Split "ADDR:PORT" or "[ADDR]:PORT" into host (a buffer of len) and port
 * (into host's buffer): 0, or -EINVAL when it is not of that form.
 */
int http__split_addr(const char *addr_port, char *host, size_t len, const char **port);
/*
 * The address a socket from http__listen is bound to, as "ADDR:PORT" or
 * "[ADDR]:PORT": the port the kernel chose for port 0.
 */
int http__local_addr(int fd, char *buf, size_t len);
/* Serve on a socket from http__listen (taken over, closed by http__stop). */
struct http_server *http__start(int listen_fd);
/* Make buf the answer to the next scrapes (copied). */
int http__publish(struct http_server *h, const char *buf, size_t len);
/* Requests answered so far: 2xx, 4xx, 5xx, other. */
void http__requests(struct http_server *h, __u64 counts[4]);
void http__stop(struct http_server *h);

#endif
