/*
 * timegrammar - the one grammar of durations and times (util.h
 * dtu_parse_duration, dtu_parse_time): a table of accepted and refused
 * strings with their exact values, then random strings over the grammar's
 * alphabet: never a crash (this runs under ASan/UBSan), never a value that
 * differs from an independent long-double reading of the same string by
 * more than its rounding.  Prints PASS/FAIL lines.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#include "../check.h"

/* The reference: strtold of the number times the unit, or -1 if the
 * string is not number + known unit. */
static int reference(const char *s, long double *ns)
{
	static const struct { const char *u; long double m; } units[] = {
		{ "ns", 1 }, { "us", 1e3L }, { "ms", 1e6L }, { "s", 1e9L }, { "sec", 1e9L },
		{ "m", 60e9L }, { "min", 60e9L }, { "h", 3600e9L }, { "", 1e9L },
	};
	const char *p = s;
	int digits = 0, dots = 0;

	while (isdigit((unsigned char)*p) || *p == '.') {
		digits += isdigit((unsigned char)*p) != 0;
		dots += *p == '.';
		p++;
	}
	if (!digits || dots > 1)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].u) == 0) {
			char num[64];
			size_t n = (size_t)(p - s);
			if (n >= sizeof(num))
				return -2;	/* too long to compare: skip */
			memcpy(num, s, n);
			num[n] = 0;
			*ns = strtold(num, NULL) * units[i].m;
			return 0;
		}
	}
	return -1;
}

int main(void)
{
	static const struct { const char *s; int rc; unsigned long long ns; int abs; } t[] = {
		{ "1", 0, 1000000000ULL, 0 }, { "1.5", 0, 1500000000ULL, 0 },
		{ ".5", 0, 500000000ULL, 0 }, { "2.", 0, 2000000000ULL, 0 },
		{ "200ms", 0, 200000000ULL, 0 }, { "10us", 0, 10000ULL, 0 },
		{ "7ns", 0, 7ULL, 0 }, { "1m", 0, 60000000000ULL, 0 },
		{ "1min", 0, 60000000000ULL, 0 }, { "2sec", 0, 2000000000ULL, 0 },
		{ ".5h", 0, 1800000000000ULL, 0 }, { "0", 0, 0, 0 },
		{ "1.0000000005", 0, 1000000001ULL, 0 },	/* rounds to the ns */
		{ "0.1234567891234", 0, 123456789ULL, 0 },
		/* a timestamp copied from SQL keeps every digit (no double) */
		{ "@86400123456789ns", 0, 86400123456789ULL, 1 },
		{ "@9007199254740993ns", 0, 9007199254740993ULL, 1 },
		{ "@18446744073709551615ns", 0, 18446744073709551615ULL, 1 },
		{ "@86400.25", 0, 86400250000000ULL, 1 },
		{ "@0", 0, 0, 1 },
		{ "18446744073.709551615", 0, 18446744073709551615ULL, 0 },
		{ "18446744073.709551616", -1, 0, 0 }, { "18446744074", -1, 0, 0 },
		{ "18446744073709551616ns", -1, 0, 0 }, { "99999999999h", -1, 0, 0 },
		{ "", -1, 0, 0 }, { ".", -1, 0, 0 }, { "@", -1, 0, 0 }, { "@@1", -1, 0, 0 },
		{ "-1", -1, 0, 0 }, { "+1", -1, 0, 0 }, { " 1", -1, 0, 0 }, { "1 ", -1, 0, 0 },
		{ "1 s", -1, 0, 0 }, { "1e3", -1, 0, 0 }, { "inf", -1, 0, 0 }, { "nan", -1, 0, 0 },
		{ "0x10", -1, 0, 0 }, { "1..2", -1, 0, 0 }, { "1.2.3", -1, 0, 0 },
		{ "1h30m", -1, 0, 0 }, { "1S", -1, 0, 0 }, { "1x", -1, 0, 0 }, { "s", -1, 0, 0 },
		{ "1@", -1, 0, 0 }, { "abs:1", -1, 0, 0 },
	};
	char why[256] = "";
	int ok = 1;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]) && ok; i++) {
		uint64_t ns = 12345;
		int abs = -1;
		int rc = dtu_parse_time(t[i].s, &ns, &abs);
		if (rc != t[i].rc || (rc == 0 && (ns != t[i].ns || abs != t[i].abs))) {
			snprintf(why, sizeof(why), "'%s': rc %d, %llu ns, abs %d; want rc %d, %llu, %d",
				 t[i].s, rc, (unsigned long long)ns, abs, t[i].rc, t[i].ns, t[i].abs);
			ok = 0;
		}
		/* a duration is a time without '@' */
		uint64_t d;
		if (ok && t[i].s[0] != '@' && dtu_parse_duration(t[i].s, &d) != rc) {
			snprintf(why, sizeof(why), "'%s': duration and time disagree", t[i].s);
			ok = 0;
		}
	}
	check("time-table", ok, why);

	/* Random strings over the grammar's alphabet and its neighbours. */
	static const char alpha[] = "0123456789..@smunhiecx-+ ";
	unsigned long long seed = 0x9e3779b97f4a7c15ULL;
	unsigned long accepted = 0, compared = 0;
	ok = 1;
	for (int i = 0; i < 300000 && ok; i++) {
		char s[24];
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		int len = (int)(seed >> 59) % 14;
		for (int k = 0; k < len; k++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			s[k] = alpha[(seed >> 33) % (sizeof(alpha) - 1)];
		}
		s[len] = 0;
		uint64_t ns;
		int abs;
		int rc = dtu_parse_time(s, &ns, &abs);
		long double ref;
		int rr = reference(s + (s[0] == '@'), &ref);
		if (rr == -2)
			continue;
		if ((rc == 0) != (rr == 0 && ref < 18446744073709551615.0L)) {
			/* at the overflow boundary the reference cannot decide */
			if (rr == 0 && fabsl(ref - 18446744073709551615.0L) < 4096)
				continue;
			snprintf(why, sizeof(why), "'%s': parser rc %d, reference %d (%Lg)", s, rc, rr,
				 rr == 0 ? ref : 0.0L);
			ok = 0;
			break;
		}
		if (rc)
			continue;
		accepted++;
		if (ref < 1e15L) {
			compared++;
			if (fabsl((long double)ns - ref) > 1.0L) {
				snprintf(why, sizeof(why), "'%s': %llu ns, reference %.3Lf", s,
					 (unsigned long long)ns, ref);
				ok = 0;
			}
		}
	}
	if (ok && (accepted < 1000 || compared < 1000)) {
		snprintf(why, sizeof(why), "only %lu accepted, %lu compared: the fuzz is too weak",
			 accepted, compared);
		ok = 0;
	}
	check("time-fuzz", ok, why);
	return check_status();
}
