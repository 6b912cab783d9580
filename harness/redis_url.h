/* redis_url.h -- parses --redis redis://[user:password@]host:port[/db]. */
#ifndef DQ_REDIS_URL_H
#define DQ_REDIS_URL_H

#include <stddef.h>
#include "trial.h"

/* Parses url into *t (port defaults to 6379, db to 0); the userinfo runs
 * to the last '@' of url.  Returns 0, or -1 with a one-line message in err
 * naming what is wrong, which never quotes any text of url (a piece of an
 * unescaped password could sit anywhere in it). */
int dq_redis_url_parse(const char *url, dq_redis_target *t, char *err,
                       size_t errlen);

/* Writes the url with its userinfo replaced by three asterisks
 * ("redis:" "//" "***@host:port/db"), or "redis://host:port/db" when it
 * has none, for messages and logs. */
void dq_redis_url_redacted(const dq_redis_target *t, char *buf, size_t buflen);

#endif
