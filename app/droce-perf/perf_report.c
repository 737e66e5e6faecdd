/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_report.c - perftest's result tables (src/perftest_parameters.h:
 * RESULT_LINE, RESULT_FMT, RESULT_FMT_G, REPORT_FMT, RESULT_FMT_LAT,
 * REPORT_FMT_LAT; the same column strings, widths and tabs, so scripts
 * that parse ib_write_bw's output parse ours).  MB is 2^20 bytes, Gb is
 * 10^9 bits, MsgRate is 10^6 messages per second, as perftest computes.
 * With --output only the one number is printed; with --json a JSON object
 * follows each result line.
 */
#include <math.h>
#include <stdlib.h>

#include "perf.h"

#define RESULT_LINE "---------------------------------------------------------------------------------------\n"
#define HDR_BW_MB " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
#define HDR_BW_GB " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
#define HDR_LAT " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec] \n"

void
perf_print_bw_header(const struct perf_opts *o, FILE *out)
{
	if (o->output != PERF_OUT_FULL)
		return;
	fprintf(out, RESULT_LINE);
	fprintf(out, o->report_gbits ? HDR_BW_GB : HDR_BW_MB);
}

void
perf_print_footer(const struct perf_opts *o, FILE *out)
{
	if (o->output == PERF_OUT_FULL)
		fprintf(out, RESULT_LINE);
}

void
perf_print_bw_line(const struct perf_opts *o, const struct perf_bw_result *r,
		   FILE *out)
{
	double unit = o->report_gbits ? 125000000.0 : 1048576.0;
	double peak = r->bw_peak / unit, avg = r->bw_avg / unit;
	double mpps = r->msg_rate / 1e6;

	if (o->output == PERF_OUT_BW)
		fprintf(out, "%lf\n", avg);
	else if (o->output == PERF_OUT_MR)
		fprintf(out, "%lf\n", mpps);
	else
		fprintf(out, " %-7lu    %-10lu       %-7.2lf            %-7.2lf"
			"\t\t   %-7.6lf\n", (unsigned long)r->size,
			(unsigned long)r->iters, peak, avg, mpps);
	if (o->json)
		fprintf(out, "{\"test\":\"%s\",\"bytes\":%lu,\"iterations\":%lu,"
			"\"bw_peak\":%.2f,\"bw_average\":%.2f,\"msg_rate\":%.6f,"
			"\"unit\":\"%s\"}\n", o->test, (unsigned long)r->size,
			(unsigned long)r->iters, peak, avg, mpps,
			o->report_gbits ? "Gb/sec" : "MB/sec");
}

void
perf_print_lat_header(const struct perf_opts *o, FILE *out)
{
	if (o->output != PERF_OUT_FULL)
		return;
	fprintf(out, RESULT_LINE);
	fprintf(out, HDR_LAT);
}

void
perf_print_lat_line(const struct perf_opts *o,
		    const struct perf_lat_result *r, FILE *out)
{
	if (o->output == PERF_OUT_LAT)
		fprintf(out, "%lf\n", r->t_avg);
	else if (o->output == PERF_OUT_FULL)
		fprintf(out, " %-7lu %d          %-7.2f        %-7.2f      "
			"%-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t"
			"%-7.2f\n", (unsigned long)r->size, (int)r->iters,
			r->t_min, r->t_max, r->t_typical, r->t_avg, r->t_stdev,
			r->p99, r->p999);
	if (o->json)
		fprintf(out, "{\"test\":\"%s\",\"bytes\":%lu,\"iterations\":%lu,"
			"\"t_min\":%.2f,\"t_max\":%.2f,\"t_typical\":%.2f,"
			"\"t_avg\":%.2f,\"t_stdev\":%.2f,\"p99\":%.2f,"
			"\"p99_9\":%.2f,\"unit\":\"usec\"}\n", o->test,
			(unsigned long)r->size, (unsigned long)r->iters,
			r->t_min, r->t_max, r->t_typical, r->t_avg, r->t_stdev,
			r->p99, r->p999);
}

void
perf_print_lat_samples(const uint64_t *ns, size_t n, unsigned int div, FILE *out)
{
	fprintf(out, "#, usec\n");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%zu, %.3f\n", i + 1, (double)ns[i] / (1000.0 * div));
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void
perf_lat_stats(uint64_t *ns, size_t n, unsigned int div,
	       struct perf_lat_result *r)
{
	double f = 1000.0 * div;	/* ns -> usec, half round trips */
	double sum = 0, sq = 0, avg;
	size_t i;

	qsort(ns, n, sizeof(*ns), cmp_u64);
	for (i = 0; i < n; i++)
		sum += (double)ns[i] / f;
	avg = sum / (double)n;
	for (i = 0; i < n; i++) {
		double d = (double)ns[i] / f - avg;

		sq += d * d;
	}
	r->t_min = (double)ns[0] / f;
	r->t_max = (double)ns[n - 1] / f;
	r->t_typical = (double)ns[n / 2] / f;
	r->t_avg = avg;
	r->t_stdev = sqrt(sq / (double)n);
	r->p99 = (double)ns[(size_t)((double)n * 0.99) < n ?
			    (size_t)((double)n * 0.99) : n - 1] / f;
	r->p999 = (double)ns[(size_t)((double)n * 0.999) < n ?
			     (size_t)((double)n * 0.999) : n - 1] / f;
}
