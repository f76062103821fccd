/*
 * mkargs - a capture whose argument slots hold known values in the layouts
 * the sources write, for the tests of the probe views (fields by name):
 *
 *	tracepoint:sched:sched_switch	dt.ko's layout: char[16] in two slots,
 *		prev_pid in arg2, next_pid in arg7 (the second event's
 *		next_pid stored zero-extended, as a register would hold it)
 *	syscall:openat:entry	dfd as the whole register, 4294967196
 *	syscall:openat:return	retval -2, errno 2
 *	tracepoint:sched:sched_wakeup	fields named comm and pid, as the
 *		event's own columns
 *
 *	mkargs OUT.dtc
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_abi.h"
#include "dtcap.h"

static void die(const char *what, const char *msg)
{
	fprintf(stderr, "mkargs: %s: %s\n", what, msg);
	exit(1);
}

/* The probes, id = index + 1: their fields, slots as the sources lay them. */
static const struct {
	const char	*name;
	uint32_t	flags;
	struct {
		const char	*name, *type;
		uint8_t		slot, nslots;
	} args[DTCAP_MAXARGS];
} probes[] = {
	{ "tracepoint:sched:sched_switch", 0, {
		{ "prev_comm", "char[16]", 0, 2 }, { "prev_pid", "pid_t", 2, 1 },
		{ "prev_prio", "int", 3, 1 }, { "prev_state", "long", 4, 1 },
		{ "next_comm", "char[16]", 5, 2 }, { "next_pid", "pid_t", 7, 1 },
		{ "next_prio", "int", 8, 1 } } },
	{ "syscall:openat:entry", 0, {
		{ "dfd", "int", 0, 1 }, { "filename", "const char *", 1, 1 },
		{ "flags", "int", 2, 1 }, { "mode", "umode_t", 3, 1 } } },
	{ "syscall:openat:return", DT_PF_RETURN, {
		{ "retval", "long", 0, 1 }, { "errno", "int", 1, 1 } } },
	{ "tracepoint:sched:sched_wakeup", 0, {
		{ "comm", "char[16]", 0, 2 }, { "pid", "pid_t", 2, 1 },
		{ "prio", "int", 3, 1 }, { "target_cpu", "int", 4, 1 } } },
	/* differs from the first only in case, as SQL names do not */
	{ "tracepoint:sched:SCHED_SWITCH", 0, {
		{ "prev_pid", "pid_t", 0, 1 } } },
};
#define NPROBES (sizeof(probes) / sizeof(probes[0]))

/* s into slots (each little-endian, NUL-padded), as FORMAT.md stores char[N] */
static void text(uint64_t *slots, unsigned n, const char *s)
{
	unsigned char b[8 * DTCAP_MAXARGS] = { 0 };

	memcpy(b, s, strlen(s) < 8 * n - 1 ? strlen(s) : 8 * n - 1);
	for (unsigned i = 0; i < n; i++) {
		slots[i] = 0;
		for (unsigned j = 0; j < 8; j++)
			slots[i] |= (uint64_t)b[8 * i + j] << (8 * j);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkargs OUT.dtc\n");
		return 2;
	}
	struct dtcap_host host;
	memset(&host, 0, sizeof(host));
	snprintf(host.kernel, sizeof(host.kernel), "6.1.0-argtest");
	snprintf(host.hostname, sizeof(host.hostname), "mkargs");
	host.ncpus = 1;
	host.clock_mono_ns = host.start_ns = 1000000000ULL;
	host.clock_real_ns = 1700000000000000000LL;
	snprintf(host.command, sizeof(host.command), "mkargs");
	struct dtcap_writer_opts wo = { 0, 1000, 0, 1 };
	struct dtcap_writer *w = dtcap_create(argv[1], &host, &wo);
	if (w == NULL)
		die(argv[1], dtcap_create_error());

	struct dtcap_probe p[NPROBES];
	memset(p, 0, sizeof(p));
	for (unsigned i = 0; i < NPROBES; i++) {
		p[i].id = i + 1;
		p[i].flags = probes[i].flags;
		snprintf(p[i].name, sizeof(p[i].name), "%s", probes[i].name);
		for (unsigned k = 0; k < DTCAP_MAXARGS && probes[i].args[k].name; k++) {
			snprintf(p[i].args[k].name, DTCAP_ARGNAMELEN, "%s", probes[i].args[k].name);
			snprintf(p[i].args[k].type, DTCAP_ARGNAMELEN, "%s", probes[i].args[k].type);
			p[i].args[k].slot = probes[i].args[k].slot;
			p[i].args[k].nslots = probes[i].args[k].nslots;
			p[i].nargs = k + 1;
		}
	}
	if (dtcap_put_probes(w, p, NPROBES))
		die(argv[1], dtcap_writer_error(w));

	uint32_t comm = dtcap_intern_comm(w, "argtest");
	if (comm == 0)
		die(argv[1], dtcap_writer_error(w));
	struct dtcap_event e[7];
	memset(e, 0, sizeof(e));
	for (unsigned i = 0; i < 7; i++) {
		e[i].ts = host.start_ns + 1000 * (i + 1);
		e[i].pid = e[i].tid = 100;
		e[i].comm = comm;
	}
	/* a comm the kernel cut mid-character: "sauvegarde-doné" in 15 bytes */
	e[0].probe = 1;
	e[0].nargs = 9;
	text(&e[0].args[0], 2, "sauvegarde-don\xc3");
	e[0].args[2] = 4242;
	e[0].args[3] = 120;
	e[0].args[4] = 1;
	text(&e[0].args[5], 2, "swapper/0");
	e[0].args[7] = 0;
	e[0].args[8] = 120;
	e[1].probe = 1;
	e[1].nargs = 9;
	text(&e[1].args[0], 2, "a,b");
	e[1].args[2] = 7;
	text(&e[1].args[5], 2, "kworker/0:1");
	e[1].args[7] = 0xffffffffULL;	/* -1 as a 32-bit register */
	e[2].probe = 2;
	e[2].nargs = 4;
	e[2].args[0] = 0xffffff9cULL;	/* AT_FDCWD */
	e[2].args[1] = 0x7ffd1000;
	e[2].args[2] = 0x80000;
	e[2].args[3] = 0644;
	e[3].probe = 3;
	e[3].flags = DTR_RETURN;
	e[3].nargs = 2;
	e[3].args[0] = (uint64_t)-2;
	e[3].args[1] = 2;
	e[4].probe = 4;
	e[4].nargs = 5;
	text(&e[4].args[0], 2, "woken");
	e[4].args[2] = 555;
	e[4].args[3] = 120;
	e[4].args[4] = 1;
	e[5].probe = 3;
	e[5].flags = DTR_RETURN;
	e[5].nargs = 2;
	e[5].args[0] = 3;
	e[6].probe = 5;
	e[6].nargs = 1;
	e[6].args[0] = 99;
	for (unsigned i = 0; i < 7; i++)
		if (dtcap_put_event(w, &e[i]))
			die(argv[1], dtcap_writer_error(w));
	if (dtcap_close(w))
		die(argv[1], dtcap_create_error());
	return 0;
}
