# perf_backlog.gp -- claim latency vs the number of pending tasks, log-log:
# per strategy its p50 (solid) and p99 (dashed, same colour), from
# `dqlab bench` (section_perf.c writes the data).
# usage: gnuplot -c report/perf_backlog.gp in.csv out.svg|out.png
# in.csv: pending,"<s> p50","<s> p99",... (microseconds)
if (ARGC < 2) { print "usage: gnuplot -c perf_backlog.gp in.csv out.{svg,png}"; exit status 2 }
in = ARG1
out = ARG2
if (strstrt(out, ".svg") == strlen(out) - 3) {
    set terminal svg size 760,460 dynamic noenhanced font "DejaVu Sans,11" background "white"
} else {
    if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
        set terminal pngcairo size 760,460 noenhanced font "DejaVu Sans,9" background "white"
    } else {
        set terminal png size 760,460
    }
}
set output out
set linetype 1 lc rgb "#1f77b4"
set linetype 2 lc rgb "#d62728"
set linetype 3 lc rgb "#2ca02c"
set linetype 4 lc rgb "#ff7f0e"
set linetype 5 lc rgb "#9467bd"
set linetype 6 lc rgb "#8c564b"
set linetype 7 lc rgb "#e377c2"
set linetype 8 lc rgb "#000000"
set linetype 9 lc rgb "#17becf"
set linetype cycle 9
set datafile separator comma
set datafile missing ""
stats in using 1 nooutput
ns = (STATS_columns - 1) / 2
set xrange [STATS_min / 2 : STATS_max * 2]
set logscale xy 10
set format x "%.0s%c"
set grid xtics ytics lc rgb "#dddddd"
set border 3
set tics nomirror
set key outside right top box
set title "Claim latency vs pending tasks (p50 solid, p99 dashed)"
set xlabel "pending tasks (backlog)"
set ylabel "one claim call, microseconds"
set style data linespoints
plot for [i=1:ns] in using 1:(column(2*i)) title columnheader(2*i) lt i lw 2 pt 7, \
     for [i=1:ns] in using 1:(column(2*i+1)) notitle lt i lw 1 dt 2 pt 6
