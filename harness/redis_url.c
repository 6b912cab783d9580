/* redis_url.c -- parses the --redis URL: redis://[[user]:password@]host[:port][/db]
 *
 * The form follows the provisional IANA "redis" URI scheme that redis-cli
 * -u and most clients accept (https://www.iana.org/assignments/uri-schemes/
 * prov/redis): user and password are percent-decoded, the host may be an
 * IPv6 literal in brackets, the port defaults to 6379 and the path is the
 * database number (default 0).
 *
 * The password is a secret, and an unescaped one blurs the parts of the
 * URL: with a ':' in it, what looks like the user name is a piece of the
 * password; with a '/', what looks like the path is.  So the userinfo ends
 * at the last '@' of the whole URL (a host, port or db never holds one),
 * no message written here quotes any text of the URL, and the redacted
 * form masks the whole userinfo, the user name too.
 * dq_redis_url_redacted() gives the form to print.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse.h"
#include "redis_url.h"

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decodes [s, s+n) into out (outlen bytes).  Returns 0, or -1 on a
 * bad %XX escape, a NUL byte or when it does not fit. */
static int pct_decode(const char *s, size_t n, char *out, size_t outlen)
{
    size_t j = 0;

    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)s[i];
        if (c == '%') {
            int h, l;
            if (i + 2 >= n)
                return -1;
            h = hexval((unsigned char)s[i + 1]);
            l = hexval((unsigned char)s[i + 2]);
            if (h < 0 || l < 0 || (h == 0 && l == 0))
                return -1;
            c = h * 16 + l;
            i += 2;
        }
        if (j + 1 >= outlen)
            return -1;
        out[j++] = (char)c;
    }
    out[j] = '\0';
    return 0;
}

/* The userinfo [user]:password, up to the last '@' of the URL: the host,
 * port and db never hold one, a password may hold '/', ':' and '@'.
 * Moves *p past it.  Returns 0, or -1 with err (never quoting it). */
static int parse_userinfo(const char **p, dq_redis_target *t, char *err,
                          size_t errlen)
{
    const char *at = strrchr(*p, '@'), *colon;

    if (at == NULL)
        return 0;
    colon = memchr(*p, ':', (size_t)(at - *p));
    if (colon == NULL) {
        snprintf(err, errlen, "--redis: the part before '@' must be "
                 "user:password or :password");
        return -1;
    }
    if (pct_decode(*p, (size_t)(colon - *p), t->user, sizeof t->user) != 0) {
        snprintf(err, errlen, "--redis: bad or too long user name "
                 "(percent-encode special characters)");
        return -1;
    }
    if (pct_decode(colon + 1, (size_t)(at - colon - 1), t->password,
                   sizeof t->password) != 0) {
        snprintf(err, errlen, "--redis: bad or too long password "
                 "(percent-encode special characters)");
        return -1;
    }
    if (t->password[0] == '\0') {
        snprintf(err, errlen, "--redis: empty password after ':'");
        return -1;
    }
    *p = at + 1;
    return 0;
}

/* The host: [v6] or up to ':' or '/'.  Moves *p past it. */
static int parse_host(const char **p, dq_redis_target *t, char *err,
                      size_t errlen)
{
    const char *slash = strchr(*p, '/'), *hostend;
    size_t n;

    if (**p != '[') {
        n = strcspn(*p, ":/");
        if (n == 0 || n >= sizeof t->host) {
            snprintf(err, errlen, "--redis: %s", n == 0 ? "missing host"
                                                      : "host name too long");
            return -1;
        }
        memcpy(t->host, *p, n);
        *p += n;
        return 0;
    }
    hostend = strchr(*p, ']');
    if (hostend == NULL || (slash != NULL && hostend > slash)) {
        snprintf(err, errlen, "--redis: unterminated '[' in host");
        return -1;
    }
    if ((size_t)(hostend - *p - 1) >= sizeof t->host || hostend == *p + 1) {
        snprintf(err, errlen, "--redis: bad IPv6 host");
        return -1;
    }
    memcpy(t->host, *p + 1, (size_t)(hostend - *p - 1));
    *p = hostend + 1;
    if (**p != '\0' && **p != ':' && **p != '/') {
        snprintf(err, errlen, "--redis: junk after ']' in host");
        return -1;
    }
    return 0;
}

/* [:port][/db] and nothing after. */
static int parse_port_db(const char *p, dq_redis_target *t, char *err,
                         size_t errlen)
{
    char num[32];
    int64_t v;
    size_t n;

    if (*p == ':') {
        ++p;
        n = strcspn(p, "/");
        memcpy(num, p, n < sizeof num ? n : sizeof num - 1);
        num[n < sizeof num ? n : sizeof num - 1] = '\0';
        if (n == 0 || n >= sizeof num ||
            dq_parse_i64("--redis port", num, 1, 65535, &v, err, errlen) != 0) {
            snprintf(err, errlen, "--redis: the port is not a number in "
                     "1..65535");
            return -1;
        }
        t->port = (int)v;
        p += n;
    }
    if (*p == '/') {
        p++;
        if (*p != '\0' &&
            dq_parse_i64("--redis db", p, 0, 1000000, &v, err, errlen) != 0) {
            snprintf(err, errlen, "--redis: the db after '/' is not a "
                     "number in 0..1000000");
            return -1;
        }
        if (*p != '\0')
            t->db = (int)v;
    } else if (*p != '\0') {
        snprintf(err, errlen, "--redis: unexpected text after the host");
        return -1;
    }
    return 0;
}

int dq_redis_url_parse(const char *url, dq_redis_target *t, char *err,
                       size_t errlen)
{
    static const char scheme[] = "redis://";
    const char *p;

    memset(t, 0, sizeof *t);
    t->port = 6379;
    if (url == NULL || *url == '\0') {
        snprintf(err, errlen, "--redis: missing value (expected "
                 "redis://[user:password@]host:port[/db])");
        return -1;
    }
    if (strncasecmp(url, "rediss://", 9) == 0) {
        snprintf(err, errlen, "--redis: rediss:// (TLS) is not supported: "
                 "hiredis 0.14 has no TLS (expected "
                 "redis://[user:password@]host:port[/db])");
        return -1;
    }
    if (strncmp(url, scheme, sizeof scheme - 1) != 0) {
        snprintf(err, errlen, "--redis: URL must start with redis:// "
                 "(expected redis://[user:password@]host:port[/db])");
        return -1;
    }
    p = url + sizeof scheme - 1;
    if (parse_userinfo(&p, t, err, errlen) != 0 ||
        parse_host(&p, t, err, errlen) != 0)
        return -1;
    return parse_port_db(p, t, err, errlen);
}

void dq_redis_url_redacted(const dq_redis_target *t, char *buf, size_t buflen)
{
    const char *lb = strchr(t->host, ':') ? "[" : "";
    const char *rb = strchr(t->host, ':') ? "]" : "";

    if (t->password[0] != '\0' || t->user[0] != '\0')
        snprintf(buf, buflen, "redis://***@%s%s%s:%d/%d", lb, t->host, rb,
                 t->port, t->db);
    else
        snprintf(buf, buflen, "redis://%s%s%s:%d/%d", lb, t->host, rb,
                 t->port, t->db);
}

/* The length of the userinfo to mask in the URL at u ("redis://" or
 * "rediss://" already matched, scheme_len bytes): sets *from to its first
 * byte.  The authority runs to the next blank; the userinfo to its last
 * '@' (a password may hold '/', ':' or '@' unescaped).  All of it is
 * masked, the user name too: with an unescaped ':' in a password, what
 * looks like the user name is a piece of the password. */
static size_t url_secret(const char *u, size_t scheme_len, const char **from)
{
    const char *a = u + scheme_len;
    size_t n = strcspn(a, " \t\r\n");
    const char *at = NULL;
    for (size_t i = 0; i < n; i++)
        if (a[i] == '@')
            at = a + i;
    if (at == NULL || at == a)
        return 0;
    *from = a;
    return (size_t)(at - a);
}

void dq_redact_redis_urls(const char *in, char *out, size_t outlen)
{
    if (outlen == 0)
        return;
    size_t o = 0;
    for (const char *p = in; *p && o + 1 < outlen;) {
        size_t sl = strncasecmp(p, "redis://", 8) == 0    ? 8
                    : strncasecmp(p, "rediss://", 9) == 0 ? 9 : 0;
        const char *from = NULL;
        size_t n = sl ? url_secret(p, sl, &from) : 0;
        if (n == 0 && sl == 0) {
            out[o++] = *p++;
            continue;
        }
        if (n == 0) {  /* a URL without a password: copy its scheme */
            for (size_t i = 0; i < sl && o + 1 < outlen; i++)
                out[o++] = *p++;
            continue;
        }
        while (p < from && o + 1 < outlen)
            out[o++] = *p++;
        for (const char *m = "***"; *m && o + 1 < outlen; m++)
            out[o++] = *m;
        p = from + n;
    }
    out[o] = '\0';
}
