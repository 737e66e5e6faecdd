/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prot_test.h - shared fixture for the lib/protection unit tests.
 */
#ifndef DROCE_PROT_TEST_H
#define DROCE_PROT_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "prot.h"

#define TEST_SEED UINT64_C(0x5eed0003)

struct fx {
	struct prot_tables *t;
	uint32_t pd;		/* PD of "the QP" */
	uint32_t pd2;		/* another PD */
	uint8_t buf[4096];	/* registered memory */
	uint8_t other[256];	/* never registered */
};

static inline int
fx_setup_cfg(void **state, uint32_t max_mr, uint32_t max_mw)
{
	struct prot_config cfg = {
		.max_pd = 16, .max_mr = max_mr, .max_mw = max_mw,
		.socket_id = -1, .seed = TEST_SEED,
	};
	struct fx *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	if (prot_tables_create(&cfg, NULL, &f->t) != 0 ||
	    prot_pd_alloc(f->t, &f->pd) != 0 ||
	    prot_pd_alloc(f->t, &f->pd2) != 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static inline int
fx_setup(void **state)
{
	return fx_setup_cfg(state, 64, 64);
}

/* Teardown does not check for leaks of keys: tests own that. */
static inline int
fx_teardown(void **state)
{
	struct fx *f = *state;
	uint32_t i;

	/* Force-release everything so destroy succeeds. */
	for (i = 1; i < f->t->nentries; i++) {
		uint32_t key;

		if (prot_entry_key(f->t, i, &key) != 0)
			continue;
		if (f->t->entries[i].type != PROT_OBJ_MR)
			(void)prot_mw_dealloc(f->t, i);
	}
	for (i = 1; i < f->t->nentries; i++) {
		uint32_t key;

		if (prot_entry_key(f->t, i, &key) == 0)
			(void)prot_mr_dereg(f->t, key);
	}
	for (i = 0; i < 16; i++)
		(void)prot_pd_dealloc(f->t, i);
	assert_int_equal(prot_tables_destroy(f->t), 0);
	free(f);
	return 0;
}

static inline uint64_t
va_of(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

#define ALL_REMOTE (PROT_ACC_LOCAL_WRITE | PROT_ACC_REMOTE_WRITE | \
	PROT_ACC_REMOTE_READ | PROT_ACC_REMOTE_ATOMIC)

#endif /* DROCE_PROT_TEST_H */
