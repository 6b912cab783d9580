# perf_lateness.gp -- lateness p99 vs the offered rate, log-log, one line
# per strategy; a line stops where the strategy saturated.  From
# `dqlab bench` (section_perf.c writes the data).
# usage: gnuplot -c report/perf_lateness.gp in.csv out.svg|out.png
# in.csv: offered,<strategy>,<strategy>,... (p99 lateness in ms)
if (ARGC < 2) { print "usage: gnuplot -c perf_lateness.gp in.csv out.{svg,png}"; exit status 2 }
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
ncols = STATS_columns
set xrange [STATS_min / 1.5 : STATS_max * 1.5]
set logscale xy 10
set format x "%.0s%c"
set grid xtics ytics lc rgb "#dddddd"
set border 3
set tics nomirror
set key outside right top box
set title "Lateness p99 vs offered rate (until saturation)"
set xlabel "offered tasks per second"
set ylabel "lateness p99, ms"
set style data linespoints
# x tics at the offered rates themselves (a log axis alone labels only
# powers of ten); distinct points so lines that coincide (several polling
# strategies sit at their poll interval) stay visible.
plot for [i=2:ncols] in using 1:i:xtic(1) title columnheader(i) lw 2 pt (i - 1) ps 1.3
