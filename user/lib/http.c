// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include "http.h"
#include "util.h"

/*
 * Bounds on what clients can hold: connections, idle time, request size.
 * A connection that has not sent a whole request is "waiting"; an idle
 * timeout alone does not bound it (a byte every few seconds resets it), so
 * a waiting connection older than HTTP_REQUEST_DEADLINE_S is closed, and
 * beyond HTTP_MAX_WAITING the oldest waiting one is closed at every new
 * connection: a scrape gets in however many slow clients hold sockets.
 */
#define HTTP_MAX_CONNECTIONS	512
#define HTTP_MAX_WAITING	256
#define HTTP_REQUEST_DEADLINE_S 5
#define HTTP_TIMEOUT_S		10
#define HTTP_CONNECTION_MEMORY	(32 * 1024)

#define CONTENT_TYPE_METRICS "text/plain; version=0.0.4; charset=utf-8"

static const char landing[] = "<html><head><title>pmbpf</title></head><body><h1>pmbpf</h1>"
			      "<p><a href=\"/metrics\">Metrics</a></p></body></html>\n";

/* A client connection; only libmicrohttpd's one thread touches these. */
struct http_conn {
	struct http_conn *prev, *next;
	int fd;
	__u64 waiting_since; /* accepted, or its last request answered */
	bool busy; /* a whole request came: being answered */
	bool evicted; /* shut down, not yet closed by libmicrohttpd */
};

struct http_server {
	struct MHD_Daemon *d;
	pthread_mutex_t lock;
	char *buf; /* the last published exposition */
	size_t len;
	__u64 requests[4];
	struct http_conn conns; /* list head, oldest first */
};

int http__split_addr(const char *addr_port, char *host, size_t len, const char **port)
{
	size_t n = strlen(addr_port);
	char *p;

	if (n >= len)
		return -EINVAL;
	memcpy(host, addr_port, n + 1);
	if (host[0] == '[') {
		char *rb = strchr(host, ']');

		if (!rb || rb[1] != ':')
			return -EINVAL;
		*rb = '\0';
		p = rb + 2;
		memmove(host, host + 1, strlen(host + 1) + 1);
	} else {
		p = strrchr(host, ':');
		if (!p || strchr(host, ':') != p)
			return -EINVAL;
		*p++ = '\0';
	}
	if (!*host || !*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 5 ||
	    atol(p) > 65535)
		return -EINVAL;
	*port = p;
	return 0;
}

int http__listen(const char *addr_port)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	};
	struct addrinfo *res = NULL;
	const char *port;
	char host[256];
	int fd, err, one = 1;

	if (http__split_addr(addr_port, host, sizeof(host), &port))
		goto bad;
	err = getaddrinfo(host, port, &hints, &res);
	if (err) {
		pr_err("cannot resolve listen address '%s': %s\n", addr_port, gai_strerror(err));
		return -EINVAL;
	}
	fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
	if (fd < 0) {
		err = -errno;
		pr_err("cannot create a socket for %s: %s\n", addr_port, strerror(-err));
		freeaddrinfo(res);
		return err;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (res->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 128)) {
		err = -errno;
		pr_err("cannot listen on %s: %s%s\n", addr_port, strerror(-err),
		       err == -EADDRINUSE ? " (another pmbpf? use --listen ADDR:PORT)" : "");
		close(fd);
		freeaddrinfo(res);
		return err;
	}
	freeaddrinfo(res);
	return fd;
bad:
	pr_err("invalid listen address '%s': give ADDR:PORT, e.g. 127.0.0.1:9465 or [::1]:9465\n",
	       addr_port);
	return -EINVAL;
}

int http__local_addr(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN];
	int port;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl))
		return -errno;
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		port = ntohs(a->sin6_port);
		snprintf(buf, len, "[%s]:%d", host, port);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		port = ntohs(a->sin_port);
		snprintf(buf, len, "%s:%d", host, port);
	}
	return 0;
}

static enum MHD_Result reply(struct http_server *h, struct MHD_Connection *c, unsigned int code,
			     const char *type, void *body, size_t len,
			     enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static struct http_conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* Close a connection: libmicrohttpd reads EOF and cleans it up. */
static void conn_evict(struct http_conn *hc)
{
	shutdown(hc->fd, SHUT_RDWR);
	hc->evicted = true;
}

/* At each new connection: drop waiting ones past the deadline, then the oldest over the cap. */
static void conns_trim(struct http_server *h)
{
	__u64 now = now_ns(CLOCK_MONOTONIC),
	      deadline = (__u64)HTTP_REQUEST_DEADLINE_S * 1000000000ULL;
	struct http_conn *hc, *oldest;
	unsigned int waiting;

	for (;;) {
		waiting = 0;
		oldest = NULL;
		for (hc = h->conns.next; hc != &h->conns; hc = hc->next) {
			if (hc->busy || hc->evicted)
				continue;
			if (now - hc->waiting_since > deadline) {
				conn_evict(hc);
				continue;
			}
			waiting++;
			if (!oldest || hc->waiting_since < oldest->waiting_since)
				oldest = hc;
		}
		if (waiting <= HTTP_MAX_WAITING || !oldest)
			return;
		conn_evict(oldest);
	}
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *ci;
	struct http_server *h = cls;
	struct http_conn *hc = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (hc) {
			hc->prev->next = hc->next;
			hc->next->prev = hc->prev;
			free(hc);
			*socket_context = NULL;
		}
		return;
	}
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	hc = calloc(1, sizeof(*hc));
	if (!hc || !ci) {
		free(hc);
		return;
	}
	hc->fd = ci->connect_fd;
	hc->waiting_since = now_ns(CLOCK_MONOTONIC);
	hc->prev = h->conns.prev;
	hc->next = &h->conns;
	h->conns.prev->next = hc;
	h->conns.prev = hc;
	*socket_context = hc;
	conns_trim(h);
}

/* Called once the request line is read: it makes the answer reach on_completed. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	return NULL;
}

/* Every answer counts, libmicrohttpd's own (400, 413, 431...) too. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_HTTP_STATUS);
	struct http_server *h = cls;
	struct http_conn *hc = conn_of(c);
	unsigned int code = ci ? ci->http_status : 0;
	int cls_idx = code >= 200 && code < 300 ? 0 :
		      code >= 400 && code < 500 ? 1 :
		      code >= 500		? 2 :
						  3;

	if (code)
		__atomic_fetch_add(&h->requests[cls_idx], 1, __ATOMIC_RELAXED);
	if (hc) {
		hc->busy = false;
		hc->waiting_since = now_ns(CLOCK_MONOTONIC);
	}
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	static const char not_found[] = "404 not found: pmbpf serves /metrics\n";
	static const char not_allowed[] = "405 method not allowed: use GET\n";
	static const char not_ready[] = "503 no collection yet\n";
	struct http_server *h = cls;
	struct http_conn *hc = conn_of(c);
	char *copy;
	size_t len;

	if (hc)
		hc->busy = true;
	/* Answered at the first call: a request body, if any, is never read. */
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", (void *)not_allowed,
			     sizeof(not_allowed) - 1, MHD_RESPMEM_PERSISTENT);
	if (!strcmp(url, "/"))
		return reply(h, c, MHD_HTTP_OK, "text/html", (void *)landing, sizeof(landing) - 1,
			     MHD_RESPMEM_PERSISTENT);
	if (strcmp(url, "/metrics"))
		return reply(h, c, MHD_HTTP_NOT_FOUND, "text/plain", (void *)not_found,
			     sizeof(not_found) - 1, MHD_RESPMEM_PERSISTENT);

	pthread_mutex_lock(&h->lock);
	len = h->len;
	copy = h->buf ? malloc(len ? len : 1) : NULL;
	if (copy)
		memcpy(copy, h->buf, len);
	pthread_mutex_unlock(&h->lock);
	if (!copy)
		return reply(h, c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", (void *)not_ready,
			     sizeof(not_ready) - 1, MHD_RESPMEM_PERSISTENT);
	return reply(h, c, MHD_HTTP_OK, CONTENT_TYPE_METRICS, copy, len, MHD_RESPMEM_MUST_FREE);
}

struct http_server *http__start(int listen_fd)
{
	struct http_server *h = calloc(1, sizeof(*h));

	if (!h) {
		close(listen_fd);
		pr_err("cannot start the HTTP server: %s\n", strerror(ENOMEM));
		return NULL;
	}
	pthread_mutex_init(&h->lock, NULL);
	h->conns.next = h->conns.prev = &h->conns;
	h->d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, on_request, h,
				MHD_OPTION_LISTEN_SOCKET, listen_fd, MHD_OPTION_CONNECTION_LIMIT,
				(unsigned int)HTTP_MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
				(unsigned int)HTTP_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				(size_t)HTTP_CONNECTION_MEMORY, MHD_OPTION_NOTIFY_CONNECTION,
				on_connection, h, MHD_OPTION_URI_LOG_CALLBACK, on_uri, h,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_END);
	if (!h->d) {
		pr_err("cannot start the HTTP server (libmicrohttpd)\n");
		close(listen_fd);
		pthread_mutex_destroy(&h->lock);
		free(h);
		return NULL;
	}
	return h;
}

int http__publish(struct http_server *h, const char *buf, size_t len)
{
	char *copy = malloc(len ? len : 1), *old;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, len);
	pthread_mutex_lock(&h->lock);
	old = h->buf;
	h->buf = copy;
	h->len = len;
	pthread_mutex_unlock(&h->lock);
	free(old);
	return 0;
}

void http__requests(struct http_server *h, __u64 counts[4])
{
	int i;

	for (i = 0; i < 4; i++)
		counts[i] = __atomic_load_n(&h->requests[i], __ATOMIC_RELAXED);
}

void http__stop(struct http_server *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	pthread_mutex_destroy(&h->lock);
	free(h->buf);
	free(h);
}
