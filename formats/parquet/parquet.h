/*
 * parquet.h - a streaming Apache Parquet file writer, written from the
 * specification (apache/parquet-format: parquet.thrift, Encodings.md);
 * no Parquet library is packaged for Debian 12.
 *
 * What it writes: a flat schema of INT32, INT64 and UTF-8 string columns,
 * each REQUIRED or OPTIONAL (nullable).  Per row group and column, one
 * data page (v1) compressed with zstd; a column whose page zstd shrank by
 * less than 2% has its next 15 data pages stored as raw zstd blocks (a
 * valid zstd frame, no match search).  Strings: RLE_DICTIONARY over a
 * PLAIN dictionary page.  Integers: the same when the chunk has few
 * distinct values (at most a quarter of its values and 32768; a small
 * range's dictionary in value order, others in first-seen order), else
 * DELTA_BINARY_PACKED or PLAIN, whichever zstd shrank more on the first
 * 16384 values of the column's first chunk.  A chunk with no non-null
 * value is PLAIN, empty.  Definition levels (RLE/bit-packed hybrid,
 * width 1) only for OPTIONAL columns.  Every
 * column chunk carries Statistics (null_count, min_value, max_value, in
 * the type's own order, declared by the footer's column_orders) so
 * engines skip row groups by value.  The footer is FileMetaData in the
 * Thrift compact protocol.
 *
 * Streaming: rows are buffered column by column until the row group is
 * full (opts.rowgroup_rows), then encoded, compressed and written, and the
 * buffers reused.  Memory is bounded by one row group (plus one caller
 * batch) and the footer's per-row-group metadata (a few hundred bytes per
 * column per row group); nothing else of the file is kept.
 *
 * Appending: the caller appends the same number of values to every column
 * (in any order and batch size), then calls pq_rows_done(); a row group is
 * cut there once it holds at least rowgroup_rows rows.
 *
 * Errors: calls return -1 and leave a message in pq_error(); after an
 * error the writer only accepts pq_abort().  Not thread-safe per writer.
 */
#ifndef DT_PARQUET_H
#define DT_PARQUET_H

#include <stddef.h>
#include <stdint.h>

enum pq_type {
	PQ_INT32,	/* physical INT32, logical INTEGER(32, signed) */
	PQ_INT64,	/* physical INT64, logical INTEGER(64, signed) */
	PQ_STRING,	/* BYTE_ARRAY, logical STRING (UTF8) */
};

struct pq_column {
	const char	*name;		/* copied */
	enum pq_type	type;
	int		nullable;	/* OPTIONAL instead of REQUIRED */
};

struct pq_opts {
	uint32_t	rowgroup_rows;	/* 0: 262144 */
	int		zstd_level;	/* 0: 1 */
	const char	*created_by;	/* 0: "dt" */
	int		plain_ints;	/* integers PLAIN, never DELTA_BINARY_PACKED
					 * (which Spark reads from 3.3 on) */
};

struct pq_writer;

/*
 * Create path (O_EXCL: an existing file is an error, never replaced) and
 * write the leading magic.  cols is copied.  opts may be NULL.  On NULL,
 * *err (if err is not NULL) gets a malloc'ed message the caller frees.
 */
struct pq_writer *pq_create(const char *path, const struct pq_column *cols,
			    unsigned ncols, const struct pq_opts *opts, char **err);

const char *pq_error(const struct pq_writer *w);

/*
 * Integers of one column, n of them.  v points at the first source
 * element; elements are `size` bytes (4: uint32_t, 8: uint64_t, read as
 * unsigned and stored two's complement into the column's width) and
 * `stride` elements apart (1 for an array, DTCAP_MAXARGS for one slot of
 * row-major args).  present: NULL (all present) or one byte per value,
 * 0 = NULL (the column must be nullable).
 */
int pq_put_int(struct pq_writer *w, unsigned col, const void *v, unsigned size,
	       size_t stride, const uint8_t *present, size_t n);
/*
 * n values of INT64 column col, all 0 but rows[i], which is vals[i]
 * (i < m; rows rising, each < n), none NULL: a mostly empty column (an
 * argument slot most events do not use) without building it densely
 * first.  A row group whose values of col all came this way is kept as
 * its m rows and values, and its dictionary costs m, not n.  rows and
 * vals are read during the call only.
 */
int pq_put_scatter64(struct pq_writer *w, unsigned col, size_t n, const uint32_t *rows,
		      const uint64_t *vals, size_t m);

/* One integer; isnull on a nullable column appends NULL. */
int pq_put_i64(struct pq_writer *w, unsigned col, int64_t v, int isnull);

/* One string of len bytes, bytes that are not UTF-8 replaced (dtu_utf8_fix); s NULL: NULL. */
int pq_put_str(struct pq_writer *w, unsigned col, const char *s, size_t len);

/*
 * A string column whose values come as ids into the caller's table
 * strs[0..n-1] (NUL-terminated; a NULL entry stands for SQL NULL).  The
 * table is not copied and must live until pq_close/pq_abort or the next
 * pq_set_dict on this column (only its strings that are not valid UTF-8
 * are, replaced as pq_put_str does).  pq_put_ids() then appends by id, which is
 * much cheaper than pq_put_str() (no hashing).  Ids >= n are an error.
 */
int pq_set_dict(struct pq_writer *w, unsigned col, const char *const *strs, size_t n);
int pq_put_ids(struct pq_writer *w, unsigned col, const uint32_t *ids, size_t n);

/* Every column has had the same number of values appended: end the rows
 * (and write a row group if it is full).  -1 if the counts differ. */
int pq_rows_done(struct pq_writer *w);

/* Rows written or buffered so far. */
uint64_t pq_rows(const struct pq_writer *w);

/*
 * Write the last row group and the footer, fsync nothing, close and free w
 * (also on error).  Returns 0 or -1 with *err set as for pq_create.  On
 * error the file is left for the caller to remove.
 */
int pq_close(struct pq_writer *w, char **err);
/* Free w and close the file without a footer (the caller removes it). */
void pq_abort(struct pq_writer *w);

#endif /* DT_PARQUET_H */
