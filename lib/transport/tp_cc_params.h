/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion-control parameters, defined once: the DCQCN reaction point's
 * (rp_*) and the notification point's (np_*), under the names and with
 * the defaults mlx5 exposes (the firmware's congestion parameters, as in
 * mlx5's debugfs cc_params and mlxconfig), plus rp_max_rate.  The table
 * generates struct tp_cc_params, the INI keys (lib/device) and telemetry's
 * names.  Pure C.
 * X(name, default, min, max, description)
 */
#ifndef TP_CC_PARAMS_H
#define TP_CC_PARAMS_H

#include <stdint.h>

#define TP_CC_PARAM_LIST(X)						\
	X(rp_time_reset, 300, 1, 10000000,					\
	  "us: rate-increase timer period (DCQCN T)")			\
	X(rp_byte_reset, 32767, 1, 1u << 30,				\
	  "bytes: rate-increase byte counter period (DCQCN B)")		\
	X(rp_threshold, 1, 1, 31,						\
	  "timer or byte events after a cut before additive increase (DCQCN F)") \
	X(rp_ai_rate, 5, 1, 400000, "Mb/s: additive increase step")		\
	X(rp_hai_rate, 50, 1, 400000, "Mb/s: hyper increase step")		\
	X(rp_gd, 11, 1, 20,							\
	  "a cut is Rc * alpha / 2^rp_gd (alpha in 1/1024: 11 is the paper's alpha/2)") \
	X(rp_min_dec_fac, 50, 1, 100, "%: the largest single cut of the rate") \
	X(rp_min_rate, 1, 1, 400000, "Mb/s: the rate is never cut below this") \
	X(rp_max_rate, 0, 0, 400000, "Mb/s: the line rate a QP starts at (0: 100000)") \
	X(rp_rate_to_set_on_first_cnp, 0, 0, 400000,			\
	  "Mb/s: the rate after a QP's first CNP (0: cut as any other)")	\
	X(rp_initial_alpha_value, 1023, 0, 1023, "alpha at start, in 1/1024") \
	X(rp_dce_tcp_g, 1019, 0, 1023,					\
	  "alpha := (alpha * g + cnp * 1023 * (1024 - g)) / 1024 each period") \
	X(rp_dce_tcp_rtt, 1, 1, 10000000, "us: the alpha update period")	\
	X(rp_rate_reduce_monitor_period, 4, 0, 10000000,			\
	  "us: at most one cut per period; CNPs within it only feed alpha") \
	X(np_min_time_between_cnps, 4, 0, 10000000,			\
	  "us: at most one CNP sent per QP per period")			\
	X(np_cnp_dscp, 48, 0, 63, "IP DSCP of the CNPs sent")			\
	X(np_cnp_prio, 6, 0, 7, "802.1p priority of the CNPs sent (VLAN-tagged ports only)") \
	X(sr_bdp_bytes, 0, 0, 1u << 30,					\
	  "bytes: selective repeat's cap on the data in flight, IRN's BDP-FC (0: the window, 256 packets)")

struct tp_cc_params {
#define TP_CC_PARAM_FIELD(n, d, lo, hi, s) uint32_t n;
	TP_CC_PARAM_LIST(TP_CC_PARAM_FIELD)
#undef TP_CC_PARAM_FIELD
};

enum tp_cc_param_id {
#define TP_CC_PARAM_ENUM(n, d, lo, hi, s) TP_CC_PARAM_##n,
	TP_CC_PARAM_LIST(TP_CC_PARAM_ENUM)
#undef TP_CC_PARAM_ENUM
	TP_CC_PARAM_MAX
};

/* Every parameter at its default. */
void tp_cc_params_default(struct tp_cc_params *p);
/* The name of parameter i (< TP_CC_PARAM_MAX). */
const char *tp_cc_param_name(unsigned int i);
uint32_t tp_cc_param_get(const struct tp_cc_params *p, unsigned int i);
/* Set by name: 0, -ENOENT (no such parameter) or -ERANGE. */
int tp_cc_param_set(struct tp_cc_params *p, const char *name, uint64_t value);

#endif /* TP_CC_PARAMS_H */
