/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prot_check.c - tables behind the inline checks: per-operation rights and
 * the status names generated from PROT_STATUS_LIST.
 */
#include <stddef.h>

#include "prot.h"

/*
 * Right and alignment per remote operation (IBTA 10.6.7.3 and 9.4.5;
 * FLUSH and ATOMIC WRITE from the 1.5 memory-placement extensions, as
 * rxe: ATOMIC WRITE needs REMOTE_WRITE).
 */
const struct prot_op_rule prot_op_rules[PROT_OP_MAX] = {
	[PROT_OP_WRITE] = { PROT_ACC_REMOTE_WRITE, 0 },
	[PROT_OP_READ] = { PROT_ACC_REMOTE_READ, 0 },
	[PROT_OP_ATOMIC] = { PROT_ACC_REMOTE_ATOMIC, 7 },
	[PROT_OP_ATOMIC_WRITE] = { PROT_ACC_REMOTE_WRITE, 7 },
	[PROT_OP_FLUSH_GLOBAL] = { PROT_ACC_FLUSH_GLOBAL, 0 },
	[PROT_OP_FLUSH_PERSISTENT] = { PROT_ACC_FLUSH_PERSISTENT, 0 },
};

static const char *const status_str[PROT_STATUS_MAX] = {
#define PROT_STATUS_STR(name, str) [PROT_##name] = str,
	PROT_STATUS_LIST(PROT_STATUS_STR)
#undef PROT_STATUS_STR
};

static const char *const status_name[PROT_STATUS_MAX] = {
#define PROT_STATUS_NAME(name, str) [PROT_##name] = #name,
	PROT_STATUS_LIST(PROT_STATUS_NAME)
#undef PROT_STATUS_NAME
};

const char *
prot_status_str(enum prot_status st)
{
	if ((unsigned int)st >= PROT_STATUS_MAX)
		return "?";
	return status_str[st];
}

const char *
prot_status_name(enum prot_status st)
{
	if ((unsigned int)st >= PROT_STATUS_MAX)
		return "?";
	return status_name[st];
}
