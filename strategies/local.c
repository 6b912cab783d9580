/* local.c -- dq_local, the process-local space where in-process strategies
 * (the heap) find the one object per queue name that all their handles
 * share.
 *
 * Why not a static global: tests and the harness run several independent
 * "processes" worth of queues in one address space (and Criterion re-execs
 * per test anyway); an explicit space passed in dq_config makes the sharing
 * visible and lets each trial start from nothing.
 *
 * How: a mutex over a singly linked list of {name, object, refcount,
 * destroy}.  Lookups are linear, which is fine for the handful of queues a
 * trial opens.  create() runs under the space's lock, so two handles
 * opening the same name at once get the same object; create must not call
 * back into the same dq_local.  destroy() runs outside the lock on the last
 * put.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dq.h"

typedef struct local_entry {
    struct local_entry *next;
    char *name;
    void *obj;
    long refs;
    void (*destroy)(void *obj);
} local_entry;

struct dq_local {
    pthread_mutex_t mu;
    local_entry *head;
};

dq_local *dq_local_new(void)
{
    dq_local *l = calloc(1, sizeof *l);

    if (l == NULL)
        return NULL;
    if (pthread_mutex_init(&l->mu, NULL) != 0) {
        free(l);
        return NULL;
    }
    return l;
}

/* Frees the space.  Objects still referenced (a handle was not closed) are
 * destroyed here so that nothing leaks. */
void dq_local_free(dq_local *l)
{
    local_entry *e, *next;

    if (l == NULL)
        return;
    for (e = l->head; e != NULL; e = next) {
        next = e->next;
        if (e->destroy != NULL)
            e->destroy(e->obj);
        free(e->name);
        free(e);
    }
    pthread_mutex_destroy(&l->mu);
    free(l);
}

void *dq_local_get(dq_local *l, const char *name, void *(*create)(void *arg),
                   void *arg, void (*destroy)(void *obj))
{
    local_entry *e;
    void *obj = NULL;

    if (l == NULL || name == NULL || create == NULL)
        return NULL;
    pthread_mutex_lock(&l->mu);
    for (e = l->head; e != NULL; e = e->next) {
        if (strcmp(e->name, name) == 0) {
            e->refs++;
            obj = e->obj;
            goto unlock;
        }
    }
    e = calloc(1, sizeof *e);
    if (e == NULL)
        goto unlock;
    e->name = strdup(name);
    if (e->name == NULL)
        goto free_entry;
    e->obj = create(arg);
    if (e->obj == NULL)
        goto free_name;
    e->refs = 1;
    e->destroy = destroy;
    e->next = l->head;
    l->head = e;
    obj = e->obj;
    goto unlock;

free_name:
    free(e->name);
free_entry:
    free(e);
unlock:
    pthread_mutex_unlock(&l->mu);
    return obj;
}

void dq_local_put(dq_local *l, const char *name)
{
    local_entry **pp, *e = NULL;

    if (l == NULL || name == NULL)
        return;
    pthread_mutex_lock(&l->mu);
    for (pp = &l->head; *pp != NULL; pp = &(*pp)->next) {
        if (strcmp((*pp)->name, name) == 0) {
            if (--(*pp)->refs == 0) {
                e = *pp;
                *pp = e->next;
            }
            break;
        }
    }
    pthread_mutex_unlock(&l->mu);
    if (e != NULL) {
        if (e->destroy != NULL)
            e->destroy(e->obj);
        free(e->name);
        free(e);
    }
}
