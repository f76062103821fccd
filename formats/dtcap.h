/*
 * dtcap.h - the dt capture format (.dtc): writer, reader, column decoders.
 *
 * One library for every tool (dtrec writes, dtreport and dtsh read).  The
 * on-disk layout is specified in formats/FORMAT.md and man/dtcap.5.
 *
 * Conventions:
 *  - Every call that can fail returns -1 (or NULL) and leaves a one-line
 *    message naming the file and, for damaged input, the byte offset and
 *    chunk: "cap.dtc: truncated block at offset 81920".  Read it with
 *    dtcap_writer_error() / dtcap_reader_error().
 *  - Ids: probe ids are the kernel's (>= 1).  Stack ids and string
 *    (comm) ids are assigned by the writer, dense from 1; 0 means "none".
 *  - Times are ns on the recording machine's monotonic clock (dt_rec's
 *    dtr_ts); dtcap_host gives the pair to convert to wall time.
 *  - Threads: one thread at a time per object (writer, reader, block,
 *    iterator); distinct objects are independent.  The exception is
 *    decoding: dtcap_read_block_mt() may run on many threads at once on
 *    one reader, a block object each (see there).  A threaded writer runs
 *    its own worker inside; dtcap_bytes_written(), dtcap_symbol_bytes() and
 *    dtcap_srcline_bytes() alone may be called from another thread while it writes.
 *
 * Lifetimes and copies:
 *  - In: every call copies what it keeps of its arguments before it
 *    returns (dtcap_create the path and host; dtcap_put_* and
 *    dtcap_intern_* the strings, probe tables, symbol arrays, maps and
 *    frames).  The caller may free or reuse them as soon as the call
 *    returns, whatever it returned.
 *  - Out of a reader: every pointer a reader returns (host, probes, comms,
 *    stacks, kallsyms and modules text, files and their symbols, processes
 *    and their maps, counters, damage, block info) points into the reader,
 *    is read-only and stays valid until dtcap_reader_close(); never free
 *    one.  A dtcap_block's arrays are the block's: valid until the next
 *    dtcap_read_block() into it, dtcap_block_free() or the reader's close,
 *    whichever comes first.  dtcap_iter_next() copies one row into the
 *    caller's struct; an iterator must be freed before its reader closes.
 *  - Messages: dtcap_writer_error()/dtcap_reader_error() text belongs to
 *    the object and is overwritten by its next failing call;
 *    dtcap_reader_warning() lives as long as the reader;
 *    dtcap_create_error() and dtcap_open_error() are thread-local and
 *    last until that thread's next failing create or open.
 *  - Ownership: dtcap_close() frees the writer even when it fails (its
 *    message then moves to dtcap_create_error()); dtcap_reader_close(),
 *    dtcap_block_free() and dtcap_iter_free() accept NULL.
 */
#ifndef DTCAP_H
#define DTCAP_H

#include <stddef.h>
#include <stdint.h>

#define DTCAP_MAXARGS		10	/* = DT_MAXARGS */
#define DTCAP_MAXFRAMES		127	/* = DT_MAXFRAMES */
#define DTCAP_COMMLEN		16
#define DTCAP_PROBENAMELEN	200	/* "provider:function:name" */
#define DTCAP_ARGNAMELEN	24

/* ---------------------------------------------------------------- data */

struct dtcap_host {
	char		kernel[65];	/* uname -r */
	char		hostname[65];
	uint32_t	ncpus;
	uint64_t	clock_mono_ns;	/* one sample of both clocks */
	int64_t		clock_real_ns;	/* wall = ts + (real - mono) */
	uint64_t	start_ns;	/* monotonic, recording start */
	char		command[1024];	/* the recording command line */
	/* Format 3 additions ("" when unknown, always "" in version-2 files).
	 * dtcap_create fills empty ones from the machine it runs on unless
	 * opts.synthetic; tool_version is always the writing libdtcap's. */
	char		tool_version[64];	/* dt release, git describe */
	char		kernel_build_id[64];	/* hex, /sys/kernel/notes */
	char		cpu_model[128];		/* /proc/cpuinfo model name */
	char		boot_id[40];		/* /proc/sys/kernel/random/boot_id */
	char		source[16];		/* what recorded: "dt", "perf" */
};

struct dtcap_probe {
	uint32_t	id;
	uint32_t	flags;		/* DT_PF_* of dt_abi.h */
	char		name[DTCAP_PROBENAMELEN];	/* "syscall:openat:entry" */
	uint32_t	nargs;		/* logical arguments */
	struct {
		char	name[DTCAP_ARGNAMELEN];
		char	type[DTCAP_ARGNAMELEN];
		uint8_t	slot, nslots;
	} args[DTCAP_MAXARGS];
};

/* Execution context of an event (dt_rec's dtr_ctx, DTR_CTX_*). */
#define DTCAP_CTX_TASK		0
#define DTCAP_CTX_SOFTIRQ	1
#define DTCAP_CTX_HARDIRQ	2
#define DTCAP_CTX_NMI		3
#define DTCAP_CTX_UNKNOWN	255	/* read from a file without the column */
/*
 * The name every tool gives a DTCAP_CTX_* value ("task", "softirq",
 * "hardirq", "nmi": SQL's events.ctx, Parquet's, --ctx); NULL for
 * DTCAP_CTX_UNKNOWN and any other value.  The string is static.
 */
const char *dtcap_ctx_name(unsigned ctx);

/* Ids a reader accepts in event rows (validated when a block is read, so
 * tools may size per-id tables by them); the writer refuses others. */
#define DTCAP_MAXCPUS		65536	/* cpu < this: dt_rec's dtr_cpu is u16 */
#define DTCAP_MAXPROBEID	(1u << 24)	/* probe ids < this */

/* One event in row form (what the writer takes, what row iteration gives). */
struct dtcap_event {
	uint64_t	ts;
	uint32_t	cpu;
	uint32_t	pid;
	uint32_t	tid;
	uint32_t	probe;
	uint32_t	comm;		/* string id, 0 = unknown */
	uint32_t	kstack;		/* stack id, 0 = none */
	uint32_t	ustack;		/* stack id, 0 = none */
	uint32_t	flags;		/* DTR_* of dt_abi.h */
	uint32_t	ctx;		/* DTCAP_CTX_*: what the CPU was running */
	uint32_t	nargs;		/* argument slots used */
	uint64_t	args[DTCAP_MAXARGS];
};

/* Kernel counters of one CPU (dt_stats), or the recorder's own losses. */
struct dtcap_count {
	uint64_t	produced, read, dropped, skipped, recursive, nested;
	/* the recorder's only (0 per CPU): user stacks unwound from a stack
	 * copy with DWARF CFI, those of them that did not reach the program
	 * entry, and samples that kept their frame-pointer stack because
	 * unwinding had fallen behind */
	uint64_t	ustack_dwarf, ustack_dwarf_trunc, ustack_fp_behind;
};

/* A symbol of an ELF file or of the kernel. */
struct dtcap_sym {
	uint64_t	addr;		/* file virtual address (st_value) */
	uint64_t	size;
	const char	*name;
};

/*
 * A mapped file with the identity needed to name its frames elsewhere.
 * The writer stores the symbols, so readers never need the file itself.
 */
struct dtcap_file {
	uint32_t	id;		/* assigned by dtcap_put_file, from 1 */
	const char	*path;
	uint8_t		build_id[20];
	uint32_t	build_id_len;	/* 0: none */
	uint64_t	load_bias_hint;	/* p_vaddr - p_offset of the first
					 * executable PT_LOAD: to go from a
					 * runtime pc to st_value */
	uint32_t	nsyms;		/* sorted by addr on read */
	const struct dtcap_sym *syms;
};

/*
 * Where an address of a file is in the source, inlined calls included
 * (SRCL chunks; dtrec resolves the addresses its stored user stacks hold,
 * from the file's DWARF).  frames[0] is the innermost: the function the
 * instruction belongs to (an inlined one, if it was inlined) and the line
 * of the instruction; frames[k + 1] is the function frames[k]'s was
 * inlined into and the line of that call.  The last frame is the
 * out-of-line function, the one the symbol table names.
 */
#define DTCAP_MAXINLINE		64	/* frames of one address */
struct dtcap_srcframe {
	const char	*func;		/* as DWARF names it (may be mangled), "" unknown */
	const char	*file;		/* source path, "" unknown */
	uint32_t	line;		/* 0 unknown */
};
struct dtcap_srcline {
	uint64_t	addr;		/* file virtual address, as dtcap_sym's */
	uint32_t	nframes;	/* 1 .. DTCAP_MAXINLINE */
	const struct dtcap_srcframe *frames;
};

struct dtcap_map {
	uint64_t	start, end;	/* runtime addresses */
	uint64_t	offset;		/* file offset of start */
	uint32_t	file;		/* dtcap_file id, 0: anonymous/unknown */
	uint32_t	prot;		/* 1 r, 2 w, 4 x */
	const char	*name;		/* as in /proc/PID/maps ("[vdso]", path) */
};

/* A process as first seen (and again after exec). */
struct dtcap_proc {
	uint64_t	ts;		/* when the snapshot was taken */
	uint32_t	pid;
	uint32_t	ppid;
	char		comm[DTCAP_COMMLEN];
	const char	*exe;		/* may be "" */
	uint32_t	nmaps;
	const struct dtcap_map *maps;
};

/* -------------------------------------------------------------- writer */

struct dtcap_writer;

struct dtcap_writer_opts {
	int		level;		/* zstd level; 0 = library default (1) */
	uint32_t	block_events;	/* rows per event block; 0 = 65536 */
	int		threaded;	/* compress and write on a second thread */
	/* The host is not this machine (generators, tests): do not sample
	 * its build id, CPU model, boot id or clocks.  Same input, same bytes. */
	int		synthetic;
};

/* The dt release this library was built from ("git describe", or the
 * VERSION file outside a git tree). */
const char *dtcap_version(void);

/*
 * Create PATH (O_TRUNC) and write the file header.  opts may be NULL.
 * Data reaches the disk one whole chunk at a time; after any call returns,
 * a crash loses at most the rows not yet in a complete block.
 */
struct dtcap_writer *dtcap_create(const char *path, const struct dtcap_host *host,
				  const struct dtcap_writer_opts *opts);
/* Error of the last failed call, or of dtcap_create() when it returned NULL. */
const char *dtcap_writer_error(const struct dtcap_writer *w);
const char *dtcap_create_error(void);	/* thread-local, after NULL create */

int dtcap_put_probes(struct dtcap_writer *w, const struct dtcap_probe *p, size_t n);
/* Raw /proc/kallsyms and /proc/modules text (kernel symbolization). */
int dtcap_put_kallsyms(struct dtcap_writer *w, const char *text, size_t len);
int dtcap_put_modules(struct dtcap_writer *w, const char *text, size_t len);
/* Returns the file id (>= 1) or 0 on error.  Same path+build id: same id. */
uint32_t dtcap_put_file(struct dtcap_writer *w, const struct dtcap_file *f);
int dtcap_put_proc(struct dtcap_writer *w, const struct dtcap_proc *p);
/* Source lines of n addresses of file (an id dtcap_put_file returned), in
 * one SRCL chunk; any order, an address given twice keeps its first. */
int dtcap_put_srclines(struct dtcap_writer *w, uint32_t file,
		       const struct dtcap_srcline *s, size_t n);

/* Interning: same content gives the same id.  0 on error. */
uint32_t dtcap_intern_comm(struct dtcap_writer *w, const char *comm);
uint32_t dtcap_intern_stack(struct dtcap_writer *w, const uint64_t *pcs,
			    unsigned n, int kernel, int truncated);

/* Append one event; ids must come from this writer.  Cheap: buffered. */
int dtcap_put_event(struct dtcap_writer *w, const struct dtcap_event *e);

/* A counter snapshot: per-CPU kernel counters and the recorder's losses.
 * Unless opts.synthetic it also records a fresh (monotonic, wall) clock
 * pair, so wall-clock conversion can follow clock steps and drift. */
int dtcap_put_counters(struct dtcap_writer *w, uint64_t ts,
		       const struct dtcap_count *percpu, uint32_t ncpus,
		       const struct dtcap_count *recorder);

/* Write out the current partial block (and pending metadata). */
int dtcap_flush(struct dtcap_writer *w);

/* Bytes written to the file so far and rows accepted (for status lines). */
uint64_t dtcap_bytes_written(const struct dtcap_writer *w);
uint64_t dtcap_events_written(const struct dtcap_writer *w);
/* Of dtcap_bytes_written, the symbol tables' (ELF files, kallsyms). */
uint64_t dtcap_symbol_bytes(const struct dtcap_writer *w);
/* Of dtcap_bytes_written, the source lines' (SRCL chunks). */
uint64_t dtcap_srcline_bytes(const struct dtcap_writer *w);

/* Flush, write the footer index, close.  Frees w even on error. */
int dtcap_close(struct dtcap_writer *w);

/* -------------------------------------------------------------- reader */

struct dtcap_reader;

/*
 * Open and index PATH: walks the chunk headers, decodes the metadata and
 * checks the footer index against what it met; event columns are verified
 * only when decoded (dtcap_read_block), so opening costs the metadata.
 * A capture cut at any byte opens, and so does one whose end a crash left
 * as zeros or as a damaged last chunk, or whose footer or trailer is
 * damaged: dtcap_reader_warning() then says where and what was lost.  Other
 * damage makes open fail with offset and chunk type.  Reads version-2 and
 * version-3 files.
 */
struct dtcap_reader *dtcap_open(const char *path);

/*
 * Open with options.  DTCAP_OPEN_SALVAGE: a damaged chunk does not fail the
 * open; the reader skips it, resyncs on the next valid chunk header, drops
 * event blocks whose columns do not verify (open then reads every block),
 * and lists what it skipped (dtcap_damage_at).  mem_limit bounds the
 * memory the metadata may take (inflated chunks and tables); 0 means
 * 64 MiB + 256 x the file size, so a small hostile file cannot claim GBs.
 */
#define DTCAP_OPEN_SALVAGE	0x1
struct dtcap_read_opts {
	unsigned	flags;		/* DTCAP_OPEN_* */
	uint64_t	mem_limit;	/* bytes, 0: default */
};
struct dtcap_reader *dtcap_open_opts(const char *path, const struct dtcap_read_opts *o);
const char *dtcap_open_error(void);	/* thread-local, after NULL open */

/*
 * The capture file as opened, for a cache of results computed from it:
 * its path, and what tells its contents from any other's: device, inode,
 * size and modification time from the fstat of the descriptor that was
 * mapped, and a hash of its first and last 64 KiB as mapped (a file
 * rewritten in place within one timestamp tick still differs there: its
 * header, footer and trailer).
 */
struct dtcap_ident {
	uint64_t	dev, ino, size, mtime_ns;
	uint64_t	hash;
};
const char *dtcap_path(const struct dtcap_reader *r);
void dtcap_ident(const struct dtcap_reader *r, struct dtcap_ident *id);

/*
 * How complete the opened capture is (bits; 0: finished, not empty, no
 * damage).  Tools exit non-zero on any bit unless the user asked for
 * partial reads; the warning text says the details.
 */
#define DTCAP_ST_TRUNCATED	0x1	/* no intact footer: recording cut short */
#define DTCAP_ST_EMPTY		0x2	/* no events at all */
#define DTCAP_ST_SALVAGED	0x4	/* damaged ranges skipped (salvage mode) */
unsigned dtcap_reader_status(const struct dtcap_reader *r);

/* What salvage mode skipped, in file order.  events_lost: rows of the
 * dropped event blocks in the range (UINT64_MAX when a block header was
 * itself unreadable, so the count is unknown). */
struct dtcap_damage {
	uint64_t	offset, length;	/* bytes of the file */
	uint64_t	events_lost;
	uint32_t	blocks_lost;	/* event blocks known to be in it */
	char		what[96];	/* "damaged EVNT chunk", ... */
};
size_t dtcap_ndamage(const struct dtcap_reader *r);
const struct dtcap_damage *dtcap_damage_at(const struct dtcap_reader *r, size_t i);

/* File format version (2 or 3) and feature bits of the file header. */
uint32_t dtcap_format_version(const struct dtcap_reader *r, uint32_t *compat,
			      uint32_t *incompat);
const char *dtcap_reader_error(const struct dtcap_reader *r);
const char *dtcap_reader_warning(const struct dtcap_reader *r);	/* or NULL */
void dtcap_reader_close(struct dtcap_reader *r);

const struct dtcap_host *dtcap_host(const struct dtcap_reader *r);
uint64_t dtcap_nevents(const struct dtcap_reader *r);

size_t dtcap_nprobes(const struct dtcap_reader *r);
const struct dtcap_probe *dtcap_probe_at(const struct dtcap_reader *r, size_t i);
const struct dtcap_probe *dtcap_probe_by_id(const struct dtcap_reader *r, uint32_t id);
/* The largest probe id of the capture (< DTCAP_MAXPROBEID), 0 if it has
 * none: the size, less one, of a table indexed by probe id. */
uint32_t dtcap_max_probe_id(const struct dtcap_reader *r);

/* NULL for id 0 or an unknown id. */
const char *dtcap_comm(const struct dtcap_reader *r, uint32_t id);
uint32_t dtcap_ncomms(const struct dtcap_reader *r);	/* ids 1..n */

/* Stack id -> frames (innermost first).  NULL for 0 or unknown ids. */
const uint64_t *dtcap_stack(const struct dtcap_reader *r, uint32_t id,
			    unsigned *n, int *kernel, int *truncated);
uint32_t dtcap_nstacks(const struct dtcap_reader *r);	/* ids 1..n */

/* Raw text, NUL-terminated; NULL if the capture has none. */
const char *dtcap_kallsyms(const struct dtcap_reader *r, size_t *len);
const char *dtcap_modules(const struct dtcap_reader *r, size_t *len);

size_t dtcap_nfiles(const struct dtcap_reader *r);
const struct dtcap_file *dtcap_file_at(const struct dtcap_reader *r, size_t i);
const struct dtcap_file *dtcap_file_by_id(const struct dtcap_reader *r, uint32_t id);
/* The source position of addr (a file virtual address) of file id, or
 * NULL when the capture has none (old captures, dtrec --no-srcline, no
 * DWARF).  Exact match: callers look up what the recorder resolved, the
 * innermost pc of a stack and pc - 1 for the others. */
const struct dtcap_srcline *dtcap_srcline_find(const struct dtcap_reader *r, uint32_t file,
					       uint64_t addr);
/* All of them, sorted by (file, addr); *file gets the entry's file id. */
size_t dtcap_nsrclines(const struct dtcap_reader *r);
const struct dtcap_srcline *dtcap_srcline_at(const struct dtcap_reader *r, size_t i,
					     uint32_t *file);
size_t dtcap_nprocs(const struct dtcap_reader *r);
const struct dtcap_proc *dtcap_proc_at(const struct dtcap_reader *r, size_t i);
/* The snapshots of pid as indices for dtcap_proc_at, *n of them, in time
 * order (then file order); NULL when there is none.  The array is the
 * reader's: valid until dtcap_reader_close. */
const uint32_t *dtcap_proc_snapshots(const struct dtcap_reader *r, uint32_t pid, size_t *n);
/* The snapshot of pid in force at time ts (latest with p->ts <= ts, else
 * the earliest), or NULL. */
const struct dtcap_proc *dtcap_proc_find(const struct dtcap_reader *r,
					 uint32_t pid, uint64_t ts);

/* (monotonic, wall) clock pairs in file order: the HOST chunk's first,
 * then one per counter snapshot that carries one. */
size_t dtcap_nclocks(const struct dtcap_reader *r);
int dtcap_clock_at(const struct dtcap_reader *r, size_t i, uint64_t *mono_ns,
		   int64_t *real_ns);

/* Counter snapshots in file order; the last one is the final tally. */
size_t dtcap_ncounters(const struct dtcap_reader *r);
const struct dtcap_count *dtcap_counters_at(const struct dtcap_reader *r, size_t i,
					    uint64_t *ts, uint32_t *ncpus,
					    struct dtcap_count *recorder);

/* ------------------------------------------------ event blocks, columns */

struct dtcap_blockinfo {
	uint64_t	offset;		/* file offset of the block chunk */
	uint32_t	rows;
	uint64_t	tmin, tmax;
	uint32_t	pid_min, pid_max;
};

size_t dtcap_nblocks(const struct dtcap_reader *r);
const struct dtcap_blockinfo *dtcap_block_info(const struct dtcap_reader *r, size_t i);

/*
 * What block i holds, without decoding it: the BSUM chunk the writer puts
 * after each event block (FORMAT.md; captures written before it have
 * none).  Each list is ascending by its first value; its counts add up to
 * the block's rows (the reader checks that, the ids' limits and each pid
 * against the block's pid range when it opens the file; a summary that
 * fails is damage).  The arrays are the reader's, valid until close.
 */
struct dtcap_blocksum {
	uint32_t	nprobe, ncpu, ncomm, npid;
	const uint64_t	*probe;		/* nprobe pairs: probe id, events */
	const uint64_t	*cpu;		/* ncpu pairs: cpu, events */
	const uint64_t	*comm;		/* ncomm pairs: comm id (0: none), events */
	const uint64_t	*pid;		/* npid triples: pid, events, comm id of
					 * its latest row in the block that has
					 * one (0: none) */
};
/* 1 with *s filled, 0 when block i has no summary. */
int dtcap_block_summary(const struct dtcap_reader *r, size_t i, struct dtcap_blocksum *s);

/* Column selection for dtcap_read_block. */
#define DTCAP_COL_TS		0x0001
#define DTCAP_COL_CPU		0x0002
#define DTCAP_COL_PID		0x0004
#define DTCAP_COL_TID		0x0008
#define DTCAP_COL_PROBE		0x0010
#define DTCAP_COL_COMM		0x0020
#define DTCAP_COL_KSTACK	0x0040
#define DTCAP_COL_USTACK	0x0080
#define DTCAP_COL_FLAGS		0x0100
#define DTCAP_COL_ARGS		0x0200	/* nargs and args */
#define DTCAP_COL_CTX		0x0400	/* execution context */
#define DTCAP_COL_ALL		0x07ff
/*
 * Not a column: with DTCAP_COL_ARGS, the arguments are given per slot
 * instead of row-major: argslot[j] holds nargslot[j] values, those of the
 * rows whose nargs > j, in row order, and args is NULL.  For readers that
 * want columns of arguments (most rows have none): no row-major array to
 * fill and transpose back.
 */
#define DTCAP_COL_ARGSLOTS	0x1000
/*
 * Not a column: with DTCAP_COL_ARGSLOTS, only slots 0 and 1 are decoded
 * (argslot[j] NULL and nargslot[j] 0 above), nargs whole.  For readers of
 * return values and errnos alone: a syscall entry's six slots are most of
 * a block's bytes.
 */
#define DTCAP_COL_ARGS2		0x2000
/*
 * Not a column: the per-context columns selected (pid, tid, probe, comm,
 * kstack, ustack, flags, ctx) are given once per distinct context of the
 * block, in the dict arrays, instead of once per row; cidx says which
 * context each row has.  For readers that aggregate: work per context, not
 * per row.  The per-row arrays of those columns are then NULL.
 */
#define DTCAP_COL_BYCTX		0x0800
/*
 * Not columns: for a reader that filters by context before it decodes
 * rows (a thread's events: the block's few contexts of that thread say
 * whether any row is wanted, at the cost of one small column).
 * DTCAP_COL_NOINDEX: with DTCAP_COL_BYCTX, the selected per-context
 * columns' context values (dict, ndict) without the rows' context
 * numbers (cidx NULL); no row column is decoded unless selected.
 * DTCAP_COL_CIDX: the rows' context numbers (ndict, cidx) even when no
 * per-context column is selected, for a second read of the same block
 * that pairs them with the first read's context values.
 */
#define DTCAP_COL_NOINDEX	0x4000
#define DTCAP_COL_CIDX		0x8000

/*
 * Decoded columns of one block.  Arrays not selected are NULL.  args is
 * rows * DTCAP_MAXARGS, row-major, unused slots 0.  The arrays belong to
 * the block object and are reused by the next dtcap_read_block() on it:
 * one block object per thread, freed with dtcap_block_free().
 */
struct dtcap_block {
	uint32_t	rows;
	uint64_t	*ts;
	uint32_t	*cpu, *pid, *tid, *probe, *comm, *kstack, *ustack, *flags;
	uint8_t		*nargs;
	uint64_t	*args;
	/* DTCAP_COL_ARGSLOTS: slot j's values (rows with nargs > j), else NULL */
	const uint64_t	*argslot[DTCAP_MAXARGS];
	uint32_t	nargslot[DTCAP_MAXARGS];
	uint8_t		*ctx;		/* DTCAP_CTX_*; all UNKNOWN if not stored */
	/* Whenever a per-context column (or DTCAP_COL_CIDX) was selected:
	 * the block's contexts (ndict, 1 .. rows) and each row's
	 * (cidx[row] < ndict; NULL with DTCAP_COL_NOINDEX). */
	uint32_t	ndict;
	uint32_t	*cidx;
	/* DTCAP_COL_BYCTX: the selected per-context columns, ndict values each */
	struct {
		uint32_t	*pid, *tid, *probe, *comm, *kstack, *ustack, *flags;
		uint8_t		*ctx;
	} dict;
	void		*priv;
};

struct dtcap_block *dtcap_block_new(void);
void dtcap_block_free(struct dtcap_block *b);
/* Decode only the columns in cols (DTCAP_COL_*), verifying each column's
 * checksum as it is decoded.  -1 on damage. */
int dtcap_read_block(struct dtcap_reader *r, size_t i, unsigned cols,
		     struct dtcap_block *b);
/*
 * The same decoding for a worker among several on one reader: it writes
 * nothing of r, so any number of threads may call it at once on one open
 * reader, each with its own block object (the block holds the decoding
 * state: zstd context, scratch and arrays).  On -1 the message is the
 * block's, dtcap_block_error(b), valid until the block's next read or
 * free; the reader's own error is left alone.  The reader must stay open,
 * and no other call may be made on it meanwhile but these reads and the
 * const getters (dtcap_block_info, dtcap_nblocks, dtcap_stack, dtcap_comm,
 * dtcap_proc_find and the like, which read tables fixed at open).
 */
int dtcap_read_block_mt(const struct dtcap_reader *r, size_t i, unsigned cols,
			struct dtcap_block *b);
const char *dtcap_block_error(const struct dtcap_block *b);
/*
 * The rows of block i whose context passes, for a reader that filters by
 * context (a first read with DTCAP_COL_BYCTX | DTCAP_COL_NOINDEX gave it
 * the contexts): ok[d] non-zero for each of the block's ndict contexts
 * that passes.  Then b->rows is the number of rows that pass, b->cidx
 * their contexts, and the row columns of cols (DTCAP_COL_TS and
 * DTCAP_COL_CPU, no other) their values, in row order; b->ndict is the
 * block's.  The columns are checked whole as dtcap_read_block_mt checks
 * them, but only the passing rows' values are kept: a thread's few rows of
 * a block cost no block-sized arrays.  Threads as dtcap_read_block_mt;
 * -1 with the message in dtcap_block_error(b).
 */
int dtcap_read_rows_mt(const struct dtcap_reader *r, size_t i, unsigned cols, const uint8_t *ok,
		       struct dtcap_block *b);

/*
 * Row iteration over a time range [tmin, tmax] (inclusive; 0, UINT64_MAX
 * for all), skipping blocks by their index.  Returns 1 with *e filled,
 * 0 at the end, -1 on damage (message in dtcap_reader_error()).
 */
struct dtcap_iter;
struct dtcap_iter *dtcap_iter_new(struct dtcap_reader *r, uint64_t tmin,
				  uint64_t tmax, unsigned cols);
int dtcap_iter_next(struct dtcap_iter *it, struct dtcap_event *e);
void dtcap_iter_free(struct dtcap_iter *it);

#endif /* DTCAP_H */
