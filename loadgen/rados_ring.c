/* The librados closed loop's per-operation path, in C (built by loadgen/rados_ring_build.py).

   Python plans operations ahead, in batches, into a ring; each completion, on librados'
   finisher thread, records its result and submits the next planned operation at once,
   without taking the GIL. Python drains the results in batches and plans more. So no
   Python runs per operation on the path between a completion and the next submit, which
   is where a closed loop's client cost shows (issue 30).

   A slot that completes while nothing is planned waits, idle, for Python: the time slots
   spend so is the client's own queueing (fl_ring_starved_s), what a calibration reads to
   tell whether the generator was the limit. */

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rados/librados.h>

#define FL_WRITE 0
#define FL_READ 1
#define FL_DELETE 2

typedef struct fl_op {
    int kind;
    int ioctx;          /* index into the ring's I/O contexts */
    const char *name;   /* NUL-terminated; Python keeps it alive until the result is taken */
    char *buf;          /* write: the payload; read: where the data goes */
    size_t len;
    uint64_t tag;       /* Python's handle on the operation */
} fl_op;

typedef struct fl_done {
    uint64_t tag;
    int64_t ret;        /* bytes read (read), 0 (write, delete), or a negative errno */
    double issued;      /* CLOCK_MONOTONIC seconds, as Python's time.monotonic() */
    double done;
} fl_done;

struct fl_ring;

typedef struct fl_slot {
    struct fl_ring *ring;
    fl_op op;
    double issued;
    double idle_since;  /* > 0 while the slot waits for a planned operation */
} fl_slot;

typedef struct fl_ring {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    rados_ioctx_t *ioctx;
    int n_ioctx;
    fl_op *planned;     /* a circular queue */
    size_t plan_cap, plan_head, plan_count;
    fl_done *done;      /* results not yet taken by Python */
    size_t done_cap, done_count;
    fl_slot *slots;
    int n_slots;
    int *idle;          /* a stack of idle slots */
    int n_idle;
    fl_slot **starting; /* fl_ring_plan's scratch: the slots it starts */
    int in_flight;
    int running;
    int want_plans;     /* Python plans more: wake it when the planned run low */
    size_t wake_done, wake_planned;
    double starved_s;   /* slot-seconds spent idle while running */
    uint64_t lost;      /* results that found no room (never, if Python drains before it plans) */
} fl_ring;

static double fl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fl_complete(rados_completion_t c, void *arg);

/* Record a result; the lock is held. */
static void fl_record(fl_ring *r, const fl_slot *s, int64_t ret, double now)
{
    if (r->done_count == r->done_cap) {
        r->lost++;
        return;
    }
    fl_done *d = &r->done[r->done_count++];
    d->tag = s->op.tag;
    d->ret = ret;
    d->issued = s->issued;
    d->done = now;
}

/* Pop the next planned operation into a slot; the lock is held and plan_count > 0. */
static void fl_take_planned(fl_ring *r, fl_slot *s)
{
    s->op = r->planned[r->plan_head];
    r->plan_head = (r->plan_head + 1) % r->plan_cap;
    r->plan_count--;
    r->in_flight++;
}

/* Whether Python has work: results to take, plans to make, or nothing left in flight. */
static int fl_due(const fl_ring *r)
{
    return r->done_count >= r->wake_done || r->in_flight == 0
        || (r->want_plans && r->running && r->plan_count <= r->wake_planned);
}

static void fl_signal_if_due(fl_ring *r)
{
    if (fl_due(r))
        pthread_cond_signal(&r->wake);
}

/* A slot with nothing to do: it waits for a plan, which is the client's hold only while the
   ring runs. The lock is held. */
static void fl_park(fl_ring *r, fl_slot *s, double now)
{
    s->idle_since = r->running ? now : 0.0;
    r->idle[r->n_idle++] = (int)(s - r->slots);
}

/* What the idle slots have waited so far. The lock is held. */
static double fl_idle_s(const fl_ring *r, double now)
{
    double total = 0.0;
    for (int i = 0; i < r->n_idle; i++) {
        const fl_slot *s = &r->slots[r->idle[i]];
        if (s->idle_since > 0)
            total += now - s->idle_since;
    }
    return total;
}

/* Submit a slot's operation; the lock is not held. A submission librados refuses at once
   is a result, and its slot goes idle (Python's next plan wakes it): no recursion. */
static void fl_submit(fl_slot *s)
{
    fl_ring *r = s->ring;
    rados_completion_t c;
    int ret;
    s->issued = fl_now();
    ret = rados_aio_create_completion2(s, fl_complete, &c);
    if (ret == 0) {
        rados_ioctx_t io = r->ioctx[s->op.ioctx];
        if (s->op.kind == FL_WRITE)
            ret = rados_aio_write_full(io, s->op.name, c, s->op.buf, s->op.len);
        else if (s->op.kind == FL_READ)
            ret = rados_aio_read(io, s->op.name, c, s->op.buf, s->op.len, 0);
        else
            ret = rados_aio_remove(io, s->op.name, c);
        if (ret == 0)
            return;
        rados_aio_release(c);
    }
    pthread_mutex_lock(&r->lock);
    double now = fl_now();
    fl_record(r, s, ret < 0 ? ret : -EIO, now);
    r->in_flight--;
    fl_park(r, s, now);
    fl_signal_if_due(r);
    pthread_mutex_unlock(&r->lock);
}

static void fl_complete(rados_completion_t c, void *arg)
{
    fl_slot *s = arg;
    fl_ring *r = s->ring;
    int64_t ret = rados_aio_get_return_value(c);
    double now = fl_now();
    int next = 0;
    rados_aio_release(c);
    pthread_mutex_lock(&r->lock);
    fl_record(r, s, ret, now);
    r->in_flight--;
    if (r->running && r->plan_count > 0) {
        fl_take_planned(r, s);
        next = 1;
    } else {
        fl_park(r, s, now);
    }
    fl_signal_if_due(r);
    pthread_mutex_unlock(&r->lock);
    if (next)
        fl_submit(s);
}

fl_ring *fl_ring_new(rados_ioctx_t *ioctx, int n_ioctx, int n_slots, size_t plan_cap)
{
    fl_ring *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return NULL;
    r->ioctx = calloc((size_t)n_ioctx, sizeof(*r->ioctx));
    r->planned = calloc(plan_cap, sizeof(*r->planned));
    r->done_cap = plan_cap + (size_t)n_slots;  /* Python drains before it plans: enough */
    r->done = calloc(r->done_cap, sizeof(*r->done));
    r->slots = calloc((size_t)n_slots, sizeof(*r->slots));
    r->idle = calloc((size_t)n_slots, sizeof(*r->idle));
    r->starting = calloc((size_t)n_slots, sizeof(*r->starting));
    if (!r->ioctx || !r->planned || !r->done || !r->slots || !r->idle || !r->starting) {
        free(r->ioctx); free(r->planned); free(r->done); free(r->slots); free(r->idle);
        free(r->starting);
        free(r);
        return NULL;
    }
    memcpy(r->ioctx, ioctx, (size_t)n_ioctx * sizeof(*ioctx));
    r->n_ioctx = n_ioctx;
    r->plan_cap = plan_cap;
    r->n_slots = n_slots;
    r->wake_done = (size_t)n_slots > plan_cap / 2 ? (size_t)n_slots : plan_cap / 2;
    r->wake_planned = plan_cap / 2;
    for (int i = 0; i < n_slots; i++) {
        r->slots[i].ring = r;
        r->idle[r->n_idle++] = n_slots - 1 - i;
    }
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->wake, NULL);
    return r;
}

/* Start: slots idle from now on count as the client's queueing until given work. */
void fl_ring_start(fl_ring *r)
{
    pthread_mutex_lock(&r->lock);
    r->running = 1;
    double now = fl_now();
    for (int i = 0; i < r->n_idle; i++)
        r->slots[r->idle[i]].idle_since = now;
    pthread_mutex_unlock(&r->lock);
}

/* Queue up to n planned operations (as many as there is room for; the count is returned)
   and hand them to idle slots at once. */
size_t fl_ring_plan(fl_ring *r, const fl_op *ops, size_t n)
{
    fl_slot **start = r->starting;  /* only Python's one loop thread plans */
    size_t taken, starting = 0;
    pthread_mutex_lock(&r->lock);
    taken = r->plan_cap - r->plan_count;
    if (taken > n)
        taken = n;
    for (size_t i = 0; i < taken; i++)
        r->planned[(r->plan_head + r->plan_count + i) % r->plan_cap] = ops[i];
    r->plan_count += taken;
    double now = fl_now();
    while (r->running && r->n_idle > 0 && r->plan_count > 0) {
        fl_slot *s = &r->slots[r->idle[--r->n_idle]];
        if (s->idle_since > 0)
            r->starved_s += now - s->idle_since;
        s->idle_since = 0.0;
        fl_take_planned(r, s);
        start[starting++] = s;
    }
    pthread_mutex_unlock(&r->lock);
    for (size_t i = 0; i < starting; i++)
        fl_submit(start[i]);
    return taken;
}

/* Wait (the GIL released) until Python has work or `timeout_s` passes, then move up to
   `max` results into `out`; return how many. `want_plans`: whether a low planned count is
   work (not while Python drains). `*planned` gets the planned count left, `*in_flight` the
   operations in flight. */
size_t fl_ring_take(fl_ring *r, fl_done *out, size_t max, double timeout_s, int want_plans,
                    size_t *planned, int *in_flight)
{
    pthread_mutex_lock(&r->lock);
    r->want_plans = want_plans;
    if (timeout_s > 0 && !fl_due(r)) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        double at = (double)until.tv_sec + (double)until.tv_nsec / 1e9 + timeout_s;
        until.tv_sec = (time_t)at;
        until.tv_nsec = (long)((at - (double)until.tv_sec) * 1e9);
        while (!fl_due(r) && pthread_cond_timedwait(&r->wake, &r->lock, &until) == 0)
            ;
    }
    size_t n = r->done_count < max ? r->done_count : max;
    memcpy(out, r->done, n * sizeof(*out));
    memmove(r->done, r->done + n, (r->done_count - n) * sizeof(*out));
    r->done_count -= n;
    *planned = r->plan_count;
    *in_flight = r->in_flight;
    pthread_mutex_unlock(&r->lock);
    return n;
}

/* Stop submitting; what is planned stays unsubmitted (its tags are Python's to drop). */
void fl_ring_stop(fl_ring *r)
{
    pthread_mutex_lock(&r->lock);
    if (r->running) {
        r->starved_s += fl_idle_s(r, fl_now());
        for (int i = 0; i < r->n_idle; i++)
            r->slots[r->idle[i]].idle_since = 0.0;
    }
    r->running = 0;
    r->plan_count = 0;
    pthread_cond_broadcast(&r->wake);
    pthread_mutex_unlock(&r->lock);
}

/* Slot-seconds spent waiting for Python so far, the slots idle now included. */
double fl_ring_starved_s(fl_ring *r)
{
    pthread_mutex_lock(&r->lock);
    double total = r->starved_s + fl_idle_s(r, fl_now());
    pthread_mutex_unlock(&r->lock);
    return total;
}

uint64_t fl_ring_lost(fl_ring *r)
{
    pthread_mutex_lock(&r->lock);
    uint64_t lost = r->lost;
    pthread_mutex_unlock(&r->lock);
    return lost;
}

/* Only once nothing is in flight: a completion still to come would use freed memory. */
int fl_ring_free(fl_ring *r)
{
    pthread_mutex_lock(&r->lock);
    int busy = r->in_flight;
    pthread_mutex_unlock(&r->lock);
    if (busy)
        return busy;
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->wake);
    free(r->ioctx); free(r->planned); free(r->done); free(r->slots); free(r->idle);
    free(r->starting);
    free(r);
    return 0;
}
