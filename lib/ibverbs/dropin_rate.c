/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dropin_rate.c - the static rate conversions of verbs.h (ibv_rate_to_mult,
 * mult_to_ibv_rate, ibv_rate_to_mbps, mbps_to_ibv_rate), from one table.
 *
 * A rate's multiple is of the 2.5 Gb/s base (SDR 1X); the rates of the
 * 64b/66b encodings (FDR, EDR, HDR...) are none (-1 to ibv_rate_to_mult,
 * and no multiple converts to them).  Mb/s are the data rates of the
 * ibv_rate_to_mbps(3) man page (14062 for FDR 1X, 25781 for EDR 1X...).
 * An unknown rate is -1; an unknown multiple or Mb/s is IBV_RATE_MAX.
 */
#include <stddef.h>

#include "dropin_private.h"

struct dropin_rate {
	enum ibv_rate rate;
	int mult;		/* of 2.5 Gb/s; -1: not a multiple */
	int mbps;
};

static const struct dropin_rate dropin_rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500 },
	{ IBV_RATE_5_GBPS, 2, 5000 },
	{ IBV_RATE_10_GBPS, 4, 10000 },
	{ IBV_RATE_20_GBPS, 8, 20000 },
	{ IBV_RATE_30_GBPS, 12, 30000 },
	{ IBV_RATE_40_GBPS, 16, 40000 },
	{ IBV_RATE_60_GBPS, 24, 60000 },
	{ IBV_RATE_80_GBPS, 32, 80000 },
	{ IBV_RATE_120_GBPS, 48, 120000 },
	{ IBV_RATE_14_GBPS, -1, 14062 },
	{ IBV_RATE_56_GBPS, -1, 56250 },
	{ IBV_RATE_112_GBPS, -1, 112500 },
	{ IBV_RATE_168_GBPS, -1, 168750 },
	{ IBV_RATE_25_GBPS, -1, 25781 },
	{ IBV_RATE_100_GBPS, -1, 103125 },
	{ IBV_RATE_200_GBPS, -1, 206250 },
	{ IBV_RATE_300_GBPS, -1, 309375 },
	{ IBV_RATE_28_GBPS, 11, 28125 },
	{ IBV_RATE_50_GBPS, 20, 53125 },
	{ IBV_RATE_400_GBPS, 160, 425000 },
	{ IBV_RATE_600_GBPS, 240, 637500 },
	{ IBV_RATE_800_GBPS, 320, 850000 },
	{ IBV_RATE_1200_GBPS, 480, 1275000 },
};

#define DROPIN_NRATES (sizeof(dropin_rates) / sizeof(dropin_rates[0]))

static const struct dropin_rate *
dropin_rate_of(enum ibv_rate rate)
{
	for (size_t i = 0; i < DROPIN_NRATES; i++)
		if (dropin_rates[i].rate == rate)
			return &dropin_rates[i];
	return NULL;
}

int
ibv_rate_to_mult(enum ibv_rate rate)
{
	const struct dropin_rate *r = dropin_rate_of(rate);

	return r != NULL ? r->mult : -1;
}

enum ibv_rate
mult_to_ibv_rate(int mult)
{
	for (size_t i = 0; i < DROPIN_NRATES; i++)
		if (mult > 0 && dropin_rates[i].mult == mult)
			return dropin_rates[i].rate;
	return IBV_RATE_MAX;
}

int
ibv_rate_to_mbps(enum ibv_rate rate)
{
	const struct dropin_rate *r = dropin_rate_of(rate);

	return r != NULL ? r->mbps : -1;
}

enum ibv_rate
mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < DROPIN_NRATES; i++)
		if (dropin_rates[i].mbps == mbps)
			return dropin_rates[i].rate;
	return IBV_RATE_MAX;
}
