/*
 * fuzz_reader - libFuzzer target: any bytes as a capture file.  Opens it
 * plainly and in salvage mode, touches every piece of metadata and decodes
 * every column of every block, the block summaries (which must add up to
 * their blocks), then the time-range iterator.  Crashes,
 * leaks, UB, hangs and huge allocations are the findings (fuzz.sh runs it
 * with -malloc_limit_mb, -rss_limit_mb and -timeout, so a small input
 * that makes the reader allocate or loop without bound is one); errors
 * are the expected outcome.  The kernel symbols are loaded and every
 * frame named too (dtsym): counts the capture chooses must not make that
 * quadratic (fuzz.sh seeds the crafted captures of dthostile).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtcap.h"
#include "dtcap_int.h"
#include "dtsym.h"

static char path[256];

static void cleanup(void)
{
	unlink(path);
}

static void walk(struct dtcap_reader *r);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the decoders behind the compression, straight: kallsyms columns
	 * and the column codecs */
	size_t kl;
	char *kt = dtc_ksym_decode(data, size, &kl);
	if (kt && kt[kl] != 0)
		abort();	/* the text must be NUL-terminated */
	free(kt);
	if (size >= 2) {
		uint32_t n = data[0] | (uint32_t)data[1] << 8;
		static uint32_t out32[65536];
		static uint64_t out64[65536];
		dtc_dec_u32(data + 2, size - 2, out32, n);
		dtc_dec_u64(data + 2, size - 2, out64, n);
	}

	if (!path[0]) {
		snprintf(path, sizeof(path), "/dev/shm/dtcap-fuzz-%d.dtc", (int)getpid());
		if (access("/dev/shm", W_OK))
			snprintf(path, sizeof(path), "/tmp/dtcap-fuzz-%d.dtc", (int)getpid());
		atexit(cleanup);
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);

	for (int salvage = 0; salvage <= 1; salvage++) {
		struct dtcap_read_opts o = {salvage ? DTCAP_OPEN_SALVAGE : 0, 0};
		struct dtcap_reader *r = dtcap_open_opts(path, &o);
		if (!r) {
			if (!strstr(dtcap_open_error(), path))
				abort();	/* errors must name the file */
			continue;
		}
		walk(r);
		dtcap_reader_close(r);
	}
	return 0;
}

static void walk(struct dtcap_reader *r)
{
	volatile uint64_t sink = 0;
	sink += dtcap_reader_status(r) + dtcap_format_version(r, NULL, NULL);
	for (size_t i = 0; i < dtcap_ndamage(r); i++)
		sink += dtcap_damage_at(r, i)->length + strlen(dtcap_damage_at(r, i)->what);
	for (size_t i = 0; i < dtcap_nclocks(r); i++) {
		uint64_t m;
		int64_t w;
		dtcap_clock_at(r, i, &m, &w);
		sink += m + (uint64_t)w;
	}
	const struct dtcap_host *h = dtcap_host(r);
	sink += h->ncpus + strlen(h->command) + strlen(h->kernel);
	for (size_t i = 0; i < dtcap_nprobes(r); i++)
		sink += strlen(dtcap_probe_at(r, i)->name) +
			(dtcap_probe_by_id(r, dtcap_probe_at(r, i)->id) != NULL);
	for (uint32_t i = 0; i <= dtcap_ncomms(r) + 1; i++)
		sink += dtcap_comm(r, i) ? strlen(dtcap_comm(r, i)) : 0;
	for (uint32_t i = 0; i <= dtcap_nstacks(r) + 1; i++) {
		unsigned n = 0;
		int k, t;
		const uint64_t *f = dtcap_stack(r, i, &n, &k, &t);
		for (unsigned j = 0; f && j < n; j++)
			sink += f[j];
	}
	size_t len;
	const char *txt = dtcap_kallsyms(r, &len);
	if (txt)
		sink += strlen(txt) + len;
	txt = dtcap_modules(r, &len);
	if (txt)
		sink += strlen(txt) + len;
	struct dtsym *sym = dtsym_open(r);
	for (uint32_t i = 1; sym && i <= dtcap_nstacks(r); i++) {
		unsigned n = 0;
		int k, t;
		const uint64_t *f = dtcap_stack(r, i, &n, &k, &t);
		for (unsigned j = 0; f && j < n; j++)
			sink += strlen(dtsym_name(sym, f[j], k, 1, 0));
	}
	dtsym_close(sym);
	for (size_t i = 0; i < dtcap_nfiles(r); i++) {
		const struct dtcap_file *f = dtcap_file_at(r, i);
		sink += strlen(f->path) + (dtcap_file_by_id(r, f->id) == f);
		for (uint32_t k = 0; k < f->nsyms; k++)
			sink += f->syms[k].addr + strlen(f->syms[k].name);
	}
	for (size_t i = 0; i < dtcap_nsrclines(r); i++) {
		uint32_t file;
		const struct dtcap_srcline *s = dtcap_srcline_at(r, i, &file);
		sink += dtcap_srcline_find(r, file, s->addr) != NULL;
		for (uint32_t k = 0; k < s->nframes; k++)
			sink += strlen(s->frames[k].func) + strlen(s->frames[k].file) +
				s->frames[k].line;
	}
	for (size_t i = 0; i < dtcap_nprocs(r); i++) {
		const struct dtcap_proc *p = dtcap_proc_at(r, i);
		sink += strlen(p->exe) + strlen(p->comm);
		for (uint32_t k = 0; k < p->nmaps; k++)
			sink += p->maps[k].start + strlen(p->maps[k].name);
		sink += dtcap_proc_find(r, p->pid, p->ts) != NULL;
	}
	for (size_t i = 0; i < dtcap_ncounters(r); i++) {
		uint64_t ts;
		uint32_t n;
		struct dtcap_count rec;
		const struct dtcap_count *c = dtcap_counters_at(r, i, &ts, &n, &rec);
		for (uint32_t k = 0; k < n; k++)
			sink += c[k].read;
	}
	struct dtcap_block *b = dtcap_block_new();
	for (size_t i = 0; i < dtcap_nblocks(r); i++) {
		if (dtcap_read_block(r, i, DTCAP_COL_ALL, b))
			continue;
		for (uint32_t k = 0; k < b->rows; k++)
			sink += b->ts[k] + b->kstack[k] + b->args[k * DTCAP_MAXARGS + 9] +
				b->ctx[k] + b->cpu[k];
	}
	dtcap_block_free(b);
	/* block summaries (BSUM): what the reader accepted adds up */
	for (size_t i = 0; i < dtcap_nblocks(r); i++) {
		struct dtcap_blocksum s;
		if (!dtcap_block_summary(r, i, &s))
			continue;
		uint64_t rows = dtcap_block_info(r, i)->rows, t[4] = {0, 0, 0, 0};
		for (uint32_t k = 0; k < s.nprobe; k++)
			t[0] += s.probe[2 * k + 1];
		for (uint32_t k = 0; k < s.ncpu; k++)
			t[1] += s.cpu[2 * k + 1], sink += s.cpu[2 * k];
		for (uint32_t k = 0; k < s.ncomm; k++)
			t[2] += s.comm[2 * k + 1], sink += dtcap_comm(r, (uint32_t)s.comm[2 * k]) != NULL;
		for (uint32_t k = 0; k < s.npid; k++)
			t[3] += s.pid[3 * k + 1], sink += s.pid[3 * k + 2];
		if (t[0] != rows || t[1] != rows || t[2] != rows || t[3] != rows)
			abort();
	}
	const struct dtcap_blockinfo *bi = dtcap_block_info(r, 0);
	struct dtcap_iter *it = dtcap_iter_new(r, bi ? bi->tmin : 0,
					       bi ? bi->tmin + 1000 : UINT64_MAX,
					       DTCAP_COL_PID | DTCAP_COL_ARGS);
	struct dtcap_event e;
	while (it && dtcap_iter_next(it, &e) == 1)
		sink += e.pid;
	dtcap_iter_free(it);
	(void)sink;
}
