/* registry.h -- the list of every strategy, once.
 *
 * DQ_STRATEGY_MAP(X) calls X(ident) once per strategy, in the order dqlab
 * lists and runs them; ident is the strategy's name as a C identifier
 * ('-' written '_'), and strategies/<ident>.c exports exactly one
 * `const dq_strategy dq_strategy_<ident>`.  Everything that needs every
 * strategy expands this list: the table of registry.c (dq_strategies[],
 * dq_strategy_find) and the conformance suite (tests/test_conformance.c,
 * one named test per check and strategy).  What a strategy is and does
 * (its name, guarantees, options, prose) lives in its own file only.
 *
 * Adding a strategy: write strategies/<ident>.c and add one X line here.
 */
#ifndef DQ_REGISTRY_H
#define DQ_REGISTRY_H

#define DQ_STRATEGY_MAP(X)                                                    \
    X(naive)                                                                  \
    X(naive_checked)                                                          \
    X(zpopmin)                                                                \
    X(lua)                                                                    \
    X(lua_lease)                                                              \
    X(heap)                                                                   \
    X(wheel)                                                                  \
    X(expiry)                                                                 \
    X(list)                                                                   \
    X(list_reliable)                                                          \
    X(streams)

#endif
