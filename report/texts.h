/* texts.h -- every prose template of the report (text.h), one line each:
 * X(group, name, "the keys its section gives").  The text is in
 * report/text/<group>.md after "<!-- name -->"; the code names it
 * DQ_T_<group>_<name>.
 */
#ifndef DQ_TEXTS_H
#define DQ_TEXTS_H

#define DQ_TEXTS(X)                                                          \
    X(report, head, "now root n s")                                          \
    X(generic, params, "strategies consumers producers tasks delay_ms "        \
      "work_us repeats s seed quick")                                        \
    X(generic, params_idle, "strategies consumers idle_ms claim_timeout_ms "   \
      "repeats s seed quick")                                                \
    X(generic, quick, "")                                                    \
    X(generic, backlog, "backlog delay_ms grace_ms")                         \
    X(generic, run, "command trials s date")                                 \
    X(generic, claims, "claims")                                             \
    X(generic, cmds_note, "")                                                \
    X(generic, what_happened, "")                                            \
    X(generic, dups, "strategy n s trials of")                               \
    X(generic, no_dups, "list")                                              \
    X(generic, no_dups_all, "list")                                          \
    X(generic, races, "list")                                                \
    X(generic, race, "strategy races per")                                   \
    X(generic, no_loss, "")                                                  \
    X(generic, lost, "strategy n s trials ts")                               \
    X(generic, early, "strategy n s")                                        \
    X(generic, tp_range, "min max list")                                     \
    X(generic, tp_item, "strategy lo hi")                                    \
    X(generic, at_rate, "cap tasks window list")                             \
    X(generic, p99, "p99 strategy consumers s")                              \
    X(generic, incomplete, "done planned")                                   \
    X(generic, raw, "dir files")                                             \
    X(generic, environment, "")                                              \
    X(generic, probes, "")                                                   \
    X(generic, probes_none, "root")                                          \
    X(generic, probes_intro, "version")                                      \
    X(generic, version_unknown, "")                                          \
    X(generic, claims_head, "")                                              \
    X(generic, claim_item, "id verdict text evidence")                       \
    X(generic, strategies, "")                                               \
    X(generic, traits, "list")                                               \
    X(generic, no_traits, "")                                                \
    X(generic, needs_redis, "version")                                       \
    X(generic, no_options, "")                                               \
    X(idle, polling, "ms")                                                   \
    X(idle, no_redis, "")                                                    \
    X(idle, blocking, "")                                                    \
    X(idle, note, "idle ct lo hi why")                                       \
    X(idle, why_setup, "")                                                   \
    X(idle, why_script, "")                                                  \
    X(idle, extremes, "hi hi_cmds hi_cpu lo lo_cmds lo_cpu")                 \
    X(idle, per_consumer, "polling blocking")                                \
    X(idle, interval, "strategy pa ca ua pb cb ub")                          \
    X(idle, cpu_against, "")                                                 \
    X(idle, floor, "cpu")                                                    \
    X(lateness, undelivered, "")                                             \
    X(lateness, pct_note, "")                                                \
    X(lateness, no_verdict, "n s")                                           \
    X(lateness, rate, "tasks range per_s")                                   \
    X(lateness, order, "list")                                               \
    X(lateness, polling, "name ms p50 p99 max verdict")                      \
    X(lateness, within, "")                                                  \
    X(lateness, p99_within, "max")                                           \
    X(lateness, p99_beyond, "p99 max")                                       \
    X(lateness, all_on_time, "")                                             \
    X(lateness, not_all, "lost s early")                                     \
    X(lateness, censored, "window")                                          \
    X(lateness, at_backlog, "n p50 pct")                                     \
    X(lateness, at_backlog_few, "n pct window")                              \
    X(lateness, extrapolated, "s")                                           \
    X(lateness, survivors, "")                                               \
    X(perf, head, "")                                                        \
    X(perf, none, "root")                                                    \
    X(perf, private, "")                                                     \
    X(perf, intro, "command level cores host redis where date failed")       \
    X(perf, failed, "")                                                      \
    X(perf, not_measured, "")                                                \
    X(perf, ceiling, "")                                                     \
    X(perf, ceiling_none, "")                                                \
    X(perf, by_dqlab, "")                                                    \
    X(perf, by_rb, "")                                                       \
    X(perf, ceiling_unmeasured, "")                                          \
    X(perf, ceiling_note, "zadd rb")                                         \
    X(perf, no_rb, "")                                                       \
    X(perf, throughput, "")                                                  \
    X(perf, throughput_intro, "tasks factor producers enqueue repeats "      \
      "variants")                                                            \
    X(perf, throughput_note, "")                                             \
    X(perf, fastest, "strategy tps consumers")                               \
    X(perf, of_zadd, "pct")                                                  \
    X(perf, heap, "tps")                                                     \
    X(perf, heap_not_bottleneck, "x")                                        \
    X(perf, heap_bottleneck, "x")                                            \
    X(perf, backlog, "")                                                     \
    X(perf, backlog_intro, "rounds claims")                                  \
    X(perf, growth, "strategy lo hi x50 x99 lr")                             \
    X(perf, growth_faster, "strategy lo hi x50 x99 lr")                      \
    X(perf, growth_note, "")                                                 \
    X(perf, due_now_expiry, "")                                              \
    X(perf, lateness, "")                                                    \
    X(perf, lateness_intro, "producers ms consumers")                        \
    X(perf, due_at_once, "")                                                 \
    X(perf, due_ahead, "p99")                                                \
    X(perf, due_now, "strategy path ref")                                    \
    X(perf, kept_up, "rate")                                                 \
    X(perf, kept_up_sat, "rate sat")                                         \
    X(perf, kept_up_not_sat, "rate")                                         \
    X(perf, saturated, "sat")                                                \
    X(perf, not_saturated, "")                                               \
    X(perf, targets, "")                                                     \
    X(perf, targets_intro, "")                                               \
    X(perf, not_measured_v, "")                                              \
    X(perf, met, "")                                                         \
    X(perf, not_met, "")                                                     \
    X(perf, t_heap, "")                                                      \
    X(perf, m_tps_at, "tps consumers")                                       \
    X(perf, t_best, "")                                                      \
    X(perf, m_tps_label_at, "tps label consumers")                           \
    X(perf, t_zadd, "")                                                      \
    X(perf, m_pct, "pct tps zadd")                                           \
    X(perf, t_lua, "")                                                       \
    X(perf, m_tps_label, "tps label")                                        \
    X(perf, t_blocks, "strategy")                                            \
    X(perf, t_polls_2ms, "strategy")                                         \
    X(perf, t_polls, "strategy")                                             \
    X(perf, m_p99, "p99")                                                    \
    X(perf, m_due_now, "p99")                                                \
    X(perf, m_due_now_ahead, "p99 ahead")                                    \
    X(perf, v_not_judged, "")                                                \
    X(perf, v_within, "ms")                                                  \
    X(perf, v_beyond, "ms")                                                  \
    X(perf, t_backlog, "")                                                   \
    X(perf, m_backlog_small, "n worst strategy")                             \
    X(perf, m_backlog, "worst strategy n")                                   \
    X(perf, v_backlog_small, "n")                                            \
    X(faults, none, "")                                                      \
    X(faults, kill, "point n s")                                             \
    X(faults, after_claim, "")                                               \
    X(faults, during_work, "")                                               \
    X(faults, before_ack, "")                                                \
    X(faults, restart, "persistence")                                        \
    X(faults, aof_off, "")                                                   \
    X(faults, aof_everysec, "")                                              \
    X(faults, aof_always, "")                                                \
    X(faults, pause, "ms")                                                   \
    X(faults, outage, "ms")                                                  \
    X(faults, skew_ahead, "ms")                                              \
    X(faults, skew_behind, "ms")                                             \
    X(faults, stall, "")                                                     \
    X(faults, unparsed, "spec")                                              \
    X(loss, describe, "delay faults baseline")                               \
    X(loss, no_faults, "")                                                   \
    X(loss, baseline, "")                                                    \
    X(loss, intro, "")                                                       \
    X(loss, cell_no_verdict, "")                                             \
    X(loss, cell_also_no_verdict, "n s")                                     \
    X(loss, no_verdict, "n s list")                                          \
    X(loss, no_verdict_item, "row fault n s why")                            \
    X(loss, no_crosses, "")                                                  \
    X(loss, crosses, "list")                                                 \
    X(loss, cross_item, "row fault n trials s violation")                    \
    X(loss, each_fault, "")                                                  \
    X(loss, fault, "fault")                                                  \
    X(loss, windows, "n s ms")                                               \
    X(loss, nothing, "")                                                     \
    X(loss, lost, "list")                                                    \
    X(loss, duplicated, "list")                                              \
    X(loss, redelivered, "list")                                             \
    X(loss, early, "list")                                                   \
    X(loss, clean, "n ran ies")                                              \
    X(loss, mech_kill_consumer, "leased")                                    \
    X(loss, mech_restart_redis, "")                                          \
    X(loss, mech_pause_redis, "")                                            \
    X(loss, mech_subscriber_outage, "")                                      \
    X(loss, mech_clock_skew, "")                                             \
    X(loss, mech_mover_stall, "")                                            \
    X(loss, mech_none, "")                                                   \
    X(loss, timeline, "fault bucket")                                        \
    X(loss, tl_no_window, "")                                                \
    X(loss, tl_gap, "gap")                                                   \
    X(loss, tl_gap_end, "gap")                                               \
    X(loss, tl_no_delivery, "")                                              \
    X(loss, tl_due_in, "n s ws")                                             \
    X(loss, tl_caught, "ms")                                                 \
    X(loss, tl_undelivered, "n")                                             \
    X(loss, tl_kills_lost, "s n")                                            \
    X(loss, tl_kills_back, "back n secs")                                    \
    X(claims, c01_text, "")                                                  \
    X(claims, c01_decide, "")                                                \
    X(claims, c02_text, "")                                                  \
    X(claims, c02_decide, "")                                                \
    X(claims, c03_text, "")                                                  \
    X(claims, c03_decide, "")                                                \
    X(claims, c04_text, "")                                                  \
    X(claims, c04_decide, "")                                                \
    X(claims, c05_text, "")                                                  \
    X(claims, c05_decide, "")                                                \
    X(claims, c06_text, "")                                                  \
    X(claims, c06_decide, "")                                                \
    X(claims, c07_text, "")                                                  \
    X(claims, c07_decide, "")                                                \
    X(claims, c08_text, "")                                                  \
    X(claims, c08_decide, "")                                                \
    X(claims, c09_text, "")                                                  \
    X(claims, c09_decide, "")                                                \
    X(claims, c10_text, "")                                                  \
    X(claims, c10_decide, "")                                                \
    X(claims, c11_text, "")                                                  \
    X(claims, c11_decide, "")                                                \
    X(claims, c12_text, "")                                                  \
    X(claims, c12_decide, "")                                                \
    X(claims, c13_text, "")                                                  \
    X(claims, c13_decide, "")                                                \
    X(claims, c14_text, "")                                                  \
    X(claims, c14_decide, "")                                                \
    X(claims, c15_text, "")                                                  \
    X(claims, c15_decide, "")                                                \
    X(claims, c16_text, "")                                                  \
    X(claims, c16_decide, "")                                                \
    X(claims, c17_text, "")                                                  \
    X(claims, c17_decide, "")                                                \
    X(claims, c18_text, "")                                                  \
    X(claims, c18_decide, "")                                                \
    X(claims, c19_text, "")                                                  \
    X(claims, c19_decide, "")                                                \
    X(claims, c20_text, "")                                                  \
    X(claims, c20_decide, "")                                                \
    X(claims, c21_text, "")                                                  \
    X(claims, c21_decide, "")                                                \
    X(claims, unmeasured, "decide")                                          \
    X(claims, tally_none, "strategy")                                        \
    X(claims, tally_where_fig, "exps fig")                                   \
    X(claims, tally_where, "exps")                                           \
    X(claims, dups_seen, "strategy n trials of max_c")                       \
    X(claims, dups_none, "strategy trials s max_c")                          \
    X(claims, dups_deliveries, "n")                                          \
    X(claims, c01_holds, "seen max where")                                   \
    X(claims, c01_not, "none")                                               \
    X(claims, c02_holds, "none few")                                         \
    X(claims, c02_few, "")                                                   \
    X(claims, c03_no_race, "none")                                           \
    X(claims, c03_holds, "none races per rt")                                \
    X(claims, c13_not, "n dup_trials trials where")                          \
    X(claims, c13_none, "trials s where")                                    \
    X(claims, probes_none, "root")                                           \
    X(claims, probes_lacks, "dir id probe key")                              \
    X(claims, c06_scores, "redis ms_exact ms_n lo hi us_exact us_n "         \
      "ns_exact ns_n ns_err")                                                \
    X(claims, c06_first, "first ms us ns")                                   \
    X(claims, c06_x4096, "date ms")                                          \
    X(claims, c06_x4096_ok, "date")                                          \
    X(claims, c06_holds, "packed")                                           \
    X(claims, c06_fails, "packed")                                           \
    X(claims, c06_packed, "")                                                \
    X(claims, c07_loss, "exp lost n")                                        \
    X(claims, c07_loss_quick, "file")                                        \
    X(claims, c07, "redis threads members pops dups missed lost n")          \
    X(claims, c07_conditions, "loss")                                        \
    X(claims, c08, "redis tasks pm_members pm_due pm_found im_members "      \
      "im_due im_found")                                                     \
    X(claims, c09, "redis s_ttl s_delay s_lost s_n l_ttl l_lost l_n left_n " \
      "left_before left")                                                    \
    X(claims, c20, "redis observed rejected maxlen added xlen")              \
    X(claims, c20_rejected, "")                                              \
    X(claims, c10_variant, "name p99 max")                                   \
    X(claims, c10_variant_worst, "name p99 max")                             \
    X(claims, c10_poll, "strategy ms")                                       \
    X(claims, c10_p99_beyond, "ms")                                          \
    X(claims, c10_max_beyond, "ms")                                          \
    X(claims, c10_none, "")                                                  \
    X(claims, c10_where, "exp")                                              \
    X(claims, c10_more, "")                                                  \
    X(claims, c10_idle, "consumers strategy pa ca ua pb cb ub exp against")  \
    X(claims, c10_against, "")                                               \
    X(claims, c10_early, "")                                                 \
    X(claims, c10_beyond, "n of by")                                         \
    X(claims, c10_no_cost, "")                                               \
    X(claims, c10_not_grows, "")                                             \
    X(claims, c10_all_within, "n")                                           \
    X(claims, c10_max_exceeded, "n of by")                                   \
    X(claims, c10_cpu_note, "")                                              \
    X(claims, c11_none, "")                                                  \
    X(claims, c11_idle, "consumers cmds cpu")                                \
    X(claims, c11_idle10, "cmds cpu")                                        \
    X(claims, c11_base, "cpu")                                               \
    X(claims, exp, "exp")                                                    \
    X(claims, c11_price, "p50 p99 exp")                                      \
    X(claims, c11_lua, "p50 p99")                                            \
    X(claims, c11_no_lateness, "")                                           \
    X(claims, c11_cheap_p99, "p99")                                          \
    X(claims, c11_cheap, "")                                                 \
    X(claims, c11_not_cheap, "")                                             \
    X(claims, c11_one_count, "consumers")                                    \
    X(claims, c04_idle_none, "")                                             \
    X(claims, c04_idle, "consumers cmds cpu")                                \
    X(claims, c04_base, "cpu")                                               \
    X(claims, c04_noisy, "cmds")                                             \
    X(claims, c04_bench, "n p50 p99 lo_p99 lo_n x bytes")                    \
    X(claims, c04_bench_grew, "")                                            \
    X(claims, c04_none, "")                                                  \
    X(claims, c04_backlog, "n tasks p50 p99 lost exp")                       \
    X(claims, c04_backlog_none, "")                                          \
    X(claims, c04_not_cheap, "")                                             \
    X(claims, c04_not_easy, "")                                              \
    X(claims, c04_bench_none, "")                                            \
    X(claims, c16_none, "")                                                  \
    X(claims, c16_list, "p99 max")                                           \
    X(claims, c16_naive, "p99")                                              \
    X(claims, c16_lua, "p99")                                                \
    X(claims, c16_idle, "consumers cmds")                                    \
    X(claims, c16_idle_naive, "cmds")                                        \
    X(claims, c16_nothing, "")                                               \
    X(claims, c16_both, "")                                                  \
    X(claims, c16_some, "ok known")                                          \
    X(claims, c16_neither, "")                                               \
    X(claims, c05_none, "")                                                  \
    X(claims, c05_intro, "")                                                 \
    X(claims, c05_no_strategy, "")                                           \
    X(claims, c05_growth, "name p50_lo p50_hi x50 p99_lo p99_hi x99")        \
    X(claims, c05_range, "lo hi x")                                          \
    X(claims, c05_faster, "x n of")                                          \
    X(claims, c05_some_faster, "n of x")                                     \
    X(claims, c05_holds, "")                                                 \
    X(claims, c05_only_to, "")                                               \
    X(claims, c17_logn_none, "")                                             \
    X(claims, c17_enqueue, "lo hi x")                                        \
    X(claims, c17_unresolvable, "lo lo_n hi hi_n enq")                       \
    X(claims, c17_logn, "lo lo_n hi hi_n x lr enq")                          \
    X(claims, c17_logn_faster, "lo lo_n hi hi_n x lr enq")                   \
    X(claims, c17_no_heap, "")                                               \
    X(claims, c17_no_wakeups, "")                                            \
    X(claims, c17_none, "why")                                               \
    X(claims, c17_at, "ratio consumers")                                     \
    X(claims, c17_herd, "consumers ratio limit")                             \
    X(claims, c17_at_most_one, "")                                           \
    X(claims, c17_about_one, "")                                             \
    X(claims, c17_a_few, "")                                                 \
    X(claims, c17_no_herd, "how worst consumers limit few")                  \
    X(claims, c17_few, "")                                                   \
    X(claims, c17, "per exps verdict logn")                                  \
    X(claims, loss_none, "needs")                                            \
    X(claims, c12_needs, "")                                                 \
    X(claims, c12_none, "exp")                                               \
    X(claims, c12_point, "")                                                 \
    X(claims, c12_none_lost, "")                                             \
    X(claims, c12_clean, "")                                                 \
    X(claims, c12, "points exp amo_lost amo_n amo_by amo_clean lease_lost "  \
      "lease_n lease_by red")                                                \
    X(claims, c12_lease_lost, "")                                            \
    X(claims, c12_no_amo_lost, "")                                           \
    X(claims, c12_holds, "")                                                 \
    X(claims, c14_needs, "")                                                 \
    X(claims, c14_intro, "exp")                                              \
    X(claims, c14_off, "lost n")                                             \
    X(claims, c14_everysec, "lost n by")                                     \
    X(claims, c14_always, "lost n")                                          \
    X(claims, c14_expiry, "lost n")                                          \
    X(claims, c14_no_everysec, "")                                           \
    X(claims, c14_all_kept, "")                                              \
    X(claims, c14_most_kept, "fe fo")                                        \
    X(claims, c14_not, "fe")                                                 \
    X(claims, c21_needs, "")                                                 \
    X(claims, c21_item, "row fault n")                                       \
    X(claims, c21_none, "exp")                                               \
    X(claims, c21, "exp red n by")                                           \
    X(claims, c21_amo, "by")                                                 \
    X(claims, c21_idempotent, "")                                            \
    X(claims, c21_no_repeat, "")                                             \
    X(claims, c18_outage, "exp lost n by clean")                             \
    X(claims, c18_nobody, "")                                                \
    X(claims, c18_stream, "delay grace")                                     \
    X(claims, c18_at, "n pct")                                               \
    X(claims, c18_p50, "ms")                                                 \
    X(claims, c18_where, "exp")                                              \
    X(claims, c18_falls, "fa a fb b bias")                                   \
    X(claims, c18_bias, "")                                                  \
    X(claims, c18_later, "a b")                                              \
    X(claims, c18_neither, "")                                               \
    X(claims, c18_backlog_none, "")                                          \
    X(claims, c18_loss_none, "")                                             \
    X(claims, c18_loss_unmeasured, "")                                       \


#endif
