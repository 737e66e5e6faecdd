/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The congestion-control parameter table (tp_cc_params.h): defaults,
 * names, bounds.  Pure C.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "tp_cc_params.h"

static const struct {
	const char *name;
	size_t off;
	uint32_t def, lo, hi;
} params[TP_CC_PARAM_MAX] = {
#define TP_CC_PARAM_ROW(n, d, l, h, s) \
	[TP_CC_PARAM_##n] = { #n, offsetof(struct tp_cc_params, n), d, l, h },
	TP_CC_PARAM_LIST(TP_CC_PARAM_ROW)
#undef TP_CC_PARAM_ROW
};

static uint32_t *
field(struct tp_cc_params *p, unsigned int i)
{
	return (uint32_t *)((char *)p + params[i].off);
}

void
tp_cc_params_default(struct tp_cc_params *p)
{
	for (unsigned int i = 0; i < TP_CC_PARAM_MAX; i++)
		*field(p, i) = params[i].def;
}

const char *
tp_cc_param_name(unsigned int i)
{
	return i < TP_CC_PARAM_MAX ? params[i].name : NULL;
}

uint32_t
tp_cc_param_get(const struct tp_cc_params *p, unsigned int i)
{
	return *(const uint32_t *)((const char *)p + params[i].off);
}

int
tp_cc_param_set(struct tp_cc_params *p, const char *name, uint64_t value)
{
	for (unsigned int i = 0; i < TP_CC_PARAM_MAX; i++) {
		if (strcmp(name, params[i].name) != 0)
			continue;
		if (value < params[i].lo || value > params[i].hi)
			return -ERANGE;
		*field(p, i) = (uint32_t)value;
		return 0;
	}
	return -ENOENT;
}
