// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * dt_timer.c - profile:hz:97 (every CPU) and interval:hz:1 (one CPU).
 *
 * Like perf's cpu-clock: hard (hardirq) hrtimers pinned to their CPU, one
 * per CPU per enabled pcb, so that each descriptor gets its own period.
 * A pinned hrtimer binds to the CPU that starts it, hence the cross call.
 * CPUs that come online while recording get no timer (no hotplug hook).
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <asm/irq_regs.h>

#include "dt.h"

struct dt_ptimer {
	struct hrtimer	 pt_timer;	/* [I] */
	struct dt_pcb	*pt_pcb;	/* [I] */
	bool		 pt_started;	/* [g] */
};

struct dt_tpriv {
	unsigned int	 tp_n;		/* [I] */
	struct dt_ptimer tp_t[];	/* [I] indexed by CPU (profile) */
};

static struct dt_probe *dt_profile, *dt_interval;

/*
 * Throttle, like perf's perf_cpu_time_max_percent: the timer callbacks of
 * all descriptors on one CPU may spend at most a quarter of each 10 ms
 * window.  Past that, the timers sleep until the window ends and the ticks
 * they miss are counted as skipped.  Without it, short periods times many
 * descriptors (or a slow machine: stack walks under emulation) keep a CPU
 * in timer interrupts forever, a livelock.
 */
#define DT_TWIN_NS	(10 * NSEC_PER_MSEC)
#define DT_TBUDGET_NS	(DT_TWIN_NS / 4)

static DEFINE_PER_CPU(u64, dt_twin_start);	/* [c] hardirq only */
static DEFINE_PER_CPU(u64, dt_twin_spent);	/* [c] hardirq only */

static enum hrtimer_restart dt_timer_fire(struct hrtimer *t)
{
	struct dt_ptimer *pt = container_of(t, struct dt_ptimer, pt_timer);
	struct dt_pcb *pcb = pt->pt_pcb;
	ktime_t period = ns_to_ktime(pcb->pcb_period);
	u64 t0 = ktime_get_mono_fast_ns(), *ws, *sp, ovr;

	ws = this_cpu_ptr(&dt_twin_start);
	sp = this_cpu_ptr(&dt_twin_spent);
	if (t0 - *ws >= DT_TWIN_NS) {
		*ws = t0;
		*sp = 0;
	}
	if (*sp >= DT_TBUDGET_NS) {
		/* this tick and every one until the window ends are missed */
		ovr = hrtimer_forward(t, ns_to_ktime(*ws + DT_TWIN_NS), period);
		dt_skip(pcb, ovr);
		return HRTIMER_RESTART;
	}
	dt_fire(pcb->pcb_probe, pcb, get_irq_regs(), NULL, 0, 0);
	/* after the work: the next expiry is in the future, never behind */
	ovr = hrtimer_forward_now(t, period);
	if (ovr > 1)
		dt_skip(pcb, ovr - 1);
	*sp += ktime_get_mono_fast_ns() - t0;
	return HRTIMER_RESTART;
}

static void dt_timer_start_here(void *arg)
{
	struct dt_ptimer *pt = arg;

	hrtimer_start(&pt->pt_timer, ns_to_ktime(pt->pt_pcb->pcb_period),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

static void dt_timer_disarm(struct dt_pcb *pcb)
{
	struct dt_tpriv *tp = pcb->pcb_priv;
	unsigned int i;

	if (tp == NULL)
		return;
	for (i = 0; i < tp->tp_n; i++)
		if (tp->tp_t[i].pt_started)
			hrtimer_cancel(&tp->tp_t[i].pt_timer);
	kfree(tp);
	pcb->pcb_priv = NULL;
}

static int dt_timer_arm(struct dt_pcb *pcb)
{
	bool all = pcb->pcb_probe == dt_profile;
	unsigned int n = all ? nr_cpu_ids : 1, i, cpu;
	struct dt_tpriv *tp;

	tp = kzalloc(struct_size(tp, tp_t, n), GFP_KERNEL);
	if (tp == NULL)
		return -ENOMEM;
	tp->tp_n = n;
	for (i = 0; i < n; i++) {
		hrtimer_init(&tp->tp_t[i].pt_timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_HARD);
		tp->tp_t[i].pt_timer.function = dt_timer_fire;
		tp->tp_t[i].pt_pcb = pcb;
	}
	pcb->pcb_priv = tp;
	cpus_read_lock();
	if (all) {
		for_each_online_cpu(cpu) {
			if (smp_call_function_single(cpu, dt_timer_start_here,
						     &tp->tp_t[cpu], 1) == 0)
				tp->tp_t[cpu].pt_started = true;
		}
	} else {
		/* interval fires on whichever CPU it started on */
		hrtimer_start(&tp->tp_t[0].pt_timer,
			      ns_to_ktime(pcb->pcb_period),
			      HRTIMER_MODE_REL_HARD);
		tp->tp_t[0].pt_started = true;
	}
	cpus_read_unlock();
	return 0;
}

static const struct dt_provider dt_prov_profile = {
	.dtpv_name	= "profile",
	.dtpv_arm	= dt_timer_arm,
	.dtpv_disarm	= dt_timer_disarm,
};

static const struct dt_provider dt_prov_interval = {
	.dtpv_name	= "interval",
	.dtpv_arm	= dt_timer_arm,
	.dtpv_disarm	= dt_timer_disarm,
};

int dt_timer_init(void)
{
	int error;

	dt_profile = dt_probe_new(&dt_prov_profile, "hz", "97", 0, 0, NULL,
				  DT_PF_TIMER);
	if (dt_profile == NULL)
		return -ENOMEM;
	dt_profile->dp_defperiod = NSEC_PER_SEC / 97;
	error = dt_probe_insert(dt_profile);
	if (error) {
		kfree(dt_profile);
		return error;
	}
	dt_interval = dt_probe_new(&dt_prov_interval, "hz", "1", 0, 0, NULL,
				   DT_PF_TIMER);
	if (dt_interval == NULL)
		return -ENOMEM;
	dt_interval->dp_defperiod = NSEC_PER_SEC;
	error = dt_probe_insert(dt_interval);
	if (error)
		kfree(dt_interval);
	return error;
}
