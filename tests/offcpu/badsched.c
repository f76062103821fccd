/*
 * badsched.c - a capture whose sched_switch says its prev_pid is in slot
 * 200 (a damaged or hand-made file): the off-CPU model must refuse the
 * layout, not read past the event's ten argument slots.
 *
 * usage: badsched FILE
 */
#include <stdio.h>
#include <string.h>

#include "dtcap.h"

int
main(int argc, char **argv)
{
	struct dtcap_host h;
	struct dtcap_writer_opts wo = { .synthetic = 1 };
	struct dtcap_probe p;
	struct dtcap_event e;
	static const char *const nm[] = { "prev_pid", "prev_state", "next_pid" };

	if (argc != 2)
		return 2;
	memset(&h, 0, sizeof(h));
	h.ncpus = 1;
	h.start_ns = 1000;
	struct dtcap_writer *w = dtcap_create(argv[1], &h, &wo);
	if (w == NULL)
		return 1;
	memset(&p, 0, sizeof(p));
	p.id = 1;
	snprintf(p.name, sizeof(p.name), "tracepoint:sched:sched_switch");
	p.nargs = 3;
	for (int k = 0; k < 3; k++) {
		snprintf(p.args[k].name, DTCAP_ARGNAMELEN, "%s", nm[k]);
		snprintf(p.args[k].type, DTCAP_ARGNAMELEN, "int");
		p.args[k].slot = (uint8_t)(k == 0 ? 200 : k);
		p.args[k].nslots = 1;
	}
	memset(&e, 0, sizeof(e));
	e.ts = 2000;
	e.probe = 1;
	e.pid = e.tid = 7;
	e.nargs = 3;
	e.kstack = dtcap_intern_stack(w, (const uint64_t[]){ 0xffffffff81000010ULL }, 1, 1, 0);
	if (dtcap_put_probes(w, &p, 1) || dtcap_put_event(w, &e) || dtcap_close(w)) {
		fprintf(stderr, "badsched: %s\n", dtcap_create_error());
		return 1;
	}
	return 0;
}
