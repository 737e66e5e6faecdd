/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced - the memory-owner daemon (README.md).
 *
 *   droced [EAL options] -- --droce-... --droce-transport-lcores=N --socket=PATH
 *   droced --ctl PATH list
 *   droced --ctl PATH release NAME
 *
 * droced is the EAL primary of its own file prefix (droced-<pid> unless
 * --file-prefix is given), opens the first device with its engine on a
 * dedicated transport lcore, and serves applications on the unix socket
 * PATH (SOCK_SEQPACKET, one connection per application).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "droced.h"

/* Applications served at once unless --max-apps=N says otherwise. */
#define DROCED_MAX_APPS 1024

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int
unix_addr(const char *path, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path))
		return -ENAMETOOLONG;
	memcpy(a->sun_path, path, strlen(path) + 1);
	return 0;
}

/* One request of droced --ctl on its own connection: 0 or -1 (said why). */
static int
ctl_call(const char *path, struct dmn_msg *m)
{
	struct sockaddr_un a;
	int fd, rc = 0;

	errno = 0;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || unix_addr(path, &a) != 0 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    send(fd, m, sizeof(*m), MSG_NOSIGNAL) != (ssize_t)sizeof(*m) ||
	    recv(fd, m, sizeof(*m), 0) != (ssize_t)sizeof(*m))
		rc = errno != 0 ? errno : EPROTO;
	else if (m->err != 0)
		rc = m->err;
	else if (m->arg < 0 || m->arg > DMN_LIST_MAX || m->len > DMN_LIST_MAX)
		rc = EPROTO;
	if (fd >= 0)
		close(fd);
	if (rc != 0)
		fprintf(stderr, "droced --ctl %s: %s\n", path, strerror(rc));
	return rc != 0 ? -1 : 0;
}

static void
print_app(const struct dmn_app_info *p)
{
	printf("pid %d: pd %u mr %u cq %u qp %u buf %u buf_bytes %" PRIu64
	       " mem %u mem_bytes %" PRIu64 " mw %u dq_bad %" PRIu64 " srq %u ah %u\n",
	       (int)p->pid, p->pd, p->mr, p->cq, p->qp, p->buf, p->buf_bytes,
	       p->mem, p->mem_bytes, p->mw, p->dq_bad, p->srq, p->ah);
}

static void
print_region(const struct dmn_persist_info *p)
{
	printf("region %.*s: owner %d bytes %" PRIu64 " key 0x%x addr 0x%" PRIx64
	       " qp %u lease_ms %u remaining_us %" PRIu64 "\n",
	       (int)sizeof(p->name), p->name, (int)p->owner, p->bytes, p->key, p->addr,
	       p->qp, p->lease_ms, p->remaining_us);
}

/*
 * All the applications (regions: the regions) in pages of DMN_LIST_MAX
 * (LIST from an offset) into *out: how many, or -1.  Each page is
 * droced's state at its request: one that comes or goes between two pages
 * may be seen twice or not at all.
 */
static long
ctl_collect(const char *path, bool regions, void **out)
{
	size_t size = regions ? sizeof(struct dmn_persist_info) : sizeof(struct dmn_app_info);
	uint64_t at = 0, n;
	struct dmn_msg m;
	char *all = NULL, *more;

	do {
		m = (struct dmn_msg){ .type = DMN_LIST,
				      .h = { regions ? UINT32_MAX : at, regions ? at : UINT32_MAX } };
		if (ctl_call(path, &m) != 0 || (more = realloc(all, (at + DMN_LIST_MAX) * size)) == NULL) {
			free(all);
			return -1;
		}
		all = more;
		n = regions ? m.len : (uint64_t)m.arg;	/* 0 to DMN_LIST_MAX: ctl_call */
		memcpy(all + at * size, regions ? (void *)m.u.list.persist : (void *)m.u.list.apps,
		       n * size);
		at += n;
	} while (n == DMN_LIST_MAX && at < m.h[regions ? 1 : 0]);
	*out = all;
	return (long)at;
}

/* droced --ctl PATH list: one line per application, then per region. */
static int
ctl_list(const char *path)
{
	void *pa, *pr;
	long na = ctl_collect(path, false, &pa), nr;
	const struct dmn_app_info *apps = pa;
	const struct dmn_persist_info *regs;

	if (na < 0)
		return 1;
	nr = ctl_collect(path, true, &pr);
	if (nr < 0) {
		free(pa);
		return 1;
	}
	regs = pr;
	printf("applications: %ld\n", na);
	for (long i = 0; i < na; i++)
		print_app(&apps[i]);
	printf("persistent regions: %ld\n", nr);
	for (long i = 0; i < nr; i++)
		print_region(&regs[i]);
	free(pa);
	free(pr);
	return 0;
}

/* droced --ctl PATH release NAME */
static int
ctl_release(const char *path, const char *name)
{
	struct dmn_msg m = { .type = DMN_RELEASE };

	if (strlen(name) >= sizeof(m.u.name)) {
		fprintf(stderr, "droced --ctl %s release: %s\n", path, strerror(ENAMETOOLONG));
		return 1;
	}
	strcpy(m.u.name, name);
	if (ctl_call(path, &m) != 0)
		return 1;
	printf("released %s\n", name);
	return 0;
}

static int
listen_on(const char *path)
{
	struct sockaddr_un a;
	int fd;

	if (unix_addr(path, &a) != 0)
		return -1;
	(void)unlink(path);
	/* non-blocking: accept_app takes what waits until EAGAIN */
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(fd, SOMAXCONN) != 0) {
		perror("droced: socket");
		return -1;
	}
	return fd;
}

/* The connections droced polls: the applications' (and --ctl's), with a
 * pollfd each after the listening socket's and the events'. */
static struct {
	struct droced_app **app;
	struct pollfd *pfd;
	unsigned int n, cap;
	unsigned int max_apps;	/* --max-apps */
} conns = { .max_apps = DROCED_MAX_APPS };

static bool
conns_grow(void)
{
	unsigned int cap = conns.cap != 0 ? conns.cap * 2 : 16;
	struct droced_app **app = realloc(conns.app, cap * sizeof(*app));
	struct pollfd *pfd;

	if (app == NULL)
		return false;
	conns.app = app;
	/* the listener, the engine's events, the region poller's wake-up,
	 * then each application's connection, then the CM's */
	pfd = realloc(conns.pfd, (cap + 4) * sizeof(*pfd));
	if (pfd == NULL)
		return false;
	conns.pfd = pfd;
	conns.cap = cap;
	return true;
}

/* Connections taken in one round at most: applications starting 50 at a
 * time wait for their accept one round each otherwise (each round polls
 * every connection: O(applications)). */
#define ACCEPT_BURST 64

/* The new connections (one over --max-apps is answered EUSERS at its
 * HELLO, a clear error rather than a closed connection). */
static void
accept_app(int lfd)
{
	for (unsigned int k = 0; k < ACCEPT_BURST; k++) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);	/* blocking */
		struct droced_app *a;

		if (fd < 0)
			return;
		if ((conns.n == conns.cap && !conns_grow()) ||
		    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
		    (a = droced_app_new(fd, cred.pid)) == NULL) {
			close(fd);
			continue;
		}
		conns.app[conns.n++] = a;
	}
}

/* Connection i is closed: the application reaped, the last one moved in. */
static void
conn_drop(unsigned int i)
{
	droced_app_reap(conns.app[i]);
	conns.app[i] = conns.app[--conns.n];
}

/* The engine's events: each to its application's ring, then acked here; a
 * persistent region's lease expiry releases it. */
static void
drain_events(struct droce_context *ctx)
{
	struct droce_async_event ev;

	while (droce_get_async_event(ctx, &ev) == 0) {
		struct droce_mr *mr = ev.event_type == DROCE_EVENT_MR_LEASE_EXPIRED ?
				      ev.element.mr : NULL;

		droced_route_event(&ev);
		droce_ack_async_event(&ev);	/* before the dereg of the MR it names */
		if (mr != NULL)
			droced_lease_expired(mr);
	}
}

/*
 * The main thread's loop: requests, reaps, events and timers.  The queue
 * regions' data path is not here: their poller runs on the engine's lcore
 * (droced_dq.c), held off from when poll(2) returns until the next
 * poll(2), so that nothing it reads (the regions, their slots, the
 * applications' tables) changes under it.
 */
static void
serve(int lfd, struct droce_context *ctx)
{
	struct pollfd *pfd;
	int wait_ms, n;

	if (!conns_grow()) {
		fprintf(stderr, "droced: %s\n", strerror(ENOMEM));
		return;
	}
	droced_dq_hold();
	while (!stop) {
		/* released regions and dead applications whose linger is over,
		 * kept regions' windows; after the last round's requests and
		 * reaps, so that what they started is looked at in time */
		wait_ms = droced_linger_tick(droced_persist_tick(droced_cm_tick(200)));
		pfd = conns.pfd;
		pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = ctx->async_fd, .events = POLLIN };
		pfd[2] = (struct pollfd){ .fd = droced_dq_wake_fd(), .events = POLLIN };
		for (unsigned int i = 0; i < conns.n; i++)
			pfd[3 + i] = (struct pollfd){ .fd = droced_app_fd(conns.app[i]),
						      .events = POLLIN };
		pfd[conns.n + 3] = (struct pollfd){ .fd = droced_cm_fd(), .events = POLLIN };
		droced_dq_release();
		n = poll(pfd, conns.n + 4, wait_ms);
		droced_dq_hold();
		if (n <= 0)
			continue;
		if (pfd[2].revents & POLLIN)
			droced_dq_woken();
		/* received CM MADs queued before the requests that take them */
		if (pfd[conns.n + 3].revents != 0)
			droced_cm_poll();
		/* a dead application first: its keys are revoked at once */
		for (unsigned int i = conns.n; i-- > 0;)
			if (pfd[3 + i].revents != 0 && !droced_app_serve(conns.app[i]))
				conn_drop(i);
		if (pfd[1].revents & POLLIN)
			drain_events(ctx);
		if (pfd[0].revents & POLLIN)
			accept_app(lfd);
	}
	while (conns.n > 0)
		conn_drop(conns.n - 1);
	droced_persist_shutdown();
	droced_linger_shutdown();
	free(conns.app);
	free(conns.pfd);
}

/*
 * Where the shared memory starts, unless --base-virtaddr is given: every
 * application maps it at the same address, so it must be free in all of
 * them.  EAL's default (4 GiB) is inside ASan's shadow, so under ASan the
 * primary got whatever mmap chose, near the libraries, which an
 * application's own mappings then overlapped now and then ("Cannot
 * reserve ... at requested address").  32 TiB is above ASan's shadow and
 * far below its allocator, the libraries and the stacks.
 */
#define DROCED_BASE_VIRTADDR "--base-virtaddr=0x200000000000"

static bool
has_eal_opt(int argc, char **argv, const char *opt, const char **value)
{
	size_t n = strlen(opt);

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strncmp(argv[i], opt, n) == 0 && argv[i][n] == '=') {
			*value = argv[i] + n + 1;
			return true;
		}
	return false;
}

/* --no-secondaries among droced's own options (after EAL's "--"). */
static bool
no_secondaries(int argc, char **argv)
{
	int i = 1;

	while (i < argc && strcmp(argv[i], "--") != 0)
		i++;
	for (; i < argc; i++)
		if (strcmp(argv[i], "--no-secondaries") == 0)
			return true;
	return false;
}

/*
 * EAL's arguments with --proc-type=primary, a file prefix of our own and
 * the base address.  With --no-secondaries also --in-memory: no shared
 * configuration for a secondary to join, and droced's hugepages are no
 * files in hugetlbfs that a process of its uid could open by path (README
 * "Trust boundary").
 */
static char **
eal_args(int argc, char **argv, int *nargc, char *prefix, size_t len)
{
	static char prefix_opt[DMN_PREFIX_LEN + 16];
	char **v = calloc((size_t)argc + 5, sizeof(*v));
	const char *given;
	int j = 0;

	if (v == NULL)
		return NULL;
	if (has_eal_opt(argc, argv, "--file-prefix", &given))
		snprintf(prefix, len, "%s", given);
	else
		snprintf(prefix, len, "droced-%d", (int)getpid());
	snprintf(prefix_opt, sizeof(prefix_opt), "--file-prefix=%s", prefix);
	v[j++] = argv[0];
	v[j++] = "--proc-type=primary";	/* shared: the applications join it */
	if (!has_eal_opt(argc, argv, "--file-prefix", &given))
		v[j++] = prefix_opt;
	if (!has_eal_opt(argc, argv, "--base-virtaddr", &given))
		v[j++] = DROCED_BASE_VIRTADDR;
	if (no_secondaries(argc, argv))
		v[j++] = "--in-memory";
	for (int i = 1; i < argc; i++)
		v[j++] = argv[i];
	*nargc = j;
	return v;
}

/* --socket=PATH, else the default one (its folder made if missing). */
static const char *
socket_path(int argc, char **argv)
{
	static char dir[] = DROCE_DAEMON_SOCKET;

	for (int i = 0; i < argc; i++)
		if (strncmp(argv[i], "--socket=", 9) == 0)
			return argv[i] + 9;
	*strrchr(dir, '/') = '\0';
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "droced: %s: %s\n", dir, strerror(errno));
		return NULL;
	}
	return DROCE_DAEMON_SOCKET;
}

/*
 * droced's command line: as given, or the one --config=FILE stands for
 * (droced --config=FILE [-- droce options]); NULL after saying why.
 */
static char **
command_line(int *argc, char **argv)
{
	const char *file;

	if (*argc < 2 || strncmp(argv[1], "--config=", 9) != 0)
		return argv;
	file = argv[1] + 9;
	if (*argc > 2 && strcmp(argv[2], "--") != 0) {
		fprintf(stderr, "droced: --config=FILE takes only droce options after --\n");
		return NULL;
	}
	return droced_config_argv(argv[0], file, *argc > 3 ? *argc - 3 : 0, argv + 3, argc);
}

/* --max-apps=N (1 or more) into conns.max_apps: false if malformed. */
static bool
max_apps_opt(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		char *end;
		unsigned long v;

		if (strncmp(argv[i], "--max-apps=", 11) != 0)
			continue;
		errno = 0;
		v = strtoul(argv[i] + 11, &end, 10);
		if (errno != 0 || *end != '\0' || end == argv[i] + 11 || v == 0 || v > 1u << 20)
			return false;
		conns.max_apps = (unsigned int)v;
	}
	return true;
}

static struct droce_context *
open_device(void)
{
	struct droce_device **list = droce_get_device_list(NULL);
	struct droce_context *ctx = NULL;

	if (list == NULL || list[0] == NULL) {
		fprintf(stderr, "droced: no device (give EAL a port and droce an address)\n");
	} else {
		ctx = droce_open_device(list[0]);
		if (ctx == NULL)
			fprintf(stderr, "droced: cannot open %s: %s\n",
				droce_get_device_name(list[0]), strerror(errno));
	}
	droce_free_device_list(list);
	/* the applications post and poll on the engine's rings themselves */
	if (ctx != NULL && !verbs_dedicated(ctx)) {
		fprintf(stderr, "droced: needs --droce-transport-lcores=N (an EAL worker lcore)\n");
		droce_close_device(ctx);
		ctx = NULL;
	}
	return ctx;
}

static void
usage(void)
{
	printf("Usage:\n"
	       "  droced [EAL options] -- [droce options] --droce-transport-lcores=N [--socket=PATH]\n"
	       "  droced --config=FILE [-- droce options]\n"
	       "  droced --ctl [PATH] list\n"
	       "  droced --ctl [PATH] release NAME\n"
	       "  droced -h | --help\n"
	       "\n"
	       "The memory-owner daemon: owns the DPDK port and droce's engine (on a\n"
	       "transport lcore) and serves the applications that attach to PATH\n"
	       "(DROCE_DAEMON=PATH, daemon = PATH in [droce]; droce(7)).\n"
	       "\n"
	       "Options:\n"
	       "  --socket=PATH     the unix socket the applications connect to (default\n"
	       "                    %s, where the drop-in libibverbs looks)\n"
	       "  --config=FILE     the command line from FILE's [droced] section (eal =,\n"
	       "                    socket =, max_apps =, secondaries = no) and droce's\n"
	       "                    device sections (--droce-config=FILE); config/droced.ini\n"
	       "  --max-apps=N      applications served at once (default %u); one more\n"
	       "                    is refused: its droce_init fails EUSERS\n"
	       "  --no-secondaries  serve applications on queue regions only: EAL runs\n"
	       "                    --in-memory, which no DPDK secondary can join, and an\n"
	       "                    application asking for shared queues is refused\n"
	       "  --ctl PATH list   the applications attached to the droced on PATH,\n"
	       "                    their pids and object counts, and the persistent\n"
	       "                    regions (name, owner, bytes, key, lease), then exit\n"
	       "  --ctl PATH release NAME  release the persistent region NAME (not one\n"
	       "                    whose owner lives)\n"
	       "  -h, --help        this text\n", DROCE_DAEMON_SOCKET, DROCED_MAX_APPS);
}

int
main(int argc, char **argv)
{
	char prefix[DMN_PREFIX_LEN];
	struct droce_context *ctx;
	const char *path;
	char **args;
	int nargs, consumed, lfd;
	bool regions_only;

	if (argc == 4 && strcmp(argv[1], "--ctl") == 0 && strcmp(argv[3], "list") == 0)
		return ctl_list(argv[2]);
	if (argc == 3 && strcmp(argv[1], "--ctl") == 0 && strcmp(argv[2], "list") == 0)
		return ctl_list(DROCE_DAEMON_SOCKET);
	if (argc == 5 && strcmp(argv[1], "--ctl") == 0 && strcmp(argv[3], "release") == 0)
		return ctl_release(argv[2], argv[4]);
	if (argc == 4 && strcmp(argv[1], "--ctl") == 0 && strcmp(argv[2], "release") == 0)
		return ctl_release(DROCE_DAEMON_SOCKET, argv[3]);
	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		usage();	/* before EAL, which would print its own */
		return 0;
	}
	argv = command_line(&argc, argv);
	if (argv == NULL)
		return 1;
	unsetenv("DROCE_DAEMON");	/* droced is the daemon, not its client */
	regions_only = no_secondaries(argc, argv);	/* before droce_init moves argv */
	droced_sweep_dead();
	args = eal_args(argc, argv, &nargs, prefix, sizeof(prefix));
	if (args == NULL)
		return 1;
	consumed = droce_init(nargs, args);
	if (consumed < 0) {
		fprintf(stderr, "droced: droce_init: %s\n", strerror(errno));
		droced_remove_own(prefix);	/* EAL may have started */
		return 1;
	}
	path = socket_path(nargs - consumed, args + consumed);
	if (path != NULL && !max_apps_opt(nargs - consumed, args + consumed)) {
		fprintf(stderr, "droced: --max-apps=N wants a number from 1 to %u\n", 1u << 20);
		path = NULL;
	}
	ctx = path != NULL ? open_device() : NULL;
	lfd = ctx != NULL ? listen_on(path) : -1;
	/* the queue regions' poller on the engine's lcore */
	if (lfd >= 0 && (errno = droced_dq_start(ctx)) != 0) {
		fprintf(stderr, "droced: the queue regions' poller: %s\n", strerror(errno));
		close(lfd);
		unlink(path);
		lfd = -1;
	}
	if (lfd >= 0) {
		signal(SIGPIPE, SIG_IGN);
		signal(SIGTERM, on_signal);
		signal(SIGINT, on_signal);
		/* an empty prefix in HELLO: no secondary is served */
		droced_apps_init(ctx, regions_only ? "" : prefix,
				 conns.max_apps);
		droced_cm_init(ctx);
		(void)fcntl(ctx->async_fd, F_SETFL, O_NONBLOCK);
		if (regions_only)
			printf("droced: no secondaries (EAL --in-memory): queue regions only\n");
		printf("droced: ready on %s, EAL file prefix %s\n", path, prefix);
		fflush(stdout);
		serve(lfd, ctx);
		droced_cm_shutdown();
		droced_dq_stop(ctx);
		close(lfd);
		unlink(path);
	}
	if (ctx != NULL)
		droce_close_device(ctx);
	droce_cleanup();
	droced_remove_own(prefix);	/* also after a failed start */
	free(args);
	return lfd >= 0 ? 0 : 1;
}
