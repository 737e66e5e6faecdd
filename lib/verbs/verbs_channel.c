/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_channel.c - completion channels (ibv_comp_channel and friends).
 *
 * The channel's fd is an eventfd in semaphore mode: the engine that fires
 * an armed CQ adds one to the CQ's ready events (tp_cq_take_event) and
 * then one to fd (lib/transport tp_cq.c).  droce_get_cq_event reads one
 * count, then takes one ready event from the channel's CQs, round robin,
 * so counts and events stay in step.  The channel keeps, under its lock,
 * the CQs on it with the events taken and acked for each, which
 * droce_destroy_cq waits to be equal (as ibverbs).  None of this is on the
 * data path: the engine's side is one eventfd write per arm.
 *
 * The provider's ops: create_channel (droced's client passes the eventfd
 * to droced, which wraps its copy in a channel of its own,
 * verbs_channel_adopt, so that its engine writes the count), cq_take_event
 * (the CQ's ready events), self_driven (whether to sleep on fd).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "droce.h"
#include "verbs_private.h"

struct channel_cq {
	struct droce_cq *cq;
	unsigned int taken;		/* events droce_get_cq_event returned */
	unsigned int acked;
};

struct verbs_channel {
	struct droce_comp_channel pub;
	pthread_mutex_t lock;
	pthread_cond_t acked;		/* an ack came */
	struct channel_cq *cqs;
	unsigned int ncq;
	unsigned int cap;
	unsigned int next;		/* first CQ looked at by the next take */
	/* the provider's: its ops (the context may be closed before the
	 * channel is destroyed) and its handle of the channel (0: none) */
	const struct droce_context_ops *ops;
	uint64_t handle;
};

static struct verbs_channel *
channel_of(struct droce_comp_channel *pub)
{
	return (struct verbs_channel *)pub;	/* pub is the first member */
}

/* A channel around the eventfd fd (which it then owns); NULL with errno. */
static struct verbs_channel *
channel_new(struct droce_context *context, int fd)
{
	struct verbs_channel *ch = calloc(1, sizeof(*ch));

	if (ch == NULL)
		return NULL;
	ch->pub.fd = fd;
	ch->pub.context = context;
	pthread_mutex_init(&ch->lock, NULL);
	pthread_cond_init(&ch->acked, NULL);
	return ch;
}

static void
channel_free(struct verbs_channel *ch)
{
	close(ch->pub.fd);
	pthread_cond_destroy(&ch->acked);
	pthread_mutex_destroy(&ch->lock);
	free(ch->cqs);
	free(ch);
}

struct droce_comp_channel *
verbs_channel_adopt(struct droce_context *context, int fd)
{
	struct verbs_channel *ch = channel_new(context, fd);

	return ch != NULL ? &ch->pub : NULL;
}

struct droce_comp_channel *
droce_create_comp_channel(struct droce_context *context)
{
	struct verbs_channel *ch;
	int fd, rc;

	if (context == NULL) {
		errno = EINVAL;
		return NULL;
	}
	fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (fd < 0)
		return NULL;
	ch = channel_new(context, fd);
	if (ch == NULL) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	ch->ops = context->ops;
	rc = ch->ops->create_channel(context, fd, &ch->handle);
	if (rc != 0) {
		channel_free(ch);
		errno = -rc;
		return NULL;
	}
	return &ch->pub;
}

int
droce_destroy_comp_channel(struct droce_comp_channel *channel)
{
	struct verbs_channel *ch;
	int rc;

	if (channel == NULL)
		return EINVAL;
	ch = channel_of(channel);
	if (channel->refcnt != 0)
		return EBUSY;
	/* not channel->context: it may be closed already */
	if (ch->handle != 0) {
		rc = -ch->ops->destroy_channel(ch->handle);
		if (rc != 0)
			return rc;
	}
	channel_free(ch);
	return 0;
}

uint64_t
verbs_channel_handle(const struct droce_comp_channel *channel)
{
	return channel != NULL ? ((const struct verbs_channel *)channel)->handle : 0;
}

int
verbs_channel_add(struct droce_comp_channel *channel, struct droce_cq *cq)
{
	struct verbs_channel *ch = channel_of(channel);
	int rc = 0;

	pthread_mutex_lock(&ch->lock);
	if (ch->ncq == ch->cap) {
		unsigned int cap = ch->cap != 0 ? 2 * ch->cap : 4;
		struct channel_cq *a = realloc(ch->cqs, cap * sizeof(*a));

		if (a == NULL) {
			rc = ENOMEM;
			goto out;
		}
		ch->cqs = a;
		ch->cap = cap;
	}
	ch->cqs[ch->ncq++] = (struct channel_cq){ .cq = cq };
	channel->refcnt++;
out:
	pthread_mutex_unlock(&ch->lock);
	return rc;
}

/* cq's slot in the channel (the lock held); NULL: not on it. */
static struct channel_cq *
channel_find(struct verbs_channel *ch, const struct droce_cq *cq)
{
	for (unsigned int i = 0; i < ch->ncq; i++)
		if (ch->cqs[i].cq == cq)
			return &ch->cqs[i];
	return NULL;
}

/* The events taken for c not yet acked.  More acks than events are
 * none: fio's rdma engine acks one per completion its handler polled, and
 * one event often brings two (a SEND's and the peer's reply's, published
 * together), so that it acks more than it took; rdma-core's destroy_cq
 * waits for equality and would wait forever, as ours did under load. */
static bool
events_held(const struct channel_cq *c)
{
	return (int)(c->taken - c->acked) > 0;
}

/* Once every event taken for cq was acked (as ibverbs' destroy_cq). */
void
verbs_channel_leave(struct droce_cq *cq)
{
	struct verbs_channel *ch = channel_of(cq->channel);
	struct channel_cq *c;

	pthread_mutex_lock(&ch->lock);
	while ((c = channel_find(ch, cq)) != NULL && events_held(c))
		pthread_cond_wait(&ch->acked, &ch->lock);
	if (c != NULL) {
		*c = ch->cqs[--ch->ncq];
		cq->channel->refcnt--;
	}
	pthread_mutex_unlock(&ch->lock);
}

void
droce_ack_cq_events(struct droce_cq *cq, unsigned int nevents)
{
	struct verbs_channel *ch;
	struct channel_cq *c;

	if (cq == NULL || cq->channel == NULL)
		return;
	ch = channel_of(cq->channel);
	pthread_mutex_lock(&ch->lock);
	c = channel_find(ch, cq);
	if (c != NULL)
		c->acked += nevents;
	pthread_cond_broadcast(&ch->acked);
	pthread_mutex_unlock(&ch->lock);
}

/* One ready event of the channel's CQs, round robin; NULL: none. */
static struct droce_cq *
channel_take(struct verbs_channel *ch)
{
	struct droce_cq *got = NULL;

	pthread_mutex_lock(&ch->lock);
	for (unsigned int k = 0; k < ch->ncq && got == NULL; k++) {
		unsigned int i = (ch->next + k) % ch->ncq;
		struct droce_cq *cq = ch->cqs[i].cq;

		if (cq->context->ops->cq_take_event(cq) > 0) {
			got = cq;
			ch->cqs[i].taken++;
			ch->next = i + 1;
		}
	}
	pthread_mutex_unlock(&ch->lock);
	return got;
}

/*
 * Run-to-completion alone: nobody else runs the engine, so run it here until
 * one of the channel's CQs fired (once only if fd is O_NONBLOCK).  NULL
 * with errno EAGAIN: none.
 */
static struct droce_cq *
channel_drive(struct verbs_channel *ch, bool nonblock)
{
	struct droce_cq *got;
	bool ran = false;

	while ((got = channel_take(ch)) == NULL) {
		if (nonblock && ran) {
			errno = EAGAIN;
			return NULL;
		}
		droce_progress(ch->pub.context);
		ran = true;
	}
	return got;
}

int
droce_get_cq_event(struct droce_comp_channel *channel, struct droce_cq **cq,
		   void **cq_context)
{
	struct droce_cq *got = NULL;
	uint64_t one;

	if (channel == NULL || cq == NULL || cq_context == NULL) {
		errno = EINVAL;
		return -1;
	}
	/* something else runs the engine (or the provider does not say) */
	if (channel->context->ops->self_driven(channel->context) != 0) {
		if (read(channel->fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
			return -1;	/* errno: EAGAIN (O_NONBLOCK), EINTR */
		/* the engine made the event ready before it wrote the count */
		got = channel_take(channel_of(channel));
	} else {
		bool nonblock = (fcntl(channel->fd, F_GETFL) & O_NONBLOCK) != 0;

		got = channel_drive(channel_of(channel), nonblock);
		if (got == NULL)
			return -1;
		/* its count, written by the engine round that fired it: no wait */
		if (read(channel->fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
			return -1;
	}
	*cq = got;
	*cq_context = got->cq_context;
	return 0;
}
