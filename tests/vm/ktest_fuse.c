/*
 * ktest_fuse.c - a FUSE file system of one read-only file, served from
 * memory by a thread, whose reads can be held back on demand: the
 * vm-kernel tests use it for a probed binary on a file system that is
 * slow to answer (dt.ko must not hold its global lock while the kernel
 * reads such a file).  Speaks the kernel protocol on /dev/fuse directly:
 * the guest has no libfuse.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ktest.h"

#define FZ_FILE_NODE	2

static int fz_fd = -1;
static const unsigned char *fz_data;
static size_t fz_len;
static char fz_name[64];
static pthread_t fz_thread;
static pthread_mutex_t fz_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fz_cv = PTHREAD_COND_INITIALIZER;
static int fz_hold;		/* [fz_mu] reads wait while set */
static int fz_held;		/* [fz_mu] reads waiting now */

static void fz_reply(uint64_t unique, int error, const void *p, size_t n)
{
	unsigned char b[sizeof(struct fuse_out_header) + 65536];
	struct fuse_out_header h = { .len = sizeof(h) + n, .error = -error,
	    .unique = unique };

	if (n > 65536)
		n = 65536;
	memcpy(b, &h, sizeof(h));
	if (n)
		memcpy(b + sizeof(h), p, n);
	(void)!write(fz_fd, b, sizeof(h) + n);
}

static void fz_attr(uint64_t node, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = node;
	a->nlink = 1;
	a->blksize = 4096;
	if (node == FUSE_ROOT_ID) {
		a->mode = S_IFDIR | 0755;
		a->nlink = 2;
	} else {
		a->mode = S_IFREG | 0755;
		a->size = fz_len;
		a->blocks = (fz_len + 511) / 512;
	}
}

static void *fz_serve(void *arg)
{
	static unsigned char b[1 << 20];

	(void)arg;
	for (;;) {
		ssize_t n = read(fz_fd, b, sizeof(b));
		struct fuse_in_header *in = (struct fuse_in_header *)b;
		void *a = b + sizeof(*in);

		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < (ssize_t)sizeof(*in))
			return NULL;	/* unmounted (ENODEV) or closed */
		switch (in->opcode) {
		case FUSE_INIT: {
			/* 6.1's struct: reply no more than it expects */
			struct fuse_init_out o;

			memset(&o, 0, sizeof(o));
			o.major = FUSE_KERNEL_VERSION;
			o.minor = 31;
			o.max_readahead = 0;
			o.max_write = 4096;
			fz_reply(in->unique, 0, &o, 64 < sizeof(o) ? 64 : sizeof(o));
			break;
		}
		case FUSE_LOOKUP: {
			struct fuse_entry_out o;

			if (in->nodeid != FUSE_ROOT_ID || strcmp((char *)a, fz_name)) {
				fz_reply(in->unique, ENOENT, NULL, 0);
				break;
			}
			memset(&o, 0, sizeof(o));
			o.nodeid = FZ_FILE_NODE;
			o.generation = 1;
			o.entry_valid = o.attr_valid = 3600;
			fz_attr(FZ_FILE_NODE, &o.attr);
			fz_reply(in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out o;

			memset(&o, 0, sizeof(o));
			o.attr_valid = 3600;
			fz_attr(in->nodeid, &o.attr);
			fz_reply(in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_OPEN:
		case FUSE_OPENDIR: {
			struct fuse_open_out o;

			memset(&o, 0, sizeof(o));
			o.fh = 1;
			fz_reply(in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_READ: {
			struct fuse_read_in *r = a;
			size_t off = r->offset, len = r->size;

			pthread_mutex_lock(&fz_mu);
			fz_held++;
			pthread_cond_broadcast(&fz_cv);
			while (fz_hold)
				pthread_cond_wait(&fz_cv, &fz_mu);
			fz_held--;
			pthread_mutex_unlock(&fz_mu);
			if (off > fz_len)
				off = fz_len;
			if (len > fz_len - off)
				len = fz_len - off;
			fz_reply(in->unique, 0, fz_data + off, len);
			break;
		}
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
		case FUSE_INTERRUPT:
			break;		/* no reply */
		case FUSE_FLUSH:
		case FUSE_RELEASE:
		case FUSE_RELEASEDIR:
		case FUSE_DESTROY:
			fz_reply(in->unique, 0, NULL, 0);
			break;
		default:
			fz_reply(in->unique, ENOSYS, NULL, 0);
			break;
		}
	}
}

int fz_start(const char *mnt, const char *name, const void *data, size_t len)
{
	char opts[128];

	fz_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fz_fd < 0)
		return -1;
	fz_data = data;
	fz_len = len;
	snprintf(fz_name, sizeof(fz_name), "%s", name);
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other",
	    fz_fd);
	mkdir(mnt, 0755);
	if (mount("dtfuse", mnt, "fuse", MS_NOSUID | MS_NODEV, opts) < 0) {
		close(fz_fd);
		fz_fd = -1;
		return -1;
	}
	return pthread_create(&fz_thread, NULL, fz_serve, NULL) == 0 ? 0 : -1;
}

void fz_hold_reads(int on)
{
	pthread_mutex_lock(&fz_mu);
	fz_hold = on;
	pthread_cond_broadcast(&fz_cv);
	pthread_mutex_unlock(&fz_mu);
}

int fz_wait_held(int ms)
{
	struct timespec ts;
	int r = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&fz_mu);
	while (fz_held == 0 && r == 0)
		r = pthread_cond_timedwait(&fz_cv, &fz_mu, &ts);
	r = fz_held != 0;
	pthread_mutex_unlock(&fz_mu);
	return r;
}

void fz_stop(const char *mnt)
{
	fz_hold_reads(0);
	umount2(mnt, MNT_DETACH);
	if (fz_fd >= 0) {
		/* its read of /dev/fuse is a cancellation point */
		pthread_cancel(fz_thread);
		pthread_join(fz_thread, NULL);
		close(fz_fd);
		fz_fd = -1;
	}
}
