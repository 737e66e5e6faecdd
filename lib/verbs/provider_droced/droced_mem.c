/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced_mem.c - droced's client provider: registration of the
 * application's own memory (app/droced/README.md, "Memory").  droced cannot
 * reach a malloc'd page, so the pages under the region are moved, in
 * place, onto a memfd: their content written to it, then the memfd mapped
 * MAP_SHARED | MAP_FIXED over the same range (the program's pointers stay
 * valid, its data is kept).
 * The fd goes to droced (SCM_RIGHTS), which maps it and registers its
 * mapping under the application's address as iova.
 *
 * A region is passed as up to DMN_MEM_PIECES pieces, one MEM_PIECE
 * request each, then REG_MEM: every page range of it is either private
 * memory (anonymous or of a file, moved now, a new segment) or a segment
 * moved before (two MRs on one buffer see the same memory).
 * /proc/self/maps tells which, on this control path only.  Shared
 * mappings (of a file, or anonymous: another process sees them too) and
 * the stack: EOPNOTSUPP.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fcntl.h>

#include "verbs_daemon.h"

/* Moved ranges the process keeps at once (ENOMEM beyond). */
#define SEG_MAX 64
#define SEG_NAME "droce-mr"

/* A page range moved onto its memfd; ino names the memfd in the maps. */
struct mem_seg {
	int fd;			/* -1: free slot */
	ino_t ino;
};

/* One piece of a region: [start, end) of the process, at off in fd
 * (fd -1: anonymous, to be moved). */
struct mem_piece {
	uintptr_t start, end;
	uint64_t off;
	int fd;
	int shmid;		/* >= 0: of a System V segment, droced attaches it */
};

/* The process's moved ranges: one table per address space, as there is one
 * daemon connection per process (droced_verbs.c). */
static struct {
	pthread_mutex_t lock;	/* one registration at a time */
	struct mem_seg seg[SEG_MAX];
	bool seen[SEG_MAX];	/* this registration's maps name it */
} mem = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void mem_fork_prepare(void);
static void mem_fork_parent(void);
static void mem_fork_child(void);
static void mem_init_once(void);

/*
 * The fork handlers are registered at the connection (verbs_dmn_mem_init,
 * before lib/device's and the drop-in's): fork(3) runs the parent's and
 * the child's handlers in the order they were registered, and the child's
 * copy of the moved pages must exist before any other handler writes
 * memory (a context of the drop-in's may lie in a moved heap page, which
 * the child shares with its parent until then), and the parent's forking
 * thread must wait for it before its own handlers write.
 */
void
verbs_dmn_mem_init(void)
{
	pthread_mutex_lock(&mem.lock);
	mem_init_once();
	pthread_mutex_unlock(&mem.lock);
}

static void
mem_init_once(void)
{
	static bool done;

	if (done)
		return;
	for (int i = 0; i < SEG_MAX; i++)
		mem.seg[i].fd = -1;
	/* without the handlers a child would share the moved pages (fork) */
	if (pthread_atfork(mem_fork_prepare, mem_fork_parent, mem_fork_child) != 0)
		return;
	done = true;
}

/* One line of /proc/self/maps. */
struct maps_line {
	uintptr_t start, end;
	uint64_t off;
	char perms[5];
	unsigned long ino;
	char path[256];
};

static bool
maps_parse(const char *s, struct maps_line *l)
{
	int n = 0;

	l->path[0] = '\0';
	if (sscanf(s, "%" SCNxPTR "-%" SCNxPTR " %4s %" SCNx64 " %*x:%*x %lu %n",
		   &l->start, &l->end, l->perms, &l->off, &l->ino, &n) != 5)
		return false;
	(void)sscanf(s + n, "%255[^\n]", l->path);
	return true;
}

static struct mem_seg *
seg_of(const struct maps_line *l)
{
	if (strncmp(l->path, "/memfd:" SEG_NAME, strlen("/memfd:" SEG_NAME)) != 0)
		return NULL;
	for (int i = 0; i < SEG_MAX; i++)
		if (mem.seg[i].fd >= 0 && mem.seg[i].ino == (ino_t)l->ino) {
			mem.seen[i] = true;
			return &mem.seg[i];
		}
	return NULL;
}

/*
 * Private memory the process may read and write: anonymous (the heap, an
 * mmap of its own; not its stack), or a private file mapping: a program's
 * or library's .data and .bss, a MAP_PRIVATE mmap of a file.  Such a file
 * never sees the process's writes, so the moved pages keep its semantics;
 * what is lost is only a later change of the file showing through pages
 * the process had not yet written (README, "Memory").
 */
static bool
movable(const struct maps_line *l)
{
	if (strcmp(l->perms, "rw-p") != 0)
		return false;
	if (l->ino == 0)
		return l->path[0] == '\0' || strcmp(l->path, "[heap]") == 0;
	return l->path[0] == '/';
}

/*
 * A System V segment this process made (UCX's hugepage memory pools:
 * shmget(IPC_PRIVATE, SHM_HUGETLB), shmat, IPC_RMID): shared memory that
 * cannot move, which droced attaches itself by its id (the maps give it
 * as the inode) once it has checked that this process made it.
 */
static int
sysv_own(const struct maps_line *l)
{
	struct shmid_ds ds;

	if (strcmp(l->perms, "rw-s") != 0 || strncmp(l->path, "/SYSV", 5) != 0 ||
	    l->ino > INT_MAX || shmctl((int)l->ino, IPC_STAT, &ds) != 0 ||
	    ds.shm_cpid != getpid())
		return -1;
	return (int)l->ino;
}

/* The part of line l from *cur up to hi as a piece: 0 or -errno. */
static int
piece_of(const struct maps_line *l, uintptr_t *cur, uintptr_t hi, struct mem_piece *p)
{
	const struct mem_seg *s = seg_of(l);

	p->start = *cur;
	p->end = l->end < hi ? l->end : hi;
	p->off = 0;
	p->fd = -1;
	p->shmid = sysv_own(l);
	if (s != NULL && strcmp(l->perms, "rw-s") == 0) {
		p->fd = s->fd;
		p->off = l->off + (p->start - l->start);
	} else if (p->shmid >= 0) {
		p->off = l->off + (p->start - l->start);
	} else if (!movable(l)) {
		return -EOPNOTSUPP;	/* shared with another process, or the stack */
	}
	*cur = p->end;
	return 0;
}

/*
 * [lo, hi) as pieces (at most DMN_MEM_PIECES: -E2BIG), from the maps;
 * also marks the segments still mapped.  -EFAULT for a hole.
 */
static int
pieces_of(uintptr_t lo, uintptr_t hi, struct mem_piece *p, int *np)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	uintptr_t cur = lo;
	int n = 0, rc = 0;

	if (f == NULL)
		return -errno;
	memset(mem.seen, 0, sizeof(mem.seen));
	while (fgets(line, sizeof(line), f) != NULL) {
		struct maps_line l;

		if (!maps_parse(line, &l))
			continue;
		if (l.end <= cur || cur == hi || rc != 0) {
			(void)seg_of(&l);
			continue;
		}
		if (l.start > cur)
			rc = -EFAULT;	/* not mapped */
		else if (n == DMN_MEM_PIECES)
			rc = -E2BIG;
		else
			rc = piece_of(&l, &cur, hi, &p[n++]);
	}
	fclose(f);
	if (rc == 0 && cur != hi)
		rc = -EFAULT;
	*np = n;
	return rc;
}

/* Segments no longer in the maps (the program unmapped that memory). */
static void
segs_forget_unmapped(void)
{
	for (int i = 0; i < SEG_MAX; i++)
		if (mem.seg[i].fd >= 0 && !mem.seen[i]) {
			close(mem.seg[i].fd);
			mem.seg[i].fd = -1;
		}
}

/*
 * The content of [start, start + len) into fd from offset 0, by the kernel
 * (pwrite's system call itself, not libc's wrapper): the pages hold the
 * program's other objects too and, under ASan, their redzones, which an
 * instrumented copy reports as overflows.  0 or -errno.
 */
static int
pages_to_fd(int fd, uintptr_t start, size_t len)
{
	size_t done = 0;

	while (done < len) {
		long n = syscall(SYS_pwrite64, fd, (const void *)(start + done), len - done,
				 (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

/*
 * Move [p->start, p->end) onto a new memfd, in place.  Not atomic against
 * another thread writing those pages meanwhile (README, "Memory").
 */
static int
seg_move(struct mem_piece *p)
{
	size_t len = p->end - p->start;
	struct mem_seg *s = NULL;
	struct stat st;
	int fd;

	for (int i = 0; i < SEG_MAX && s == NULL; i++)
		if (mem.seg[i].fd < 0)
			s = &mem.seg[i];
	if (s == NULL)
		return -ENOMEM;
	fd = memfd_create(SEG_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len) != 0 || fstat(fd, &st) != 0 ||
	    pages_to_fd(fd, p->start, len) != 0)
		goto fail;
	if (mmap((void *)p->start, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 fd, 0) == MAP_FAILED)
		goto fail;
	/* droced maps it: a shrink would fault its engine (SIGBUS) */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0)
		goto fail;
	s->fd = fd;
	s->ino = st.st_ino;
	p->fd = fd;
	p->off = 0;
	return 0;
fail:
	{
		int rc = -errno;

		close(fd);
		return rc;
	}
}

/* The pieces to droced, then the registration (m: REG_MEM's request). */
static int
send_pieces(struct dmn_msg *m, const struct mem_piece *p, int n)
{
	for (int i = 0; i < n; i++) {
		struct dmn_msg pm = { .type = DMN_MEM_PIECE, .addr = p[i].start,
				      .len = p[i].end - p[i].start, .h = { p[i].off } };
		int rc;

		if (p[i].shmid >= 0) {
			pm.arg = DMN_PIECE_SYSV;
			pm.h[1] = (uint64_t)p[i].shmid;
			rc = verbs_daemon_call(&pm);
		} else {
			rc = verbs_daemon_call_fd(&pm, p[i].fd);
		}

		if (rc != 0)
			return rc;
	}
	m->type = DMN_REG_MEM;
	return verbs_daemon_call(m);
}

int
verbs_dmn_mem_reg(struct dmn_msg *m)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)m->addr & ~(pg - 1), hi;
	struct mem_piece p[DMN_MEM_PIECES];
	int n = 0, rc;

	if (m->len == 0 || m->addr == 0 || m->addr > UINTPTR_MAX - pg ||
	    m->len > UINTPTR_MAX - pg - m->addr)
		return EINVAL;
	hi = ((uintptr_t)(m->addr + m->len) + pg - 1) & ~(pg - 1);
	pthread_mutex_lock(&mem.lock);
	mem_init_once();
	rc = -pieces_of(lo, hi, p, &n);
	if (rc == 0)
		segs_forget_unmapped();
	for (int i = 0; i < n && rc == 0; i++)
		if (p[i].fd < 0 && p[i].shmid < 0)
			rc = -seg_move(&p[i]);
	if (rc == 0)
		rc = send_pieces(m, p, n);
	pthread_mutex_unlock(&mem.lock);
	return rc;
}

/*
 * m with the memfd that holds all of [addr, addr + len), moved before by a
 * registration: droced keeps that fd for a persistent region's reattach
 * (droced_persist.c).  Under mem.lock, so that no registration closes the
 * fd meanwhile.  0 (m holds the reply) or a positive errno: EFAULT when
 * the range is not one moved segment (several, or not moved).
 */
int
verbs_dmn_mem_call_fd(struct dmn_msg *m, const void *addr, size_t len)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)addr & ~(pg - 1), hi;
	struct mem_piece p[DMN_MEM_PIECES];
	int n = 0, rc;

	if (len == 0 || lo == 0 || (uintptr_t)addr > UINTPTR_MAX - pg ||
	    len > UINTPTR_MAX - pg - (uintptr_t)addr)
		return EINVAL;
	hi = ((uintptr_t)addr + len + pg - 1) & ~(pg - 1);
	pthread_mutex_lock(&mem.lock);
	mem_init_once();
	rc = -pieces_of(lo, hi, p, &n);
	if (rc == 0 && (n != 1 || p[0].fd < 0))
		rc = EFAULT;
	if (rc == 0)
		rc = verbs_daemon_call_fd(m, p[0].fd);
	pthread_mutex_unlock(&mem.lock);
	return rc == E2BIG || rc == EOPNOTSUPP ? EFAULT : rc;
}

/* ---- fork ------------------------------------------------------------------------ */

/*
 * fork() gives the child of a process with moved pages its own copy of
 * them, taken at the fork, as the kernel does for pinned pages of private
 * memory (ibv_is_fork_initialized(3): IBV_FORK_UNNEEDED): MAP_SHARED
 * would leave parent and child writing one heap.  The child copies each
 * moved range into private anonymous memory put in its place (mremap); the
 * forking thread of the parent waits until it has, so that its own writes
 * (its malloc, right after fork returns) reach the child's copy later
 * than the fork, never during.  Until its copy exists the child must not
 * allocate (its heap pages are still the parent's: stdio's fopen would
 * take freed chunks from them).  A registration and a fork exclude each
 * other (mem.lock across the fork).
 */
static struct {
	int pipe[2];		/* the child's "copied", the parent's wait */
	bool wait;		/* this fork has moved pages to copy */
} fork_sync = { .pipe = { -1, -1 } };

static bool
segs_any(void)
{
	for (int i = 0; i < SEG_MAX; i++)
		if (mem.seg[i].fd >= 0)
			return true;
	return false;
}

static void
mem_fork_prepare(void)
{
	pthread_mutex_lock(&mem.lock);
	fork_sync.wait = segs_any() && pipe2(fork_sync.pipe, O_CLOEXEC) == 0;
}

static void
mem_fork_parent(void)
{
	int saved = errno;	/* fork's */
	char c;

	if (fork_sync.wait) {
		close(fork_sync.pipe[1]);
		/* one byte once copied; EOF if the child died first or no child */
		while (read(fork_sync.pipe[0], &c, 1) < 0 && errno == EINTR)
			;
		close(fork_sync.pipe[0]);
	}
	pthread_mutex_unlock(&mem.lock);
	errno = saved;
}

/* A range of the child to copy. */
struct mem_range {
	uintptr_t start, end;
};

/* Mappings of moved segments a child copies: a segment may be split. */
#define FORK_RANGES (4 * SEG_MAX)

/* [r->start, r->end) replaced by a private copy of itself: 0 or -errno.
 * The copy is the kernel's (a read of /proc/self/mem), as in pages_to_fd. */
static int
range_privatize(int self, const struct mem_range *r)
{
	size_t len = r->end - r->start, done = 0;
	void *copy = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (copy == MAP_FAILED)
		return -errno;
	while (done < len) {
		ssize_t n = pread(self, (char *)copy + done, len - done, (off_t)(r->start + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			munmap(copy, len);
			return n < 0 ? -errno : -EIO;
		}
		done += (size_t)n;
	}
	if (mremap(copy, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)r->start) == MAP_FAILED) {
		int rc = -errno;

		munmap(copy, len);
		return rc;
	}
	return 0;
}

/* One maps line: a shared mapping of a moved segment goes to r[*n]. */
static int
range_of_line(const char *line, struct mem_range *r, int *n)
{
	struct maps_line l;

	if (!maps_parse(line, &l) || seg_of(&l) == NULL || strcmp(l.perms, "rw-s") != 0)
		return 0;
	if (*n == FORK_RANGES)
		return -E2BIG;
	r[(*n)++] = (struct mem_range){ l.start, l.end };
	return 0;
}

/*
 * The mappings of moved segments, from /proc/self/maps read with read(2)
 * into the stack: no malloc (stdio's buffers), because until they are
 * copied the child's heap pages are still the parent's.  Their number,
 * or -errno.
 */
static int
ranges_to_copy(struct mem_range *r)
{
	char buf[4096];
	size_t have = 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC), n = 0, rc = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t got = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *line = buf, *nl;

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			rc = got < 0 ? -errno : 0;
			break;
		}
		have += (size_t)got;
		buf[have] = '\0';
		while (rc == 0 && (nl = strchr(line, '\n')) != NULL) {
			*nl = '\0';
			rc = range_of_line(line, r, &n);
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (rc != 0 || have == sizeof(buf) - 1)
			rc = rc != 0 ? rc : -E2BIG;	/* a line longer than the buffer */
		if (rc != 0)
			break;
	}
	close(fd);
	return rc != 0 ? rc : n;
}

/* Every mapping of a moved segment in this (the child's) address space:
 * read all of them first, as a remap would shift the maps under the read. */
static int
segs_privatize(void)
{
	struct mem_range r[FORK_RANGES];
	int self, n = ranges_to_copy(r), rc = 0;

	if (n < 0)
		return n;
	self = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return -errno;
	for (int i = 0; i < n && rc == 0; i++)
		rc = range_privatize(self, &r[i]);
	close(self);
	return rc;
}

static void
mem_fork_child(void)
{
	int saved = errno;

	if (fork_sync.wait) {
		int rc = segs_privatize();

		if (rc != 0) {
			/* sharing the parent's heap would corrupt both: not run */
			dprintf(STDERR_FILENO, "droce: fork: the child's copy of registered "
				"memory failed (%s); the child exits\n", strerror(-rc));
			_exit(127);
		}
		close(fork_sync.pipe[0]);
		(void)!write(fork_sync.pipe[1], "", 1);
		close(fork_sync.pipe[1]);
	}
	/* the parent's registrations are not the child's (it has no device) */
	for (int i = 0; i < SEG_MAX; i++)
		if (mem.seg[i].fd >= 0) {
			close(mem.seg[i].fd);
			mem.seg[i].fd = -1;
		}
	pthread_mutex_unlock(&mem.lock);
	errno = saved;
}
