/*
 * dtcdump - print what a capture holds, through libdtcap only.  A
 * debugging aid for the format and for the tests (not a user tool):
 *	dtcdump [-e N] [-c] [-k] FILE
 *	dtcdump --version
 * prints a summary; -e N also the first N events; -c a checksum line over
 * every decoded field (to compare two captures' contents quickly); -k only
 * the kallsyms text.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "dtcap.h"

int main(int argc, char **argv)
{
	long nev = 0;
	int sum = 0, ksyms = 0, c;
	char *end;
	/* every tool answers --version (its build's VERSION file) */
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("dtcdump %s\n", DT_VERSION);
		if (fflush(stdout) == 0 && !ferror(stdout))
			return 0;
		perror("dtcdump: standard output");
		return 1;
	}
	while ((c = getopt(argc, argv, "e:ck")) != -1) {
		switch (c) {
		case 'e':
			nev = strtol(optarg, &end, 10);
			if (end == optarg || *end || nev < 0) {
				fprintf(stderr, "dtcdump: bad event count '%s'\n", optarg);
				return 2;
			}
			break;
		case 'c': sum = 1; break;
		case 'k': ksyms = 1; break;
		default:
			fprintf(stderr, "usage: dtcdump [-e N] [-c] [-k] FILE | --version\n");
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: dtcdump [-e N] [-c] [-k] FILE | --version\n");
		return 2;
	}
	struct dtcap_reader *r = dtcap_open(argv[optind]);
	if (!r) {
		fprintf(stderr, "dtcdump: %s\n", dtcap_open_error());
		return 1;
	}
	if (dtcap_reader_warning(r))
		fprintf(stderr, "dtcdump: warning: %s\n", dtcap_reader_warning(r));
	if (ksyms) {
		size_t kl = 0;
		const char *k = dtcap_kallsyms(r, &kl);
		if (k)
			fwrite(k, 1, kl, stdout);
		dtcap_reader_close(r);
		return 0;
	}
	const struct dtcap_host *h = dtcap_host(r);
	printf("host %s %s ncpus %u start %" PRIu64 " mono %" PRIu64 " real %" PRId64 "\n",
	       h->kernel, h->hostname, h->ncpus, h->start_ns, h->clock_mono_ns,
	       h->clock_real_ns);
	printf("command %s\n", h->command);
	uint32_t fc, fi, fv = dtcap_format_version(r, &fc, &fi);
	printf("meta format %u compat %#x incompat %#x status %#x tool '%s' build-id '%s' "
	       "cpu '%s' boot '%s' clocks %zu\n", fv, fc, fi, dtcap_reader_status(r),
	       h->tool_version, h->kernel_build_id, h->cpu_model, h->boot_id, dtcap_nclocks(r));
	size_t kl = 0, ml = 0;
	dtcap_kallsyms(r, &kl);
	dtcap_modules(r, &ml);
	printf("events %" PRIu64 " blocks %zu probes %zu comms %u stacks %u files %zu "
	       "procs %zu counters %zu kallsyms %zu modules %zu\n",
	       dtcap_nevents(r), dtcap_nblocks(r), dtcap_nprobes(r), dtcap_ncomms(r),
	       dtcap_nstacks(r), dtcap_nfiles(r), dtcap_nprocs(r), dtcap_ncounters(r),
	       kl, ml);
	for (size_t i = 0; i < dtcap_nprobes(r); i++) {
		const struct dtcap_probe *p = dtcap_probe_at(r, i);
		printf("probe %u %s nargs %u\n", p->id, p->name, p->nargs);
	}
	for (size_t i = 0; i < dtcap_nfiles(r); i++) {
		const struct dtcap_file *f = dtcap_file_at(r, i);
		printf("file %u %s nsyms %u\n", f->id, f->path, f->nsyms);
	}
	for (size_t i = 0; i < dtcap_nprocs(r); i++) {
		const struct dtcap_proc *p = dtcap_proc_at(r, i);
		printf("proc %u ppid %u ts %" PRIu64 " %s %s nmaps %u\n", p->pid, p->ppid,
		       p->ts, p->comm, p->exe, p->nmaps);
	}
	if (dtcap_ncounters(r)) {
		uint64_t ts;
		uint32_t n;
		struct dtcap_count rec;
		const struct dtcap_count *pc =
			dtcap_counters_at(r, dtcap_ncounters(r) - 1, &ts, &n, &rec);
		uint64_t rd = 0, dr = 0;
		for (uint32_t i = 0; i < n; i++) {
			rd += pc[i].read;
			dr += pc[i].dropped;
		}
		printf("counters ts %" PRIu64 " ncpus %u read %" PRIu64 " dropped %" PRIu64 "\n",
		       ts, n, rd, dr);
	}
	struct dtcap_iter *it = dtcap_iter_new(r, 0, UINT64_MAX, DTCAP_COL_ALL);
	struct dtcap_event e;
	int k;
	long i = 0;
	XXH3_state_t *st = XXH3_createState();
	XXH3_64bits_reset(st);
	while (it && (k = dtcap_iter_next(it, &e)) == 1) {
		if (i < nev) {
			printf("ev %" PRIu64 " cpu %u pid %u tid %u probe %u comm %s k %u u %u "
			       "fl %#x ctx %u nargs %u", e.ts, e.cpu, e.pid, e.tid, e.probe,
			       dtcap_comm(r, e.comm) ? dtcap_comm(r, e.comm) : "-",
			       e.kstack, e.ustack, e.flags, e.ctx, e.nargs);
			for (uint32_t a = 0; a < e.nargs; a++)
				printf(" %#" PRIx64, e.args[a]);
			printf("\n");
		}
		if (sum)
			XXH3_64bits_update(st, &e, sizeof(e));
		i++;
	}
	if (!it || k < 0) {
		fprintf(stderr, "dtcdump: %s\n", dtcap_reader_error(r));
		return 1;
	}
	if (sum)
		printf("rows %ld sum %016llx\n", i, (unsigned long long)XXH3_64bits_digest(st));
	XXH3_freeState(st);
	dtcap_iter_free(it);
	dtcap_reader_close(r);
	return 0;
}
