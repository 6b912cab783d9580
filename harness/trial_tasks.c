/* trial_tasks.c -- what the tasks of a trial carry (trial.h, trial_int.h).
 *
 * Everything here is a pure function of the seed and the task's index, so
 * that a consumer in another process, a test or a later check can rebuild
 * a task's payload and delay: a producer enqueues task i as "t<i>" with
 * payload dq_trial_payload(seed, i) and due time now +
 * dq_trial_delay_ms(seed, i, min, max); a backlog task is "b<i>".
 * splitmix64 (Steele, Lea, Flood: "Fast splittable pseudorandom number
 * generators", OOPSLA 2014) mixes the seed and the index.
 */
#include <stdint.h>
#include <string.h>

#include "trial_int.h"

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void dq_trial_payload(uint64_t seed, int64_t index, unsigned char *buf,
                      size_t payload_len)
{
    static const unsigned char special[] = {0, '\n', ',', '\t', '\r', '"',
                                            '\\'};
    uint64_t s = seed ^ (0xD1B54A32D192ED03ULL * (uint64_t)(index + 1));
    uint64_t r = 0;

    for (size_t i = 0; i < payload_len; i++) {
        if (i % 8 == 0)
            r = splitmix64(&s);
        buf[i] = (unsigned char)(r >> (8 * (i % 8)));
    }
    for (size_t i = 0; i < payload_len && i < sizeof special; i++)
        buf[i] = special[i];
}

int64_t dq_trial_delay_ms(uint64_t seed, int64_t index, int64_t lo_ms,
                          int64_t hi_ms)
{
    uint64_t s = seed ^ (0xA24BAED4963EE407ULL * (uint64_t)(index + 1));
    uint64_t span = (uint64_t)(hi_ms - lo_ms) + 1;

    if (hi_ms <= lo_ms)
        return lo_ms;
    return lo_ms + (int64_t)(splitmix64(&s) % span);
}

/* The producers' ids, without snprintf's format parsing on the hot path. */
size_t dq_trial_format_id(char *buf, char prefix, int64_t v)
{
    char tmp[20];
    size_t n = 0, len = 0;
    uint64_t u = (uint64_t)v;

    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    buf[len++] = prefix;
    while (n > 0)
        buf[len++] = tmp[--n];
    buf[len] = '\0';
    return len;
}

int64_t dq_trial_id_index(const char *id, int64_t tasks)
{
    int64_t v = 0;

    if (id[0] != 't' || id[1] == '\0')
        return -1;
    for (const char *s = id + 1; *s; s++) {
        if (*s < '0' || *s > '9' || v > (INT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v < tasks ? v : -1;
}
