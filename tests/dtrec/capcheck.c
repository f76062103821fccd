/*
 * capcheck - print what the tests need to know about a capture, one
 * "key value" per line: whether it opens (and any truncation warning), the
 * event count, the final kernel counters, events per probe, processes,
 * files and symbols.  Exit 1 if it does not open.
 *
 * usage: capcheck FILE [SYMBOL...]   (SYMBOL: "sym NAME yes|no" lines)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtcap.h"

int
main(int argc, char **argv)
{
	struct dtcap_reader *r;
	struct dtcap_iter *it;
	struct dtcap_event e;
	uint64_t *perprobe = NULL, kst = 0, ust = 0, n = 0;
	size_t np, nc;
	const char *w;

	if (argc < 2) {
		fprintf(stderr, "usage: capcheck FILE [SYMBOL...]\n");
		return 2;
	}
	r = dtcap_open(argv[1]);
	if (r == NULL) {
		printf("open error %s\n", dtcap_open_error());
		return 1;
	}
	printf("open ok\n");
	w = dtcap_reader_warning(r);
	printf("warning %s\n", w ? w : "none");
	printf("events %llu\n", (unsigned long long)dtcap_nevents(r));
	nc = dtcap_ncounters(r);
	printf("counters %zu\n", nc);
	if (nc) {
		struct dtcap_count rec, t = { 0 };
		uint32_t ncpus = 0;
		uint64_t ts;
		const struct dtcap_count *c = dtcap_counters_at(r, nc - 1, &ts, &ncpus, &rec);
		for (uint32_t i = 0; c && i < ncpus; i++) {
			t.produced += c[i].produced;
			t.read += c[i].read;
			t.dropped += c[i].dropped;
			t.skipped += c[i].skipped;
		}
		printf("kernel_produced %llu\nkernel_read %llu\nkernel_dropped %llu\n"
		       "kernel_skipped %llu\nrecorder_read %llu\nrecorder_dropped %llu\n"
		       "recorder_skipped %llu\n",
		       (unsigned long long)t.produced, (unsigned long long)t.read,
		       (unsigned long long)t.dropped, (unsigned long long)t.skipped,
		       (unsigned long long)rec.read, (unsigned long long)rec.dropped,
		       (unsigned long long)rec.skipped);
	}
	np = dtcap_nprobes(r);
	perprobe = calloc(np + 1, sizeof(*perprobe));
	it = dtcap_iter_new(r, 0, UINT64_MAX, DTCAP_COL_ALL);
	if (it == NULL || perprobe == NULL) {
		printf("iter error %s\n", dtcap_reader_error(r));
		return 1;
	}
	int rc;
	while ((rc = dtcap_iter_next(it, &e)) == 1) {
		n++;
		kst += e.kstack != 0;
		ust += e.ustack != 0;
		for (size_t i = 0; i < np; i++)
			if (dtcap_probe_at(r, i)->id == e.probe)
				perprobe[i]++;
	}
	if (rc < 0)
		printf("iter error %s\n", dtcap_reader_error(r));
	dtcap_iter_free(it);
	printf("rows %llu\nkstacks %llu\nustacks %llu\n", (unsigned long long)n,
	       (unsigned long long)kst, (unsigned long long)ust);
	for (size_t i = 0; i < np; i++)
		printf("probe %s %llu\n", dtcap_probe_at(r, i)->name,
		       (unsigned long long)perprobe[i]);
	printf("procs %zu\nfiles %zu\n", dtcap_nprocs(r), dtcap_nfiles(r));
	{
		const char *k = dtcap_kallsyms(r, NULL);
		printf("kallsyms %s\n", k && *k ? "yes" : "no");
	}
	for (int a = 2; a < argc; a++) {
		int found = 0;
		for (size_t i = 0; i < dtcap_nfiles(r) && !found; i++) {
			const struct dtcap_file *f = dtcap_file_at(r, i);
			for (uint32_t j = 0; j < f->nsyms; j++)
				if (strcmp(f->syms[j].name, argv[a]) == 0)
					found = 1;
		}
		printf("sym %s %s\n", argv[a], found ? "yes" : "no");
	}
	free(perprobe);
	dtcap_reader_close(r);
	return 0;
}
