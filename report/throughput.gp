# throughput.gp -- delivered tasks per second vs consumers, one line per
# strategy (median over the repeats of each cell), and the rate at which
# the tasks fell due as a dashed grey line: no strategy can deliver faster
# than tasks fall due, so a line that meets it measures the arrival rate,
# not the strategy.  x tics: the consumer counts that ran.
# usage: gnuplot -c report/throughput.gp in.csv out.svg|out.png
# in.csv: consumers,<strategy>,...,<arrival rate> (report/sections.c: the
# last column is the arrival rate, empty when the run has none)
if (ARGC < 2) { print "usage: gnuplot -c throughput.gp in.csv out.{svg,png}"; exit status 2 }
in = ARG1
out = ARG2
load system("dirname '".ARG0."'")."/common.gp"
set title "Throughput vs consumers (median of repeats)"
set ylabel "tasks delivered per second"
# The rates span orders of magnitude (the in-process heap runs far faster
# than any Redis strategy): when the largest is over 20 times the smallest
# positive one the y axis is logarithmic, so every line stays readable;
# otherwise linear from 0.  All zero or empty: a fixed [0:1].
mn(a, b) = a < b ? a : b
mx(a, b) = a > b ? a : b
pos(i) = valid(i) && column(i) > 0
rowmin(i) = i > ncols ? 1e300 : mn(pos(i) ? column(i) : 1e300, rowmin(i + 1))
rowmax(i) = i > ncols ? 0 : mx(pos(i) ? column(i) : 0, rowmax(i + 1))
stats in using (rowmin(2)) nooutput
ymin = STATS_min
stats in using (rowmax(2)) nooutput
ymax = STATS_max
if (ymax <= 0) {
    set yrange [0:1]
} else {
    if (ymax > 20 * ymin) {
        set logscale y 10
        set format y "%.0s%c"
        set ylabel "tasks delivered per second (log scale)"
        set yrange [10 ** floor(log10(ymin)) : 10 ** ceil(log10(ymax))]
        set mytics 10
    } else {
        set yrange [0:*]
    }
}
plot for [i=2:ncols-1] in using 1:i:xtic(1) title columnheader(i) lw 2 pt (i - 1), \
     in using 1:ncols with lines dt 2 lw 1.5 lc rgb "#777777" title columnheader(ncols)
