/*
 * The documents the option table gives (cli.h): the man page's SYNOPSIS and
 * OPTIONS in mdoc(7), and the bash completion script.
 */
#include <ctype.h>
#include <string.h>

#include "cli.h"

/* S with every '-' as mdoc's "\-" (a minus sign, not a hyphen) */
static void
put_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '-') {
			fputc('\\', out);
		}
		fputc(*s, out);
	}
}

static void
put_lower(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		fputc(tolower((unsigned char)s[i]), out);
	}
}

/* "Fl c Ar file", "Fl \-record\-max\-mb Ar n": SHORT_FIRST takes the short name when there is one */
static void
put_flag(FILE *out, const struct cli_option *o, bool short_first)
{
	if (short_first && o->short_name) {
		fprintf(out, "Fl %c", o->short_name);
	} else {
		fputs("Fl \\-", out);
		put_escaped(out, o->long_name);
	}
	if (o->arg) {
		fputs(" Ar ", out);
		put_lower(out, o->arg_name, strlen(o->arg_name));
	}
}

/* the operands "[FILE]", "LOG", "RECORDING | --compare A B" as mdoc macros */
static void
put_operands(FILE *out, const char *s)
{
	if (s[0] == '[') {
		fputs(".Op Ar ", out);
		put_lower(out, s + 1, strcspn(s + 1, "]"));
		fputc('\n', out);
		return;
	}
	fputc('.', out);
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, " ");
		if (p != s) {
			fputc(' ', out);
		}
		if (n == 1 && *p == '|') {
			fputc('|', out);
		} else if (n > 2 && p[0] == '-' && p[1] == '-') {
			fputs("Fl \\-", out);
			for (size_t i = 2; i < n; i++) {
				if (p[i] == '-') {
					fputc('\\', out);
				}
				fputc(p[i], out);
			}
		} else {
			fputs("Ar ", out);
			put_lower(out, p, n);
		}
		p += n;
		p += strspn(p, " ");
	}
	fputc('\n', out);
}

void
cli_man_synopsis(FILE *out)
{
	for (size_t i = 0; i < cli_command_count; i++) {
		const struct cli_command *c = &cli_commands[i];
		fprintf(out, ".Nm\n.Cm %s\n", c->name);
		for (size_t k = 0; k < cli_option_count; k++) {
			const struct cli_option *o = &cli_options[k];
			if (o->command[0] && strcmp(o->command, c->name) == 0) {
				fputs(".Op ", out);
				put_flag(out, o, true);
				fputc('\n', out);
			}
		}
		if (c->operands[0]) {
			put_operands(out, c->operands);
		}
	}
}

static void
man_option_list(FILE *out, const char *command, const char *title)
{
	bool any = false;
	for (size_t k = 0; k < cli_option_count; k++) {
		const struct cli_option *o = &cli_options[k];
		if (strcmp(o->command, command) != 0) {
			continue;
		}
		if (!any) {
			fprintf(out, ".Ss Options of %s\n.Bl -tag -width Ds\n", title);
			any = true;
		}
		fputs(".It ", out);
		if (o->short_name) {
			fprintf(out, "Fl %c , ", o->short_name);
		}
		put_flag(out, o, false);
		fprintf(out, "\n%s\n", o->man);
	}
	if (any) {
		fputs(".El\n", out);
	}
}

void
cli_man_options(FILE *out)
{
	man_option_list(out, "", "every command");
	for (size_t i = 0; i < cli_command_count; i++) {
		man_option_list(out, cli_commands[i].name, cli_commands[i].name);
	}
}

/* ---- bash ---------------------------------------------------------------- */

/* "-c --config --replay ..." of COMMAND; with ONLY, the options of that argument kind */
static void
put_names(FILE *out, const char *command, bool every, int only, const char *sep)
{
	bool first = true;
	for (size_t k = 0; k < cli_option_count; k++) {
		const struct cli_option *o = &cli_options[k];
		if (strcmp(o->command, command) != 0 || (only >= 0 && (int)o->arg != only) ||
		    (!every && (o->code == OPT_HELP))) {
			continue;
		}
		if (o->short_name) {
			fprintf(out, "%s-%c", first ? "" : sep, o->short_name);
			first = false;
		}
		fprintf(out, "%s--%s", first ? "" : sep, o->long_name);
		first = false;
	}
}

static bool
has_kind(const char *command, enum cli_arg kind)
{
	for (size_t k = 0; k < cli_option_count; k++) {
		if (strcmp(cli_options[k].command, command) == 0 && cli_options[k].arg == kind) {
			return true;
		}
	}
	return false;
}

static const char *const completers[] = {
	[CLI_ARG_FILE] = "_filedir",
	[CLI_ARG_YAML] = "_filedir '@(yaml|yml)'",
	[CLI_ARG_DIR] = "_filedir -d",
	[CLI_ARG_PROGRAM] = "compopt -o filenames\n\t\t\tCOMPREPLY=($(compgen -c -- \"$cur\"))",
	[CLI_ARG_NUMBER] = NULL, /* a number: nothing to offer */
};

void
cli_bash_completion(FILE *out)
{
	fputs("# bash completion for tegrawatch(1)                          -*- shell-script -*-\n"
	      "# Installed into bash-completion's completions directory, loaded on first use.\n"
	      "# Written by `tegrawatch help --bash-completion` from the option table (agent/cli.c).\n"
	      "\n_tegrawatch()\n{\n\tlocal cur prev words cword\n\t_init_completion || return\n\n\tlocal commands=\"",
	      out);
	for (size_t i = 0; i < cli_command_count; i++) {
		fprintf(out, "%s%s", i ? " " : "", cli_commands[i].name);
	}
	fputs("\"\n\tlocal global=\"", out);
	put_names(out, "", true, -1, " ");
	fputs("\"\n\n\t# the command is the first word that is not an option of every command\n"
	      "\tlocal i cmd=\"\"\n\tfor ((i = 1; i < cword; i++)); do\n\t\tcase ${words[i]} in\n\t\t",
	      out);
	put_names(out, "", false, -1, " | ");
	fputs(") ;;\n\t\t*)\n\t\t\tcmd=${words[i]}\n\t\t\tbreak\n\t\t\t;;\n\t\tesac\n\tdone\n\n"
	      "\tif [[ -z $cmd ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$commands $global --version\" -- \"$cur\"))\n"
	      "\t\treturn\n\tfi\n\n\tlocal opts=\"\" files=\"\"\n\tcase $cmd in\n",
	      out);
	for (size_t i = 0; i < cli_command_count; i++) {
		const struct cli_command *c = &cli_commands[i];
		fprintf(out, "\t%s)\n", c->name);
		if (cli_has_options(c->name)) {
			fputs("\t\topts=\"", out);
			put_names(out, c->name, true, -1, " ");
			fputs("\"\n", out);
		}
		if (c->file_operands) {
			fputs("\t\tfiles=1\n", out);
		}
		bool any = false;
		for (int kind = CLI_ARG_FILE; kind <= CLI_ARG_NUMBER; kind++) {
			if (!has_kind(c->name, (enum cli_arg)kind)) {
				continue;
			}
			if (!any) {
				fputs("\t\tcase $prev in\n", out);
				any = true;
			}
			fputs("\t\t", out);
			put_names(out, c->name, true, kind, " | ");
			if (completers[kind]) {
				fprintf(out, ")\n\t\t\t%s\n\t\t\treturn\n\t\t\t;;\n", completers[kind]);
			} else {
				fputs(")\n\t\t\treturn # a number\n\t\t\t;;\n", out);
			}
		}
		if (any) {
			fputs("\t\tesac\n", out);
		}
		fputs("\t\t;;\n", out);
	}
	fputs("\t*)\n\t\treturn\n\t\t;;\n\tesac\n\n"
	      "\tif [[ $cur == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$opts $global\" -- \"$cur\"))\n"
	      "\telif [[ -n $files ]]; then\n\t\t_filedir # the tegrastats log or recording\n\tfi\n"
	      "} &&\n\tcomplete -F _tegrawatch tegrawatch\n\n# ex: filetype=sh\n",
	      out);
}
