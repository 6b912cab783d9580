/* registry.c -- the table of every strategy, looked up by name by the CLI,
 * the experiments and the tests.  The list itself is DQ_STRATEGY_MAP in
 * registry.h (one line per strategy); this file only expands it. */
#include <string.h>

#include "dq.h"
#include "registry.h"

#define DQ_STRATEGY_EXTERN(ident) extern const dq_strategy dq_strategy_##ident;
DQ_STRATEGY_MAP(DQ_STRATEGY_EXTERN)
#undef DQ_STRATEGY_EXTERN

const dq_strategy *const dq_strategies[] = {
#define DQ_STRATEGY_ENTRY(ident) &dq_strategy_##ident,
    DQ_STRATEGY_MAP(DQ_STRATEGY_ENTRY)
#undef DQ_STRATEGY_ENTRY
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
