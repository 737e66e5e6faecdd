/* SPDX-License-Identifier: BSD-3-Clause */
/* The timing wheel of tp_wheel.h. */
#include <errno.h>
#include <stddef.h>

#include "tp_wheel.h"

int
tp_wheel_init(struct tp_wheel *w, struct tp_wheel_timer **slots, uint32_t nslots,
	      unsigned int shift, uint64_t now)
{
	if (slots == NULL || nslots == 0 || (nslots & (nslots - 1)) != 0 || shift > 32)
		return -EINVAL;
	for (uint32_t i = 0; i < nslots; i++)
		slots[i] = NULL;
	w->slot = slots;
	w->mask = nslots - 1;
	w->shift = shift;
	w->tick = now >> shift;
	w->armed = 0;
	return 0;
}

static void
unlink_timer(struct tp_wheel_timer *t)
{
	*t->pprev = t->next;
	if (t->next != NULL)
		t->next->pprev = t->pprev;
	t->next = NULL;
	t->pprev = NULL;
}

static void
push_front(struct tp_wheel_timer **head, struct tp_wheel_timer *t)
{
	t->next = *head;
	if (*head != NULL)
		(*head)->pprev = &t->next;
	*head = t;
	t->pprev = head;
}

void
tp_wheel_cancel(struct tp_wheel *w, struct tp_wheel_timer *t)
{
	if (t->pprev == NULL)
		return;
	unlink_timer(t);
	w->armed--;
}

void
tp_wheel_arm(struct tp_wheel *w, struct tp_wheel_timer *t, uint64_t deadline)
{
	uint64_t tick = deadline >> w->shift;

	tp_wheel_cancel(w, t);
	/* a tick already passed: the next expiry call visits w->tick first */
	if (tick < w->tick)
		tick = w->tick;
	t->deadline = deadline;
	push_front(&w->slot[tick & w->mask], t);
	w->armed++;
}

uint32_t
tp_wheel_expire(struct tp_wheel *w, uint64_t now, struct tp_wheel_list *out)
{
	uint64_t cur = now >> w->shift;
	struct tp_wheel_timer **tail = &out->head;
	uint64_t nticks;
	uint32_t taken = 0;

	out->head = NULL;
	if (w->armed == 0 || cur < w->tick) {
		if (cur > w->tick)
			w->tick = cur;
		return 0;
	}
	nticks = cur - w->tick + 1;
	if (nticks > w->mask + 1)
		nticks = w->mask + 1;	/* a whole revolution: every slot once */
	for (uint64_t i = 0; i < nticks && taken < w->armed; i++) {
		struct tp_wheel_timer *t = w->slot[(w->tick + i) & w->mask];

		while (t != NULL) {
			struct tp_wheel_timer *next = t->next;

			if (t->deadline <= now) {
				unlink_timer(t);
				/* append: earlier ticks first */
				t->pprev = tail;
				*tail = t;
				tail = &t->next;
				taken++;
			}
			t = next;
		}
	}
	/* tick cur may still hold timers due later within it */
	w->tick = cur;
	return taken;
}

struct tp_wheel_timer *
tp_wheel_pop(struct tp_wheel *w, struct tp_wheel_list *l)
{
	struct tp_wheel_timer *t = l->head;

	if (t != NULL) {
		unlink_timer(t);
		w->armed--;
	}
	return t;
}
