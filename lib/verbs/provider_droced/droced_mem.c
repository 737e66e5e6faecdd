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
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
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
};

/* The process's moved ranges: one table per address space, as there is one
 * daemon connection per process (droced_verbs.c). */
static struct {
	pthread_mutex_t lock;	/* one registration at a time */
	struct mem_seg seg[SEG_MAX];
	bool seen[SEG_MAX];	/* this registration's maps name it */
} mem = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void
mem_init_once(void)
{
	static bool done;

	if (done)
		return;
	for (int i = 0; i < SEG_MAX; i++)
		mem.seg[i].fd = -1;
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

/* The part of line l from *cur up to hi as a piece: 0 or -errno. */
static int
piece_of(const struct maps_line *l, uintptr_t *cur, uintptr_t hi, struct mem_piece *p)
{
	const struct mem_seg *s = seg_of(l);

	p->start = *cur;
	p->end = l->end < hi ? l->end : hi;
	p->off = 0;
	p->fd = -1;
	if (s != NULL && strcmp(l->perms, "rw-s") == 0) {
		p->fd = s->fd;
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
		int rc = verbs_daemon_call_fd(&pm, p[i].fd);

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
		if (p[i].fd < 0)
			rc = -seg_move(&p[i]);
	if (rc == 0)
		rc = send_pieces(m, p, n);
	pthread_mutex_unlock(&mem.lock);
	return rc;
}
