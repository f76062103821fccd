/* util_test - cli/lib/util.c: durations, sizes, suggestions, globs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define CHECK_PREFIX "util."
#include "../check.h"

int
main(void)
{
	static const struct { const char *s; int rc; unsigned long long ns; } d[] = {
		{ "10s", 0, 10000000000ULL }, { "500ms", 0, 500000000ULL },
		{ "2m", 0, 120000000000ULL }, { "1.5", 0, 1500000000ULL },
		{ "250us", 0, 250000ULL }, { "1h", 0, 3600000000000ULL },
		{ "100ns", 0, 100ULL }, { ".5", 0, 500000000ULL },
		{ "1e3", -1, 0 }, { "inf", -1, 0 }, { "", -1, 0 }, { "-1", -1, 0 },
		{ "1x", -1, 0 }, { "1..2", -1, 0 }, { " 1", -1, 0 }, { "99999999999h", -1, 0 },
	};
	char why[128], buf[32];
	int ok = 1;
	uint64_t v;

	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		uint64_t ns = 0;
		int rc = dtu_parse_duration(d[i].s, &ns);
		if (rc != d[i].rc || (rc == 0 && ns != d[i].ns)) {
			snprintf(why, sizeof(why), "'%s' gave %d/%llu", d[i].s, rc, (unsigned long long)ns);
			ok = 0;
			break;
		}
	}
	check("duration", ok, why);

	ok = dtu_parse_size("64k", &v) == 0 && v == 65536 &&
	     dtu_parse_size("1M", &v) == 0 && v == 1048576 &&
	     dtu_parse_size("2MiB", &v) == 0 && v == 2097152 &&
	     dtu_parse_size("4096", &v) == 0 && v == 4096 &&
	     dtu_parse_size("1x", &v) < 0 && dtu_parse_size("k", &v) < 0 &&
	     dtu_parse_size("99999999999999999999", &v) < 0;
	check("size", ok, "a size parsed wrong");

	ok = strcmp(dtu_human_size(1536, buf, sizeof(buf)), "1.50 KiB") == 0 &&
	     strcmp(dtu_human_size(12, buf, sizeof(buf)), "12 B") == 0 &&
	     strcmp(dtu_human_count(12345, buf, sizeof(buf)), "12.3k") == 0 &&
	     strcmp(dtu_human_duration(125000000000ULL, buf, sizeof(buf)), "2m05s") == 0;
	check("human", ok, buf);

	{
		const char *c[] = { "profile:hz:97", "syscall:readv:entry", "syscall:read:entry" };
		const char *o[3];
		size_t n = dtu_suggest("syscal:read:entry", c, 3, 0, o, 3);
		ok = n == 2 && strcmp(o[0], "syscall:read:entry") == 0 &&
		     strcmp(o[1], "syscall:readv:entry") == 0 &&
		     dtu_suggest("zzzzzzzz", c, 3, 0, o, 3) == 0;
		check("suggest", ok, "wrong suggestions");
	}
	check("edit-distance", dtu_edit_distance("kitten", "sitting") == 3 &&
	      dtu_edit_distance("", "abc") == 3, "levenshtein");
	check("edit-distance-swap", dtu_edit_distance("tpo", "top") == 1 &&
	      dtu_edit_distance("flmae", "flame") == 1 && dtu_edit_distance("ab", "ba") == 1 &&
	      dtu_edit_distance("ca", "abc") == 3 && dtu_edit_distance("abc", "abc") == 0,
	      "a swap of neighbours is one edit");
	check("glob", dtu_glob_match("syscall:*:entry", "syscall:read:entry") &&
	      !dtu_glob_match("syscall:*:entry", "syscall:read:return") &&
	      dtu_is_glob("a*") && !dtu_is_glob("abc"), "fnmatch");
	{
		size_t len = 0;
		char *t = dtu_read_file("/proc/self/status", &len);
		check("read-proc", t && len > 0 && strlen(t) == len && strstr(t, "Name:"), "no text");
		free(t);
	}
	{
		const unsigned char *u = (const unsigned char *)
			"a\xc3\xa9\xf0\x9f\x98\x80";
		ok = dtu_utf8_len(u, SIZE_MAX) == 1 &&
		     dtu_utf8_len(u + 1, SIZE_MAX) == 2 &&
		     dtu_utf8_len(u + 3, SIZE_MAX) == 4 &&
		     dtu_utf8_len(u + 1, 1) == 0 &&		/* cut short */
		     dtu_utf8_len(u, 0) == 0 &&
		     dtu_utf8_len((const unsigned char *)"\xe0\x80\x80", 3) == 0 &&	/* overlong */
		     dtu_utf8_len((const unsigned char *)"\xed\xa0\x80", 3) == 0 &&	/* surrogate */
		     dtu_utf8_len((const unsigned char *)"\xf4\x90\x80\x80", 4) == 0 &&	/* > U+10FFFF */
		     dtu_utf8_len((const unsigned char *)"\xff", 1) == 0 &&
		     dtu_utf8_len((const unsigned char *)"\xc3", SIZE_MAX) == 0;	/* NUL ends it */
		check("utf8", ok, "a UTF-8 sequence judged wrong");
	}
	{
		/* the JSON string writer of stats --json and the Chrome export */
		char *js = NULL;
		size_t jl = 0;
		FILE *m = open_memstream(&js, &jl);
		if (m) {
			dtu_json_str(m, "a\"b\\c\nd\te\x01" "f\xff" "g\xc3\xa9" "h\xc3");
			dtu_json_str(m, NULL);
			fclose(m);
		}
		const char *want = "\"a\\\"b\\\\c\\nd\\te\\u0001f\\ufffdg\xc3\xa9h\\ufffd\"\"\"";
		check("json_str", js && strcmp(js, want) == 0, js ? js : "open_memstream failed");
		free(js);
	}
	{
		/* the one replacement rule of every writer (issue 23 item 9) */
		char *buf = NULL;
		size_t cap = 0, ol = 0;
		const char *ok = "sauvegarde-don\xc3\xa9";
		const char *o = dtu_utf8_fix(ok, strlen(ok), &ol, &buf, &cap);
		check("utf8_fix_valid_uncopied", o == ok && ol == strlen(ok), "valid text was copied");
		const char cut[] = "sauvegarde-don\xc3";
		o = dtu_utf8_fix(cut, sizeof(cut) - 1, &ol, &buf, &cap);
		check("utf8_fix_cut", o && ol == 17 && !memcmp(o, "sauvegarde-don\xef\xbf\xbd", 18),
		      o ? o : "NULL");
		const char mix[] = "\xff" "a\xe2\x82" "\xf0\x9f\x98\x80" "\xed\xa0\x80";
		o = dtu_utf8_fix(mix, sizeof(mix) - 1, &ol, &buf, &cap);
		const char mixw[] = "\xef\xbf\xbd" "a\xef\xbf\xbd\xef\xbf\xbd" "\xf0\x9f\x98\x80"
				    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd";
		check("utf8_fix_mixed", o && ol == sizeof(mixw) - 1 && !memcmp(o, mixw, ol),
		      o ? o : "NULL");
		free(buf);
	}
	return 0;
}
