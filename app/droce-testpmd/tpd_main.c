/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-testpmd [EAL options] -- [--droce-* options] [--cmdfile FILE]
 *               [--stop-on-error] [--no-echo]
 *
 * Opens every droce device, then reads commands: at the prompt (stdin a
 * terminal; rte_cmdline polled without blocking, so the devices and the
 * engines keep running between keystrokes), or from a script (--cmdfile,
 * or stdin when it is not a terminal).  In a script every command must
 * succeed unless the line before it says "expect error"; the exit status
 * is 1 when any command did not do what the script expected.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmdline.h>
#include <cmdline_rdline.h>
#include <cmdline_socket.h>

#include "app_dev.h"
#include "tpd.h"

#define PORT_WAIT_MS 10000

struct tpd_state tpd = { .exch_fd = -1 };

void *tpd_cmdline_ctx(void);

struct opts {
	const char *cmdfile;
	bool stop_on_error;
	bool echo;
};

static void
usage(const char *argv0, FILE *f)
{
	fprintf(f, "Usage: %s [EAL options] -- [--droce-* options] [options]\n"
		"  --cmdfile FILE    run the commands in FILE (\"-\": stdin), then exit\n"
		"  --stop-on-error   stop a script at the first unexpected result\n"
		"  --no-echo         do not print each script line before running it\n"
		"  --help            this text\n"
		"Without --cmdfile: an interactive prompt (stdin a terminal) or a script\n"
		"on stdin.  In a script, every command must succeed unless the line before\n"
		"it is \"expect error\"; the exit status is 1 if any did not.\n"
		"Commands: run with no script and type help.\n", argv0);
}

static int
parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "cmdfile", required_argument, NULL, 'f' },
		{ "stop-on-error", no_argument, NULL, 's' },
		{ "no-echo", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	o->echo = true;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'f': o->cmdfile = optarg; break;
		case 's': o->stop_on_error = true; break;
		case 'n': o->echo = false; break;
		case 'h': usage(argv[0], stdout); return 1;
		default: usage(argv[0], stderr); return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
		return -1;
	}
	return 0;
}

static int
open_devices(void)
{
	struct droce_device **list = droce_get_device_list(NULL);
	uint64_t end;

	if (list == NULL) {
		perror("droce_get_device_list");
		return -1;
	}
	for (int i = 0; list[i] != NULL && tpd.ndev < TPD_MAX_DEV; i++) {
		struct tpd_dev *d = &tpd.dev[tpd.ndev++];

		d->device = list[i];
		d->ctx = droce_open_device(list[i]);
		if (d->ctx == NULL)
			fprintf(stderr, "cannot open %s: %s\n",
				droce_get_device_name(list[i]), strerror(errno));
	}
	/* the list's devices stay valid until droce_cleanup: keep the pointers */
	droce_free_device_list(list);
	end = tpd_now_ns() + (uint64_t)PORT_WAIT_MS * 1000000u;
	for (int i = 0; i < tpd.ndev; i++) {
		struct droce_port_attr pa;

		while (tpd.dev[i].ctx != NULL) {
			memset(&pa, 0, sizeof(pa));
			if (droce_query_port(tpd.dev[i].ctx, 1, &pa) != 0 ||
			    pa.state == DROCE_PORT_ACTIVE || tpd_now_ns() > end)
				break;
			tpd_progress_all();
			usleep(1000);
		}
		if (tpd.dev[i].ctx != NULL) {
			tpd.dev[i].active_mtu = pa.active_mtu;
			if (pa.state != DROCE_PORT_ACTIVE)
				fprintf(stderr, "warning: dev %d port is not ACTIVE\n", i);
		}
	}
	if (tpd.ndev == 0)
		fprintf(stderr, "no droce devices (give EAL a port, e.g. "
			"--vdev=net_af_packet0,iface=IF)\n");
	return 0;
}

void
tpd_destroy_all(void)
{
	tpd_engines_stop_all();
	for (int i = 0; i < TPD_MAX_OBJ; i++)
		if (tpd.qp[i] != NULL) {
			droce_destroy_qp(tpd.qp[i]->qp);
			if (tpd.qp[i]->ah != NULL)
				droce_destroy_ah(tpd.qp[i]->ah);
			free(tpd.qp[i]);
			tpd.qp[i] = NULL;
		}
	for (int i = 0; i < TPD_MAX_OBJ; i++) {
		if (tpd.mw[i] != NULL)
			droce_dealloc_mw(tpd.mw[i]->mw);
		free(tpd.mw[i]);
		tpd.mw[i] = NULL;
	}
	for (int i = 0; i < TPD_MAX_OBJ; i++)
		if (tpd.mr[i] != NULL) {
			droce_dereg_mr(tpd.mr[i]->mr);
			free(tpd.mr[i]->buf);
			free(tpd.mr[i]);
			tpd.mr[i] = NULL;
		}
	for (int i = 0; i < TPD_MAX_OBJ; i++) {
		if (tpd.cq[i] != NULL)
			droce_destroy_cq(tpd.cq[i]->cq);
		if (tpd.pd[i] != NULL)
			droce_dealloc_pd(tpd.pd[i]->pd);
		free(tpd.cq[i]);
		free(tpd.pd[i]);
		tpd.cq[i] = NULL;
		tpd.pd[i] = NULL;
	}
	for (int i = 0; i < tpd.ndev; i++)
		if (tpd.dev[i].ctx != NULL)
			droce_close_device(tpd.dev[i].ctx);
	tpd.ndev = 0;
	if (tpd.exch_fd >= 0)
		close(tpd.exch_fd);
	tpd.exch_fd = -1;
}

/* "expect ok" / "expect error": 1 / 0 into *want; -1 if not such a line. */
static int
expect_line(const char *line, int *want)
{
	char w1[16], w2[16], extra[2];
	int n = sscanf(line, " %15s %15s %1s", w1, w2, extra);

	if (n < 1 || strcmp(w1, "expect") != 0)
		return -1;
	if (n == 2 && strcmp(w2, "ok") == 0)
		*want = 1;
	else if (n == 2 && strcmp(w2, "error") == 0)
		*want = 0;
	else
		*want = -1;
	return 0;
}

static int
run_script(const struct opts *o)
{
	FILE *f = strcmp(o->cmdfile, "-") == 0 ? stdin : fopen(o->cmdfile, "r");
	unsigned int lineno = 0, ncmd = 0, nbad = 0;
	int want = 1;
	char *line = NULL;
	size_t cap = 0;

	if (f == NULL) {
		fprintf(stderr, "cannot open %s: %s\n", o->cmdfile, strerror(errno));
		return 1;
	}
	while (!tpd.quit && getline(&line, &cap, f) >= 0) {
		struct tpd_cmd probe;
		int w, rc;

		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		if (expect_line(line, &w) == 0) {
			if (w < 0) {
				printf("%s:%u: error: expect ok | expect error\n", o->cmdfile, lineno);
				nbad++;
			}
			want = w < 0 ? 1 : w;
			continue;
		}
		if (tpd_tokenize(&probe, line) == 0 && probe.npos + probe.nkv == 0)
			continue;	/* blank or comment */
		if (o->echo)
			printf("droce-testpmd> %s\n", line);
		fflush(stdout);
		rc = tpd_run_line(line);
		ncmd++;
		if ((rc == 0) != (want == 1)) {
			nbad++;
			printf("%s:%u: UNEXPECTED: the command %s (expected %s)\n", o->cmdfile,
			       lineno, rc == 0 ? "succeeded" : "failed", want ? "ok" : "error");
			if (o->stop_on_error)
				break;
		}
		want = 1;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	printf("cmdfile %s: %u commands, %u unexpected results\n", o->cmdfile, ncmd, nbad);
	return nbad == 0 ? 0 : 1;
}

static int
run_interactive(void)
{
	struct cmdline *cl;
	void *ctx = tpd_cmdline_ctx();

	if (ctx == NULL) {
		fprintf(stderr, "cannot build the command table\n");
		return 1;
	}
	printf("droce-testpmd: %d device(s); help lists the commands\n", tpd.ndev);
	fflush(stdout);
	cl = cmdline_stdin_new(ctx, "droce-testpmd> ");
	if (cl == NULL) {
		fprintf(stderr, "cannot start the prompt\n");
		return 1;
	}
	tpd.cl = cl;
	/* cmdline_poll never blocks: between keystrokes the devices and the
	 * engines run, so the stack keeps answering its peers at the prompt */
	while (!tpd.quit) {
		int st = cmdline_poll(cl);

		if (st < 0 || st == RDLINE_EXITED)
			break;
		tpd_progress_all();
		if (!tpd_engines_step())
			usleep(200);
	}
	cmdline_stdin_exit(cl);
	tpd.cl = NULL;
	printf("\n");
	return 0;
}

int
main(int argc, char **argv)
{
	struct opts o;
	char **pargv;
	int pargc = 0, consumed, rc, ret = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&o, 0, sizeof(o));
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(argv[0], stdout);
			return 0;
		}
	consumed = droce_init(argc, argv);
	if (consumed < 0) {
		fprintf(stderr, "%s: droce_init failed: %s (check the EAL arguments "
			"before \"--\" and the --droce-* options)\n", argv[0], strerror(errno));
		return 1;
	}
	pargv = app_program_args(argc, argv, consumed, argv[0], &pargc);
	if (pargv == NULL)
		goto out_cleanup;
	rc = parse_opts(pargc, pargv, &o);
	if (rc != 0) {
		ret = rc > 0 ? 0 : 1;
		goto out_args;
	}
	srand48((long)getpid() * (long)time(NULL));
	if (open_devices() != 0)
		goto out_args;
	if (o.cmdfile == NULL && !isatty(STDIN_FILENO))
		o.cmdfile = "-";
	tpd.interactive = o.cmdfile == NULL;
	ret = tpd.interactive ? run_interactive() : run_script(&o);
	tpd_destroy_all();
out_args:
	free(pargv);
out_cleanup:
	droce_cleanup();
	return ret;
}
