/*
 * dtcap_host.c - what the writer records about the machine it runs on
 * (kernel build id, CPU model, boot id) and the library's own version.
 * Only called for real recordings: opts.synthetic skips it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dtcap.h"
#include "dtcap_int.h"

#ifndef DT_VERSION
#define DT_VERSION "unknown"	/* built outside formats.mk */
#endif

const char *dtcap_version(void)
{
	return DT_VERSION;
}

/* Up to size-1 bytes of a small file; -1 if unreadable. */
static ssize_t slurp(const char *path, void *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	while (n < size - 1) {
		ssize_t k = read(fd, (char *)buf + n, size - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	((char *)buf)[n] = 0;
	return (ssize_t)n;
}

/* The GNU build-id note among the kernel's ELF notes, as hex. */
static void kernel_build_id(char *out, size_t outsz)
{
	uint8_t buf[4096];
	ssize_t n = slurp("/sys/kernel/notes", buf, sizeof(buf));
	for (size_t off = 0; n > 0 && off + 12 <= (size_t)n;) {
		uint32_t namesz, descsz, type;
		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		size_t name = off + 12, desc = name + ((namesz + 3) & ~3u);
		size_t next = desc + ((descsz + 3) & ~3u);
		if (namesz > 4096 || descsz > 4096 || next > (size_t)n)
			return;
		if (type == 3 && namesz == 4 && !memcmp(buf + name, "GNU", 4) &&
		    2 * descsz < outsz) {
			for (uint32_t i = 0; i < descsz; i++)
				snprintf(out + 2 * i, 3, "%02x", buf[desc + i]);
			return;
		}
		off = next;
	}
}

static void cpu_model(char *out, size_t outsz)
{
	static char buf[65536];
	if (slurp("/proc/cpuinfo", buf, sizeof(buf)) <= 0)
		return;
	/* x86 "model name", arm64 has none: "CPU part" is too cryptic, so
	 * fall back to the first "Hardware"/"cpu model"/"Processor" line */
	static const char *keys[] = {"model name", "cpu model", "Hardware", "Processor"};
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		for (char *l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
			size_t kl = strlen(keys[k]);
			if (strncmp(l, keys[k], kl) || (l[kl] != '\t' && l[kl] != ' ' && l[kl] != ':'))
				continue;
			char *v = strchr(l, ':');
			char *e = strchr(l, '\n');
			if (!v || (e && v > e))
				continue;
			v++;
			while (*v == ' ')
				v++;
			int len = e ? (int)(e - v) : (int)strlen(v);
			snprintf(out, outsz, "%.*s", len, v);
			return;
		}
	}
}

void dtc_host_machine(struct dtcap_host *h)
{
	if (!h->kernel_build_id[0])
		kernel_build_id(h->kernel_build_id, sizeof(h->kernel_build_id));
	if (!h->cpu_model[0])
		cpu_model(h->cpu_model, sizeof(h->cpu_model));
	if (!h->boot_id[0]) {
		char b[64];
		if (slurp("/proc/sys/kernel/random/boot_id", b, sizeof(b)) > 0) {
			b[strcspn(b, "\n")] = 0;
			snprintf(h->boot_id, sizeof(h->boot_id), "%.*s", (int)sizeof(h->boot_id) - 1, b);
		}
	}
}
