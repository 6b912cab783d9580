/* bench_targets.h -- the header line of targets.csv, the table of the
 * bench's targets that bench_targets.c writes (bench.h describes the file
 * and its columns; tests read it against this line).
 */
#ifndef DQ_BENCH_TARGETS_H
#define DQ_BENCH_TARGETS_H

#define DQ_BENCH_TARGETS_HEADER                                              \
    "target,strategy,options,figure,unit,reference,reference_value,share,"   \
    "bound_on,op,bound,met,redis_cpu_us_per_task,samples,detail\n"

#endif
