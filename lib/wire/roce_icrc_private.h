/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_ICRC_PRIVATE_H
#define ROCE_ICRC_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

extern const uint32_t roce_crc32_table[256];

/* Always built, so tests can cross-check it against ISA-L. */
uint32_t roce_crc32_portable(uint32_t crc, const void *buf, size_t len);

#endif /* ROCE_ICRC_PRIVATE_H */
