/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_prot_concurrency.c - revocation against a real second thread that
 * plays the data-path lcore: after dereg/rereg/invalidate returns, no
 * lookup with the old key succeeds and no write through an old host
 * pointer lands.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "prot_test.h"

#define QPN 7
#define LEN 64
#define ROUNDS 1500

enum mode { MODE_DEREG, MODE_REREG, MODE_INVALIDATE };

struct shared {
	struct prot_tables *t;
	uint32_t pd;
	uint8_t *buf;
	uint64_t state;		/* key << 32 | round << 1 | revoked */
	uint64_t lookups;	/* quiescent points passed by the reader */
	uint64_t successes;
	uint64_t violations;
	int stop;
	int ready;
	int reader_err;
};

static void *
reader_main(void *arg)
{
	struct shared *s = arg;
	int id = prot_reader_register(s->t);
	uint64_t n = 0;

	/* No cmocka asserts off the main thread: report instead. */
	if (id < 0) {
		s->reader_err = 1;
		__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		uint64_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		uint32_t key = (uint32_t)(st >> 32);
		void *host = NULL;

		if (key != 0 &&
		    prot_check_remote(s->t, key, s->pd, QPN, PROT_OP_WRITE,
				      va_of(s->buf), LEN, &host) == PROT_OK) {
			/* The key was already revoked when we started. */
			if (st & 1)
				__atomic_add_fetch(&s->violations, 1,
						   __ATOMIC_RELAXED);
			/* "DMA" in flight, sometimes slowly: a write, a
			 * pause, another write through the same pointer. */
			memset(host, 0xab, LEN);
			if ((++n & 7) == 0) {
				sched_yield();
				memset(host, 0xab, LEN);
			}
			__atomic_add_fetch(&s->successes, 1, __ATOMIC_RELAXED);
		}
		prot_reader_quiescent(s->t, id);
		__atomic_add_fetch(&s->lookups, 1, __ATOMIC_RELEASE);
	}
	prot_reader_unregister(s->t, id);
	return NULL;
}

static void
wait_lookups(struct shared *s, uint64_t more)
{
	uint64_t target = __atomic_load_n(&s->lookups, __ATOMIC_ACQUIRE) +
		more;

	while (__atomic_load_n(&s->lookups, __ATOMIC_ACQUIRE) < target)
		sched_yield();
}

static void
run_rounds(struct fx *f, enum mode mode, int rounds)
{
	struct shared s = { .t = f->t, .pd = f->pd, .buf = f->buf };
	uint32_t mrk = 0, w = 0, key = 0;
	pthread_t th;
	int r;

	if (mode == MODE_INVALIDATE) {
		assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, LEN,
					     ALL_REMOTE | PROT_ACC_MW_BIND,
					     &mrk), 0);
		assert_int_equal(prot_mw_alloc(f->t, f->pd, 2, &key), 0);
		w = prot_key_index(key);
	}
	assert_int_equal(pthread_create(&th, NULL, reader_main, &s), 0);
	while (!__atomic_load_n(&s.ready, __ATOMIC_ACQUIRE))
		sched_yield();

	for (r = 1; r <= rounds; r++) {
		uint64_t ok_before = __atomic_load_n(&s.successes,
						     __ATOMIC_ACQUIRE);
		uint32_t old;
		size_t i;

		/* Make a key live. */
		if (mode == MODE_INVALIDATE) {
			key = prot_key_make(w, (uint8_t)(prot_key_variant(key) +
							 1));
			assert_int_equal(prot_mw_bind_type2(f->t, w, key, mrk,
							    va_of(f->buf), LEN,
							    PROT_ACC_REMOTE_WRITE,
							    f->pd, QPN), 0);
		} else if (mode == MODE_DEREG || r == 1) {
			assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, LEN,
						     ALL_REMOTE, &key), 0);
		}
		__atomic_store_n(&s.state, (uint64_t)key << 32 |
				 (uint64_t)r << 1, __ATOMIC_RELEASE);
		/* Let the reader use it (every few rounds: wait for a hit). */
		if ((r & 3) == 0)
			while (__atomic_load_n(&s.successes,
					       __ATOMIC_ACQUIRE) == ok_before)
				sched_yield();
		else
			wait_lookups(&s, (uint64_t)(r % 3));

		/* Revoke, racing with the reader. */
		old = key;
		if (mode == MODE_DEREG)
			assert_int_equal(prot_mr_dereg(f->t, key), 0);
		else if (mode == MODE_REREG)
			assert_int_equal(prot_mr_rereg(f->t, &key,
						       PROT_REREG_TRANSLATION |
						       PROT_REREG_ACCESS, 0,
						       f->buf, LEN, ALL_REMOTE), 0);
		else
			assert_int_equal(prot_local_invalidate(f->t, key,
							       f->pd), 0);
		__atomic_store_n(&s.state, (uint64_t)old << 32 |
				 (uint64_t)r << 1 | 1, __ATOMIC_RELEASE);
		/* No write through an old pointer may land from now on. */
		memset(f->buf, 0, LEN);
		wait_lookups(&s, 3);
		for (i = 0; i < LEN; i++)
			assert_int_equal(f->buf[i], 0);
	}
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(s.reader_err, 0);
	assert_int_equal(s.violations, 0);
	/* The race was real: the reader did succeed many times. */
	assert_true(s.successes >= (uint64_t)rounds / 4);
	if (mode == MODE_REREG)
		assert_int_equal(prot_mr_dereg(f->t, key), 0);
}

static void
test_concurrent_dereg(void **state)
{
	run_rounds(*state, MODE_DEREG, ROUNDS);
}

static void
test_concurrent_rereg(void **state)
{
	run_rounds(*state, MODE_REREG, ROUNDS);
}

static void
test_concurrent_invalidate(void **state)
{
	/* Fewer rounds: the window's 8-bit variant must not wrap around
	 * while the reader might still hold an old snapshot. */
	run_rounds(*state, MODE_INVALIDATE, 250);
}

/* ---- the grace period really waits for a busy reader ---------------------- */

struct hold {
	struct prot_tables *t;
	uint32_t key;
	int reader_in;		/* reader holds a host pointer */
	int release;		/* main lets the reader finish */
	int dereg_done;
	int ret;
	int reader_err;
};

static void *
holding_reader(void *arg)
{
	struct hold *h = arg;
	int id = prot_reader_register(h->t);
	void *host;

	if (id < 0 || prot_check_remote(h->t, h->key, 0, QPN, PROT_OP_READ,
					0, 1, &host) != PROT_OK)
		h->reader_err = 1;
	__atomic_store_n(&h->reader_in, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&h->release, __ATOMIC_ACQUIRE))
		sched_yield();
	/* Done with host: quiescent. */
	prot_reader_quiescent(h->t, id);
	while (!__atomic_load_n(&h->dereg_done, __ATOMIC_ACQUIRE))
		sched_yield();
	prot_reader_unregister(h->t, id);
	return NULL;
}

static void *
dereg_thread(void *arg)
{
	struct hold *h = arg;

	h->ret = prot_mr_dereg(h->t, h->key);
	__atomic_store_n(&h->dereg_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ms * 1000000L };

	nanosleep(&ts, NULL);
}

static void
test_revoke_waits_for_reader(void **state)
{
	struct fx *f = *state;
	struct hold h = { .t = f->t };
	pthread_t rd, wr;
	uint32_t pd0;

	/* The fixture's first PD has handle 0. */
	pd0 = f->pd;
	assert_int_equal(pd0, 0);
	assert_int_equal(prot_mr_reg(f->t, pd0, f->buf, 8,
				     PROT_ACC_REMOTE_READ |
				     PROT_ACC_ZERO_BASED, &h.key), 0);
	assert_int_equal(pthread_create(&rd, NULL, holding_reader, &h), 0);
	while (!__atomic_load_n(&h.reader_in, __ATOMIC_ACQUIRE))
		sched_yield();
	assert_int_equal(pthread_create(&wr, NULL, dereg_thread, &h), 0);
	sleep_ms(50);
	/* The key is already dead for new lookups ... */
	assert_int_equal(prot_check_remote(f->t, h.key, pd0, QPN, PROT_OP_READ,
					   0, 1, &(void *){ NULL }),
			 PROT_BAD_KEY);
	/* ... but dereg has not returned: a reader still holds a pointer. */
	assert_int_equal(__atomic_load_n(&h.dereg_done, __ATOMIC_ACQUIRE), 0);
	__atomic_store_n(&h.release, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(wr, NULL), 0);
	assert_int_equal(h.ret, 0);
	assert_int_equal(pthread_join(rd, NULL), 0);
	assert_int_equal(h.reader_err, 0);
}

/* Offline readers are not waited for; a reader calling a control
 * function does not deadlock on itself. */
static void
test_revoke_waits_for_reader_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t key;
	int id, id2;

	id = prot_reader_register(f->t);
	assert_true(id >= 0);
	/* The registered reader (this thread) deregisters: no self-wait. */
	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 8, 0, &key), 0);
	assert_int_equal(prot_mr_dereg(f->t, key), 0);
	/* It is online again afterwards. */
	assert_int_not_equal(__atomic_load_n(&f->t->readers[id].seen,
					     __ATOMIC_ACQUIRE), 0);
	prot_reader_offline(f->t, id);
	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 8, 0, &key), 0);
	assert_int_equal(prot_mr_dereg(f->t, key), 0);
	prot_reader_unregister(f->t, id);
	/* Slots run out. */
	for (id = 0; id < PROT_MAX_READERS; id++)
		assert_true(prot_reader_register(f->t) >= 0);
	id2 = prot_reader_register(f->t);
	assert_int_equal(id2, -ENOSPC);
	for (id = 0; id < PROT_MAX_READERS; id++)
		prot_reader_unregister(f->t, id);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
		T(test_concurrent_dereg),
		T(test_concurrent_rereg),
		T(test_concurrent_invalidate),
		T(test_revoke_waits_for_reader),
		T(test_revoke_waits_for_reader_bad_flow),
	};
#undef T

	return cmocka_run_group_tests_name("protection_concurrency", tests,
					   NULL, NULL);
}
