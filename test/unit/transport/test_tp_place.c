/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tp_place (lib/transport tp_place.h): the payload lands exactly, nothing
 * beside it is touched, and each byte of its last 64 is stored once, in
 * ascending order, the last byte by the final store.  Twice: its stores
 * traced as the source makes them (TP_PLACE_NOTE), for every length and
 * offset; and, where the machine's hardware breakpoints count stores
 * (perf_event_open, PERF_TYPE_BREAKPOINT; a calibration store says so),
 * the store instructions the compiled code executes on each byte of the
 * tail.  memcpy's count for the last byte is printed beside it (glibc's
 * AVX-512 copy of 64 bytes stores the last byte twice, which hung
 * riostream).  Some virtual machines (Firecracker's) count nothing: the
 * test then says so and rests on the trace.
 */
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>
#include <errno.h>

/* the tail's stores as tp_place makes them, in order */
#define TRACE_MAX 128
static struct {
	const uint8_t *at[TRACE_MAX];
	uint32_t len[TRACE_MAX];
	unsigned int n;
} trace;

#define TP_PLACE_NOTE(d, w)						\
	do {								\
		if (trace.n < TRACE_MAX) {				\
			trace.at[trace.n] = (d);			\
			trace.len[trace.n] = (w);			\
		}							\
		trace.n++;						\
	} while (0)

#include "tp_place.h"

#define GUARD 0x5a

static uint8_t src[512];
static uint8_t dst[640] __attribute__((aligned(64)));

/* A counter of the stores to the byte at p (this thread, user space). */
static int
watch_writes(const volatile uint8_t *p)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_BREAKPOINT;
	a.size = sizeof(a);
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = (uintptr_t)p;
	a.bp_len = HW_BREAKPOINT_LEN_1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0)
		fail_msg("perf_event_open(PERF_TYPE_BREAKPOINT): %s (the test needs "
			 "hardware breakpoints and root)", strerror(errno));
	return fd;
}

static uint64_t
stores_to(const volatile uint8_t *p, void (*copy)(void *, const void *, uint32_t),
	  uint8_t *d, uint32_t len)
{
	int fd = watch_writes(p);
	uint64_t n = 0;

	assert_int_equal(ioctl(fd, PERF_EVENT_IOC_RESET, 0), 0);
	assert_int_equal(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	copy(d, src, len);
	assert_int_equal(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	assert_int_equal(read(fd, &n, sizeof(n)), (ssize_t)sizeof(n));
	close(fd);
	return n;
}

static void
place(void *d, const void *s, uint32_t len)
{
	tp_place(d, s, len);
}

static void
libc_memcpy(void *d, const void *s, uint32_t len)
{
	memcpy(d, s, len);
}

static void
fill_src(void)
{
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + 3);
}

/* Every length 0..300 at every offset 0..7: exact, and no byte beside. */
static void
test_exact(void **state)
{
	(void)state;
	fill_src();
	for (uint32_t off = 0; off < 8; off++) {
		for (uint32_t len = 0; len <= 300; len++) {
			memset(dst, GUARD, sizeof(dst));
			tp_place(dst + 64 + off, src, len);
			assert_memory_equal(dst + 64 + off, src, len);
			for (uint32_t i = 0; i < 64 + off; i++)
				assert_int_equal(dst[i], GUARD);
			for (uint32_t i = 64 + off + len; i < sizeof(dst); i++)
				assert_int_equal(dst[i], GUARD);
		}
	}
}

/* Every length 0..300 at every offset 0..7: the traced stores of the
 * tail are contiguous, ascending, begin where the tail does and end with
 * the last byte: each of its bytes once, the last one last. */
static void
test_tail_traced(void **state)
{
	(void)state;
	fill_src();
	for (uint32_t off = 0; off < 8; off++) {
		for (uint32_t len = 0; len <= 300; len++) {
			const uint8_t *d = dst + 64 + off;
			const uint8_t *next = d + (len > TP_PLACE_TAIL ? len - TP_PLACE_TAIL : 0);

			trace.n = 0;
			tp_place(dst + 64 + off, src, len);
			assert_true(trace.n <= TRACE_MAX);
			for (unsigned int k = 0; k < trace.n; k++) {
				if (trace.at[k] != next)
					fail_msg("len %u offset %u: store %u at byte %td, expected %td",
						 len, off, k, trace.at[k] - d, next - d);
				next += trace.len[k];
			}
			if (next != d + len)
				fail_msg("len %u offset %u: the tail's stores end at byte %td", len,
					 off, next - d);
		}
	}
}

/* Whether a hardware write breakpoint counts a plain store here. */
static uint64_t
calibration_count(void)
{
	static volatile uint8_t probe;
	int fd = watch_writes(&probe);
	uint64_t n = 0;

	assert_int_equal(ioctl(fd, PERF_EVENT_IOC_RESET, 0), 0);
	assert_int_equal(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	probe = 1;
	assert_int_equal(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
	assert_int_equal(read(fd, &n, sizeof(n)), (ssize_t)sizeof(n));
	close(fd);
	return n;
}

/* Each of the last 64 bytes (all of a shorter payload) stored once by the
 * compiled code, counted by hardware breakpoints where they count. */
static void
test_tail_stored_once(void **state)
{
	uint64_t cal = calibration_count();

	if (cal != 1) {
		printf("# hardware breakpoints count %llu stores for one on this machine: "
		       "the compiled code's stores are not counted here; test_tail_traced "
		       "checks the stores tp_place makes\n", (unsigned long long)cal);
		return;
	}
	static const uint32_t lens[] = { 1, 7, 8, 9, 16, 31, 32, 33, 63, 64, 65, 100,
					 128, 256, 300 };

	(void)state;
	fill_src();
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		uint32_t len = lens[k], from = len > TP_PLACE_TAIL ? len - TP_PLACE_TAIL : 0;

		for (uint32_t off = 0; off < 2; off++) {
			uint8_t *d = dst + 64 + off;

			for (uint32_t b = from; b < len; b++) {
				uint64_t n = stores_to(d + b, place, d, len);

				if (n != 1)
					fail_msg("len %u offset %u: byte %u stored %llu times", len,
						 off, b, (unsigned long long)n);
			}
		}
		printf("# len %u: every byte of the tail stored once; memcpy stored the "
		       "last byte %llu time(s)\n", len,
		       (unsigned long long)stores_to(dst + 64 + len - 1, libc_memcpy,
						     dst + 64, len));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_tail_traced),
		cmocka_unit_test(test_tail_stored_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
