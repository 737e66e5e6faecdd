/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tpd_cmdline.c - the command groups, one dispatcher for every line
 * (interactive or script), help, and the rte_cmdline context.
 *
 * rte_cmdline sees each group as two instructions: the group's word alone,
 * and the word followed by a multi-word string token (the rest of the
 * line).  Both hand the line to tpd_run_line(), which parses the rest with
 * the group's own table, so a script and the prompt behave the same.  The
 * prompt gets rdline's editing, history and completion of group words.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmdline.h>
#include <cmdline_parse.h>
#include <cmdline_parse_string.h>

#include "tpd.h"

const struct tpd_group *const tpd_groups[] = {
	&tpd_group_device, &tpd_group_pd, &tpd_group_mr, &tpd_group_mw,
	&tpd_group_cq, &tpd_group_qp, &tpd_group_post, &tpd_group_poll,
	&tpd_group_show, &tpd_group_engine, &tpd_group_misc, NULL,
};

static void
print_cmd(const struct tpd_subcmd *s)
{
	printf("  %s\n      %s\n", s->usage, s->help);
}

int
tpd_help(const char *group)
{
	bool found = false;

	for (int g = 0; tpd_groups[g] != NULL; g++) {
		const struct tpd_group *gr = tpd_groups[g];

		if (group != NULL && strcmp(group, gr->name) != 0) {
			bool in_misc = false;

			for (int k = 0; gr->name[0] == '\0' && gr->cmds[k].name; k++)
				in_misc |= strcmp(group, gr->cmds[k].name) == 0;
			if (!in_misc)
				continue;
		}
		found = true;
		if (group == NULL) {
			printf("%-8s %s\n", gr->name[0] ? gr->name : "(other)", gr->summary);
			continue;
		}
		printf("%s: %s\n", gr->name[0] ? gr->name : "general", gr->summary);
		for (int k = 0; gr->cmds[k].name != NULL; k++)
			print_cmd(&gr->cmds[k]);
	}
	if (group == NULL) {
		printf("help GROUP for a group's commands (help pd, help post, ...); "
		       "handles are the numbers the create commands print;\n"
		       "numbers are decimal or 0x hex; options are key=value.\n");
		for (int k = 0; tpd_group_misc.cmds[k].name != NULL; k++)
			print_cmd(&tpd_group_misc.cmds[k]);
	} else if (!found) {
		tpd_err("no help for '%s' (help lists the groups)", group);
		return -1;
	}
	return 0;
}

static int
run_group(const struct tpd_group *g, struct tpd_cmd *c)
{
	if (g->cmds[0].name[0] == '\0')
		return g->cmds[0].fn(c);	/* the group is one command */
	if (c->npos >= 2)
		for (int k = 0; g->cmds[k].name != NULL; k++)
			if (strcmp(c->pos[1], g->cmds[k].name) == 0) {
				/* the command sees its own name as pos[0] */
				memmove(&c->pos[0], &c->pos[1], (size_t)(c->npos - 1) * sizeof(c->pos[0]));
				c->npos--;
				return g->cmds[k].fn(c);
			}
	printf("error: %s %s: unknown command; %s commands:\n", g->name,
	       c->npos >= 2 ? c->pos[1] : "(nothing)", g->name);
	for (int k = 0; g->cmds[k].name != NULL; k++)
		print_cmd(&g->cmds[k]);
	fflush(stdout);
	return -1;
}

int
tpd_run_line(const char *line)
{
	struct tpd_cmd *c = malloc(sizeof(*c));
	int rc = -1;

	if (c == NULL) {
		tpd_err("out of memory");
		return -1;
	}
	if (tpd_tokenize(c, line) != 0)
		goto out;
	rc = 0;
	if (c->npos == 0 && c->nkv == 0)
		goto out;		/* blank or comment */
	rc = -1;
	if (c->npos == 0) {
		tpd_err("a line starts with a command, not an option");
		goto out;
	}
	for (int g = 0; tpd_groups[g] != NULL; g++) {
		const struct tpd_group *gr = tpd_groups[g];

		if (gr->name[0] != '\0' && strcmp(gr->name, c->pos[0]) == 0) {
			rc = run_group(gr, c);
			goto out;
		}
		for (int k = 0; gr->name[0] == '\0' && gr->cmds[k].name != NULL; k++)
			if (strcmp(gr->cmds[k].name, c->pos[0]) == 0 && gr->cmds[k].fn) {
				rc = gr->cmds[k].fn(c);
				goto out;
			}
	}
	tpd_err("unknown command '%s' (help lists the commands)", c->pos[0]);
out:
	fflush(stdout);
	free(c);
	return rc;
}

/* ---- rte_cmdline --------------------------------------------------------- */

struct line_result {
	cmdline_fixed_string_t word;
	cmdline_multi_string_t rest;	/* unset in the word-only instruction */
};

static void
on_line(void *parsed, struct cmdline *cl, void *data)
{
	struct line_result *r = parsed;
	char *line;
	size_t n;

	/* data is non-NULL for the instruction that has the REST token */
	if (data == NULL)
		r->rest[0] = '\0';
	n = strlen(r->word) + strnlen(r->rest, sizeof(r->rest) - 1) + 2;
	line = malloc(n);
	if (line == NULL)
		return;
	snprintf(line, n, "%s %s", r->word, r->rest);
	tpd.in_command = true;
	tpd_run_line(line);
	tpd.in_command = false;
	free(line);
	if (tpd.quit)
		cmdline_quit(cl);
}

static cmdline_parse_ctx_t *cmdline_ctx;

static cmdline_parse_token_hdr_t *
make_token(size_t offset, const char *str)
{
	cmdline_parse_token_string_t *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->hdr.ops = &cmdline_token_string_ops;
	t->hdr.offset = (unsigned int)offset;
	t->string_data.str = str;
	return &t->hdr;
}

/* One instruction: WORD, or WORD REST... (REST: parsed by the group's table). */
static cmdline_parse_inst_t *
make_inst(const char *word, const char *help, bool with_rest)
{
	cmdline_parse_inst_t *in = calloc(1, sizeof(*in) + 3 * sizeof(void *));

	if (in == NULL)
		return NULL;
	in->f = on_line;
	in->data = with_rest ? in : NULL;
	in->help_str = help;
	in->tokens[0] = make_token(offsetof(struct line_result, word), word);
	if (with_rest)
		in->tokens[1] = make_token(offsetof(struct line_result, rest),
					   TOKEN_STRING_MULTI);
	if (in->tokens[0] == NULL || (with_rest && in->tokens[1] == NULL))
		return NULL;
	return in;
}

/*
 * The rte_cmdline context: for every group word (and every general
 * command), [word] and [word rest...] (a multi-string token never matches
 * nothing, so the word alone is an instruction of its own).  Subcommands
 * are not tokens: rte_cmdline would answer a wrong one with a bare "Bad
 * arguments", the group's table says what is wrong and lists the commands.
 */
void *
tpd_cmdline_ctx(void)
{
	int n = 0, k = 0;

	if (cmdline_ctx != NULL)
		return cmdline_ctx;
	for (int g = 0; tpd_groups[g] != NULL; g++)
		for (int j = 0; tpd_groups[g]->cmds[j].name != NULL; j++)
			n++;
	cmdline_ctx = calloc((size_t)(2 * n + 1), sizeof(*cmdline_ctx));
	if (cmdline_ctx == NULL)
		return NULL;
	for (int g = 0; tpd_groups[g] != NULL; g++) {
		const struct tpd_group *gr = tpd_groups[g];

		for (int j = 0; gr->cmds[j].name != NULL; j++) {
			const struct tpd_subcmd *c = &gr->cmds[j];
			const char *word = gr->name[0] ? gr->name : c->name;
			const char *help = gr->name[0] ? gr->summary : c->usage;

			if (c->fn == NULL || (gr->name[0] && j > 0))
				continue;	/* script-only (expect); one per group */
			cmdline_ctx[k++] = make_inst(word, help, false);
			cmdline_ctx[k++] = make_inst(word, help, true);
			if (cmdline_ctx[k - 1] == NULL || cmdline_ctx[k - 2] == NULL)
				return NULL;
		}
	}
	return cmdline_ctx;
}
