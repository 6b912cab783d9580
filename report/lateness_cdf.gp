# lateness_cdf.gp -- the lateness CDF of every strategy on one chart: x =
# lateness (first delivery - due time) in ms on a log scale, y = fraction
# of the enqueued tasks delivered with at most that lateness (a line that
# stops below 1 lost tasks).
# usage: gnuplot -c report/lateness_cdf.gp in.csv out.svg|out.png
# in.csv: one block per strategy, blocks two blank lines apart, each
# starting with the header "lateness_ms,<label>" (report/sections.c).
if (ARGC < 2) { print "usage: gnuplot -c lateness_cdf.gp in.csv out.{svg,png}"; exit status 2 }
in = ARG1
out = ARG2
if (strstrt(out, ".svg") == strlen(out) - 3) {
    set terminal svg size 760,480 dynamic noenhanced font "DejaVu Sans,12" background "white"
} else {
    if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
        set terminal pngcairo size 760,480 noenhanced font "DejaVu Sans,10" background "white"
    } else {
        set terminal png size 760,480
    }
}
set output out
# Twelve distinct colours (the default cycle repeats after 8).
set linetype 1 lc rgb "#1f77b4"
set linetype 2 lc rgb "#d62728"
set linetype 3 lc rgb "#2ca02c"
set linetype 4 lc rgb "#ff7f0e"
set linetype 5 lc rgb "#9467bd"
set linetype 6 lc rgb "#8c564b"
set linetype 7 lc rgb "#e377c2"
set linetype 8 lc rgb "#000000"
set linetype 9 lc rgb "#17becf"
set linetype 10 lc rgb "#bcbd22"
set linetype 11 lc rgb "#7f7f7f"
set linetype 12 lc rgb "#aec7e8"
set linetype cycle 12
set datafile separator comma
set key outside right top box noenhanced
set grid xtics ytics lc rgb "#dddddd"
set border 3
set tics nomirror
set logscale x 10
set format x "%g"
set xlabel "lateness (ms, log scale; below 0.01 ms drawn at 0.01)"
set ylabel "fraction of tasks delivered"
set yrange [0:1.02]
set title "Lateness CDF (all repeats pooled)"
stats in using 1 nooutput
nb = STATS_blocks
plot for [i=0:nb-1] in index i using 1:2 with steps lw 2 lt i+1 title columnheader(2)
