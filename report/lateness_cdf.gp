# lateness_cdf.gp -- the lateness CDF of every strategy on one chart: x =
# lateness (first delivery - due time) in ms on a log scale, y = fraction
# of the enqueued tasks delivered with at most that lateness (a line that
# stops below 1 lost tasks).  Each line has its own colour and marker, and
# its dash says how its consumers wait: solid polling, dashed blocking in
# Redis, dotted in-process.
# usage: gnuplot -c report/lateness_cdf.gp in.csv out.svg|out.png
# in.csv: one block per strategy, blocks two blank lines apart, each
# starting with the header "lateness_ms,<label>,waits" (waits 1 polling, 2
# blocking, 3 in-process; report/sec_lateness.c).
if (ARGC < 2) { print "usage: gnuplot -c lateness_cdf.gp in.csv out.{svg,png}"; exit status 2 }
in = ARG1
out = ARG2
if (strstrt(out, ".svg") == strlen(out) - 3) {
    set terminal svg size 860,500 dynamic noenhanced font "DejaVu Sans,12" background "white"
} else {
    if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
        set terminal pngcairo size 860,500 noenhanced font "DejaVu Sans,10" background "white"
    } else {
        set terminal png size 860,500
    }
}
set output out
set datafile separator comma
# Read the blocks before any range is set: stats honours a yrange, and the
# lateness column would be filtered by it (every lateness above 1.02 ms
# left no point at all).
stats in using 1 nooutput
nb = STATS_blocks
array DT[nb]
do for [i=0:nb-1] { stats in index i using 3 nooutput; DT[i+1] = STATS_max == 1 ? 1 : STATS_max == 2 ? 2 : 3 }
# Twelve colours from two qualitative palettes (Tol's bright and muted),
# so that neighbours in the key differ in hue as well as in marker.
set linetype 1 lc rgb "#4477aa" pt 1
set linetype 2 lc rgb "#ee6677" pt 2
set linetype 3 lc rgb "#228833" pt 4
set linetype 4 lc rgb "#ccbb44" pt 6
set linetype 5 lc rgb "#66ccee" pt 8
set linetype 6 lc rgb "#aa3377" pt 10
set linetype 7 lc rgb "#000000" pt 12
set linetype 8 lc rgb "#ee7733" pt 3
set linetype 9 lc rgb "#0077bb" pt 5
set linetype 10 lc rgb "#999933" pt 7
set linetype 11 lc rgb "#882255" pt 9
set linetype 12 lc rgb "#44aa99" pt 11
set linetype cycle 12
set key outside right top box noenhanced font ",9" samplen 3 title "dash: how it waits" font ",9"
set grid xtics ytics lc rgb "#dddddd"
set border 3
set tics nomirror
set logscale x 10
set format x "%g"
set xlabel "lateness (ms, log scale; below 0.01 ms drawn at 0.01)"
set ylabel "fraction of tasks delivered"
set yrange [0:1.02]
set title "Lateness CDF (all repeats pooled; solid: polls, dashed: blocks, dotted: in-process)" font ",10"
plot for [i=0:nb-1] in index i using 1:2 with linespoints lw 2 lt i+1 dt DT[i+1] pointnumber 5 ps 1.1 title columnheader(2)
