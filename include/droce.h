/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce.h - the verbs-like public API of droce, a userspace RoCEv2 stack.
 *
 * The API is libibverbs' with the prefix changed (ibv_ -> droce_,
 * IBV_ -> DROCE_): the same argument order, struct field names, enum values
 * and return conventions, so porting an ibverbs program is a rename.
 * Anything droce adds is marked "droce extension" where it is declared.
 *
 * Return conventions (as rdma-core documents them):
 *  - creators return a pointer, or NULL with errno set;
 *  - other calls return 0 on success or a positive errno value
 *    (ibv_dereg_mr, ibv_dealloc_pd, ibv_modify_qp, ...);
 *  - post calls return 0 or a positive errno and set *bad_wr.
 */
#ifndef DROCE_H
#define DROCE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DROCE_VERSION_MAJOR 0
#define DROCE_VERSION_MINOR 1

/* A device context (ibv_context).  Opaque: fields are private to lib/verbs. */
struct droce_context;

/* ---- Protection domains, memory regions, memory windows ------------------ */
/* (section owned by lib/protection + lib/verbs; see docs in those folders) */

#ifdef __cplusplus
}
#endif

#endif /* DROCE_H */
