/*
 * source.c - the source for a catalog: which facility the catalog was
 * opened on (dtp_open_source) picks it, so that no source knows another.
 */
#include "source.h"

struct dtsrc *
dtsrc_new(struct dtp_dev *dev, char *err, size_t errlen)
{
	if (dtp_kind(dev) == DTP_PERF)
		return dtsrc_perf_new(dev, err, errlen);
	return dtsrc_dt_new(dev, err, errlen);
}
