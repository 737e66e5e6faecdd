/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the libFuzzer harnesses: a check that aborts with a message. */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: invariant failed: %s\n",	\
			__FILE__, __LINE__, #cond);			\
		abort();						\
	}								\
} while (0)

#endif /* FUZZ_CHECK_H */
