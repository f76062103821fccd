/*
 * dtcap_args.c - the view column and decoding of each probe argument.  See
 * dtcap_args.h.
 */
#include <stdio.h>
#include <string.h>

#include "dtcap_args.h"
#include "dt_abi.h"

const char *const dtcap_arg_event_cols[] = {
	"ts", "cpu", "pid", "tid", "comm", "kstack", "ustack", "flags", "ctx", NULL,
};

/*
 * C types narrower than a slot.  A syscall's int arrives as the whole
 * register (AT_FDCWD as 4294967196) and dt.ko and tracefs name fields by
 * their C type, so the type says how many of the slot's bytes are the
 * value.  Wider and unknown types are left as stored: guessing a width
 * would cut real values.
 */
static const struct {
	const char	*type;
	unsigned char	bytes, is_signed;
} inttypes[] = {
	{ "char", 1, 1 }, { "signed char", 1, 1 }, { "s8", 1, 1 }, { "__s8", 1, 1 },
	{ "int8_t", 1, 1 },
	{ "unsigned char", 1, 0 }, { "u8", 1, 0 }, { "__u8", 1, 0 }, { "uint8_t", 1, 0 },
	{ "bool", 1, 0 }, { "_Bool", 1, 0 },
	{ "short", 2, 1 }, { "short int", 2, 1 }, { "s16", 2, 1 }, { "__s16", 2, 1 },
	{ "int16_t", 2, 1 },
	{ "unsigned short", 2, 0 }, { "unsigned short int", 2, 0 }, { "u16", 2, 0 },
	{ "__u16", 2, 0 }, { "uint16_t", 2, 0 }, { "umode_t", 2, 0 },
	{ "int", 4, 1 }, { "signed int", 4, 1 }, { "signed", 4, 1 }, { "s32", 4, 1 },
	{ "__s32", 4, 1 }, { "int32_t", 4, 1 }, { "pid_t", 4, 1 }, { "key_t", 4, 1 },
	{ "key_serial_t", 4, 1 }, { "mqd_t", 4, 1 }, { "clockid_t", 4, 1 },
	{ "timer_t", 4, 1 }, { "rwf_t", 4, 1 },
	{ "unsigned int", 4, 0 }, { "unsigned", 4, 0 }, { "u32", 4, 0 }, { "__u32", 4, 0 },
	{ "uint32_t", 4, 0 }, { "uid_t", 4, 0 }, { "gid_t", 4, 0 }, { "qid_t", 4, 0 },
	{ "mode_t", 4, 0 }, { "dev_t", 4, 0 }, { "gfp_t", 4, 0 }, { "fmode_t", 4, 0 },
};

static void classify(const char *type, struct dtcap_argcol *c)
{
	c->kind = DTCAP_ARG_RAW;
	for (;;) {
		if (!strncmp(type, "const ", 6))
			type += 6;
		else if (!strncmp(type, "volatile ", 9))
			type += 9;
		else
			break;
	}
	if (strchr(type, '*'))
		return;
	if (strchr(type, '[')) {
		c->kind = !strncmp(type, "char[", 5) || !strncmp(type, "unsigned char[", 14) ||
			  !strncmp(type, "signed char[", 12) ? DTCAP_ARG_TEXT : DTCAP_ARG_BYTES;
		return;
	}
	if (!strncmp(type, "enum ", 5)) {
		c->kind = DTCAP_ARG_INT;	/* the kernel's enums are int */
		c->bytes = 4;
		c->is_signed = 1;
		return;
	}
	for (size_t i = 0; i < sizeof(inttypes) / sizeof(inttypes[0]); i++)
		if (!strcmp(type, inttypes[i].type)) {
			c->kind = DTCAP_ARG_INT;
			c->bytes = inttypes[i].bytes;
			c->is_signed = inttypes[i].is_signed;
			return;
		}
}

static int taken(const struct dtcap_argcol *out, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(out[i].name, name))
			return 1;
	/* errno_name is the view's own column after a return's errno */
	return !strcmp(name, "errno_name");
}

unsigned dtcap_arg_columns(const struct dtcap_probe *p, struct dtcap_argcol *out, int *errno_name)
{
	unsigned n = 0;

	*errno_name = -1;
	for (uint32_t i = 0; i < p->nargs && i < DTCAP_MAXARGS; i++) {
		const char *nm = p->args[i].name;
		struct dtcap_argcol *c = &out[n];
		char base[DTCAP_ARGNAMELEN + 8];

		if (p->args[i].nslots == 0 || p->args[i].slot >= DTCAP_MAXARGS ||
		    p->args[i].nslots > DTCAP_MAXARGS - p->args[i].slot)
			continue;
		memset(c, 0, sizeof(*c));
		/* names come from the capture: keep them plain identifiers */
		size_t k = 0;
		for (; nm[k] && k < DTCAP_ARGNAMELEN; k++) {
			char ch = nm[k];
			base[k] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
				  (ch >= '0' && ch <= '9' && k) || ch == '_' ? ch : '_';
		}
		base[k] = 0;
		if (k == 0)
			snprintf(base, sizeof(base), "arg%u", (unsigned)i);
		snprintf(c->name, sizeof(c->name), "%s", base);
		for (unsigned dup = 2; taken(out, n, c->name); dup++)
			snprintf(c->name, sizeof(c->name), "%.*s_%u", DTCAP_ARGNAMELEN, base, dup);
		classify(p->args[i].type, c);
		c->slot = p->args[i].slot;
		c->nslots = p->args[i].nslots;
		c->arg = i;
		if ((p->flags & DT_PF_RETURN) && !strcmp(nm, "errno"))
			*errno_name = (int)n;
		n++;
	}
	return n;
}

const char *dtcap_arg_event_col(const struct dtcap_probe *p, const char *ec, char *buf, size_t len)
{
	struct dtcap_argcol cols[DTCAP_MAXARGS];
	int en;
	unsigned n = dtcap_arg_columns(p, cols, &en);

	for (unsigned i = 0; i < n; i++)
		if (!strcmp(cols[i].name, ec)) {
			snprintf(buf, len, "event_%s", ec);
			return buf;
		}
	snprintf(buf, len, "%s", ec);
	return buf;
}

const char *dtcap_arg_slots(const struct dtcap_argcol *c, char *buf, size_t len)
{
	if (c->nslots > 1)
		snprintf(buf, len, "arg%u..arg%u", c->slot, c->slot + c->nslots - 1);
	else
		snprintf(buf, len, "arg%u", c->slot);
	return buf;
}

void dtcap_arg_print(FILE *f, const struct dtcap_probe *p)
{
	struct dtcap_argcol c[DTCAP_MAXARGS];
	int en;
	unsigned n = dtcap_arg_columns(p, c, &en);
	char buf[64], sl[32];

	if (n == 0) {
		fprintf(f, "  no arguments\n");
		return;
	}
	/* the quoting SQL needs for a name with ':' in it */
	fprintf(f, "  fields by name: SELECT * FROM \"");
	for (const char *s = p->name; *s; s++)
		fputs(*s == '"' ? "\"\"" : (char[2]){ *s, 0 }, f);
	fprintf(f, "\"\n  %-20s %-20s %s\n", "column", "type", "events column");
	for (unsigned i = 0; i < n; i++) {
		const char *dec = "", *type = p->args[c[i].arg].type;
		char w[16];
		switch (c[i].kind) {
		case DTCAP_ARG_TEXT: dec = " as text"; break;
		case DTCAP_ARG_BYTES: dec = " as a blob"; break;
		case DTCAP_ARG_INT:
			snprintf(w, sizeof(w), " as %sint%u", c[i].is_signed ? "" : "u",
				 8 * c[i].bytes);
			dec = w;
			break;
		default: break;
		}
		fprintf(f, "  %-20s %-20s %s%s\n", c[i].name,
			type[0] ? type : "?",
			dtcap_arg_slots(&c[i], sl, sizeof(sl)), dec);
		if ((int)i == en)
			fprintf(f, "  %-20s %-20s %s\n", "errno_name", "text",
				"errno_name(errno): ENOENT...");
	}
	for (int k = 0; dtcap_arg_event_cols[k]; k++)
		if (strcmp(dtcap_arg_event_col(p, dtcap_arg_event_cols[k], buf, sizeof(buf)),
			   dtcap_arg_event_cols[k]))
			fprintf(f, "  %-20s %-20s events.%s (the field takes the name)\n",
				buf, "", dtcap_arg_event_cols[k]);
}
