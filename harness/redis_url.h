/* redis_url.h -- a Redis server to use: parsed from --redis
 * redis://[user:password@]host:port[/db], printed without its secret. */
#ifndef DQ_REDIS_URL_H
#define DQ_REDIS_URL_H

#include <stddef.h>

typedef struct dq_redis_target {
    char host[256];
    int port;
    char user[128];      /* "" for none */
    char password[256];  /* "" for none; never printed */
    int db;
} dq_redis_target;

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

/* Copies in to out (outlen bytes, always NUL-terminated, cut short when it
 * does not fit) with the userinfo (user and password, up to the last '@'
 * before the next blank) of every redis:// or rediss:// URL in it replaced
 * by "***" (so "redis://alice:s3cret@h:1/3" becomes "redis:" "//"
 * "***@h:1/3").  For command lines and messages that are stored or
 * printed. */
void dq_redact_redis_urls(const char *in, char *out, size_t outlen);

#endif
