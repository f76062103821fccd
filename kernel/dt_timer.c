// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * dt_timer.c - profile:hz:97 (every CPU) and interval:hz:1 (one CPU).
 *
 * Like perf's cpu-clock: hard (hardirq) hrtimers pinned to their CPU, one
 * per CPU per enabled pcb, so that each descriptor gets its own period.
 * A pinned hrtimer binds to the CPU that starts it: a profile pcb is a CPU
 * hotplug instance, whose online callback runs on each CPU (those online
 * when it is armed, and each that comes online later) and starts that
 * CPU's timer there, and whose offline callback cancels it on a CPU going
 * down (so it never migrates and samples a second CPU twice).
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
	struct hlist_node tp_node;	/* [I] profile: hotplug instance */
	unsigned int	 tp_n;		/* [I] */
	struct dt_ptimer tp_t[];	/* [I] indexed by CPU (profile) */
};

static struct dt_probe *dt_profile, *dt_interval;
static int dt_timer_hp = -1;	/* [I] the hotplug state, or < 0 */

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
		/*
		 * This tick and every one until the window ends are missed.
		 * Forward from the timer base's own now by what is left of the
		 * window (never mix clocks in an expiry).
		 */
		ovr = hrtimer_forward(t, ktime_add_ns(hrtimer_cb_get_time(t),
						      *ws + DT_TWIN_NS - t0),
				      period);
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

/* Runs on cpu itself (the hotplug thread of an AP state). */
static int dt_timer_cpu_online(unsigned int cpu, struct hlist_node *node)
{
	struct dt_tpriv *tp = hlist_entry(node, struct dt_tpriv, tp_node);
	struct dt_ptimer *pt = &tp->tp_t[cpu];

	if (WARN_ON_ONCE(cpu != raw_smp_processor_id()))
		return 0;
	hrtimer_start(&pt->pt_timer, ns_to_ktime(pt->pt_pcb->pcb_period),
		      HRTIMER_MODE_REL_PINNED_HARD);
	pt->pt_started = true;
	return 0;
}

static int dt_timer_cpu_offline(unsigned int cpu, struct hlist_node *node)
{
	struct dt_tpriv *tp = hlist_entry(node, struct dt_tpriv, tp_node);
	struct dt_ptimer *pt = &tp->tp_t[cpu];

	if (pt->pt_started) {
		hrtimer_cancel(&pt->pt_timer);
		pt->pt_started = false;
	}
	return 0;
}

static void dt_timer_disarm(struct dt_pcb *pcb)
{
	struct dt_tpriv *tp = pcb->pcb_priv;
	unsigned int i;

	if (tp == NULL)
		return;
	if (pcb->pcb_probe == dt_profile)
		cpuhp_state_remove_instance(dt_timer_hp, &tp->tp_node);
	for (i = 0; i < tp->tp_n; i++)
		if (tp->tp_t[i].pt_started)
			hrtimer_cancel(&tp->tp_t[i].pt_timer);
	kfree(tp);
	pcb->pcb_priv = NULL;
}

static int dt_timer_arm(struct dt_pcb *pcb)
{
	bool all = pcb->pcb_probe == dt_profile;
	unsigned int n = all ? nr_cpu_ids : 1, i;
	struct dt_tpriv *tp;
	int error;

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
	if (all) {
		/* starts the timer of every online CPU, on that CPU */
		error = cpuhp_state_add_instance(dt_timer_hp, &tp->tp_node);
		if (error) {
			kfree(tp);
			pcb->pcb_priv = NULL;
		}
		return error;
	}
	/* interval fires on whichever CPU it started on, and migrates */
	hrtimer_start(&tp->tp_t[0].pt_timer, ns_to_ktime(pcb->pcb_period),
		      HRTIMER_MODE_REL_HARD);
	tp->tp_t[0].pt_started = true;
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

	error = cpuhp_setup_state_multi(CPUHP_AP_ONLINE_DYN, "dt/timer:online",
					dt_timer_cpu_online,
					dt_timer_cpu_offline);
	if (error < 0)
		return error;
	dt_timer_hp = error;

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

/* no pcb is armed: every instance is gone */
void dt_timer_exit(void)
{
	if (dt_timer_hp >= 0)
		cpuhp_remove_multi_state(dt_timer_hp);
	dt_timer_hp = -1;
}
