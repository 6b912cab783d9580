/* registry.c -- the table of every strategy, looked up by name by the CLI,
 * the experiments and the tests.  Adding a strategy: write strategies/X.c
 * exporting one `const dq_strategy dq_strategy_X`, declare it here and add
 * it to the table. */
#include <string.h>

#include "dq.h"

extern const dq_strategy dq_strategy_naive;
extern const dq_strategy dq_strategy_naive_checked;
extern const dq_strategy dq_strategy_zpopmin;
extern const dq_strategy dq_strategy_lua;
extern const dq_strategy dq_strategy_lua_lease;
extern const dq_strategy dq_strategy_heap;
extern const dq_strategy dq_strategy_wheel;
extern const dq_strategy dq_strategy_expiry;
extern const dq_strategy dq_strategy_list;
extern const dq_strategy dq_strategy_list_reliable;
extern const dq_strategy dq_strategy_streams;

const dq_strategy *const dq_strategies[] = {
    &dq_strategy_naive,
    &dq_strategy_naive_checked,
    &dq_strategy_zpopmin,
    &dq_strategy_lua,
    &dq_strategy_lua_lease,
    &dq_strategy_heap,
    &dq_strategy_wheel,
    &dq_strategy_expiry,
    &dq_strategy_list,
    &dq_strategy_list_reliable,
    &dq_strategy_streams,
    NULL,
};

const dq_strategy *dq_strategy_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; dq_strategies[i] != NULL; i++)
        if (strcmp(dq_strategies[i]->name, name) == 0)
            return dq_strategies[i];
    return NULL;
}
