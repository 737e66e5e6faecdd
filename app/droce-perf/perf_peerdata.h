/* SPDX-License-Identifier: BSD-3-Clause */
/* perf_peerdata.h - a perftest peer's bytes (perf_peerdata.c; no device). */
#ifndef DROCE_PERF_PEERDATA_H
#define DROCE_PERF_PEERDATA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * p[0..len) must be a window of a perftest peer's buffer of span bytes
 * (its rand() fill).  0, with what was found in found ("all N bytes equal
 * perftest's buffer (...)"); 1 after a report on stderr naming what; 2 if
 * len is below 8 bytes, too few to tell a match from chance (why in found).
 */
int perf_perftest_bytes(const uint8_t *p, uint32_t len, size_t span,
			const char *what, char *found, size_t found_len);

#endif /* DROCE_PERF_PEERDATA_H */
