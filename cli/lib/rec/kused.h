/*
 * kused.h - the part of /proc/kallsyms a capture needs.
 *
 * A kernel lists 100,000-200,000 symbols (3-6 MB of text, 0.6 MB in the
 * capture even in columns), while a recording's kernel stacks touch a few
 * hundred functions.  The recorder keeps the whole text in memory, marks
 * the function of every kernel pc it stores (and the next symbol, which
 * bounds it), and writes only the marked lines, again whenever new ones
 * were marked: a capture names every kernel frame it holds, offline, for
 * a small fraction of the bytes.  Readers take the last kallsyms chunk.
 */
#ifndef DT_KUSED_H
#define DT_KUSED_H

#include <stddef.h>
#include <stdint.h>

struct kused;

/*
 * Takes text (malloc'd /proc/kallsyms, len bytes) over: freed by
 * kused_free.  NULL when out of memory (text is then freed too).  Text
 * read without privilege (every address 0) is kept whole: nothing to
 * prune by, and readers recognise it.
 */
struct kused *kused_new(char *text, size_t len);
void kused_free(struct kused *k);

/* Mark the symbols of n kernel pcs.  Cheap: a binary search each. */
void kused_mark(struct kused *k, const uint64_t *pcs, unsigned n);

/*
 * The lines marked so far, in kallsyms order, when anything was marked
 * since the last call (or on the first call); NULL otherwise.  The text
 * belongs to k and is valid until the next call.
 */
const char *kused_text(struct kused *k, size_t *len);

#endif /* DT_KUSED_H */
