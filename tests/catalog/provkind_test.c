/*
 * provkind_test.c - the provider kinds' table (cli/lib/rec/provkind.c):
 * every kind found by its name and its entry indexed by it, the names the
 * kernel and the catalog use, unknown and near-miss names, and a provider
 * field filled to DT_PROVLEN with no NUL (the kernel's field is fixed
 * size) getting no kind.
 * Prints PASS/FAIL lines (tests/check.h).
 */
#define CHECK_PREFIX "provkind."
#include "../check.h"

#include <stdlib.h>
#include <string.h>

#include "dt_abi.h"
#include "provkind.h"

int
main(void)
{
	static const struct { const char *name; enum dtp_kind k; unsigned flags; } want[] = {
		{ "profile", DTPK_PROFILE, DTPK_TIMER },
		{ "interval", DTPK_INTERVAL, DTPK_TIMER },
		{ "syscall", DTPK_SYSCALL, 0 },
		{ "tracepoint", DTPK_TRACEPOINT, 0 },
		{ "kprobe", DTPK_KPROBE, DTPK_ONDEMAND },
		{ "uprobe", DTPK_UPROBE, DTPK_USER | DTPK_ONDEMAND },
		{ "usdt", DTPK_USDT, DTPK_USER | DTPK_ONDEMAND },
		{ "proc", DTPK_PROC, 0 },
	};
	size_t bad = 0;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char name[64];
		const struct dtp_kind_info *ki = dtp_kind_info(want[i].k);

		snprintf(name, sizeof(name), "kind-%s", want[i].name);
		checkf(name, dtp_kind_of(want[i].name) == want[i].k && ki->kind == want[i].k &&
		       strcmp(dtp_kind_name(want[i].k), want[i].name) == 0 &&
		       dtp_kind_flags(want[i].k) == want[i].flags && ki->what && ki->what[0],
		       "kind %d, entry %d \"%s\", flags %#x", (int)dtp_kind_of(want[i].name),
		       (int)ki->kind, ki->name, dtp_kind_flags(want[i].k));
	}
	/* every entry at its kind's index, the catch-all included */
	for (int k = DTPK_OTHER; k <= DTPK_PROC; k++)
		bad += dtp_kind_info((enum dtp_kind)k)->kind != (enum dtp_kind)k;
	checkf("indexed-by-kind", bad == 0, "%zu entries out of place", bad);
	check("other-out-of-range", dtp_kind_info((enum dtp_kind)1000)->kind == DTPK_OTHER,
	      "a kind past the table is not the catch-all");

	static const char *const unknown[] = { "", "kprobes", "kprob", "Kprobe", "syscall ",
					       "sched", "fbt" };
	bad = 0;
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
		bad += dtp_kind_of(unknown[i]) != DTPK_OTHER;
	checkf("unknown-names", bad == 0, "%zu of the unknown names got a kind", bad);

	/* the kernel's field is DT_PROVLEN bytes: one filled with no NUL,
	 * in an allocation of exactly that size (ASan) */
	char *full = malloc(DT_PROVLEN);
	if (full == NULL)
		abort();
	memset(full, 'k', DT_PROVLEN);
	check("unterminated", dtp_kind_of(full) == DTPK_OTHER, "a full field got a kind");
	memcpy(full, "tracepoint", 10);
	memset(full + 10, 'x', DT_PROVLEN - 10);
	check("unterminated-prefix", dtp_kind_of(full) == DTPK_OTHER, "a field extending a name got a kind");
	free(full);
	return check_status();
}
