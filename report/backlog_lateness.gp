# backlog_lateness.gp -- lateness of a stream of tasks vs the number of
# pending tasks (the backlog): left, p50 and p99 lateness (ms, log-log;
# censored points -- beyond the observation window -- are left out);
# right, the share of the stream delivered within the window.  A p50 beyond
# the window (most of the stream not delivered in it) is drawn as an open
# triangle at the window (the value drawn), "beyond the window", instead of
# being left out; each key sits where no point falls.
# usage: gnuplot -c report/backlog_lateness.gp in.csv out.svg|out.png
# in.csv: pending, then per strategy 5 columns "<s> p50", "<s> p99",
# "<s> max", "<s> delivered %", "<s> p50 beyond the window" (the window in
# ms where the p50 is censored, else empty; report/sec_lateness.c)
if (ARGC < 2) { print "usage: gnuplot -c backlog_lateness.gp in.csv out.{svg,png}"; exit status 2 }
in = ARG1
out = ARG2
if (strstrt(out, ".svg") == strlen(out) - 3) {
    set terminal svg size 960,460 dynamic noenhanced font "DejaVu Sans,11" background "white"
} else {
    if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
        set terminal pngcairo size 960,460 noenhanced font "DejaVu Sans,9" background "white"
    } else {
        set terminal png size 960,460
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
set datafile missing ""
stats in using 1 nooutput
ns = (STATS_columns - 1) / 5
set grid xtics ytics lc rgb "#dddddd"
set border 3
set tics nomirror
set logscale x 10
set xrange [STATS_min / 2 : STATS_max * 2]
set xlabel "pending tasks (backlog)"
# keys where no point falls: the left panel between the slow expiry points
# (seconds) and lua's (about a ms), the right one under the falling line
set key inside right center box noenhanced opaque font ",9"
set style data linespoints
set pointsize 1.2
set multiplot layout 1,2 title "Lateness vs pending tasks"
set title "lateness p50 (solid) and p99 (dashed)"
set ylabel "lateness (ms, log scale)"
set logscale y 10
plot for [s=0:ns-1] in using 1:(column(2 + 5*s)) lw 2 lc s+1 dt 1 title columnheader(2 + 5*s), \
     for [s=0:ns-1] in using 1:(column(3 + 5*s)) lw 2 lc s+1 dt 2 title columnheader(3 + 5*s), \
     for [s=0:ns-1] in using 1:(column(6 + 5*s)) with points lc s+1 pt 8 ps 2 title columnheader(6 + 5*s)
set title "measured tasks delivered within the window"
set ylabel "% delivered"
unset logscale y
set yrange [0:105]
set key inside left bottom box noenhanced opaque font ",9"
plot for [s=0:ns-1] in using 1:(column(5 + 5*s)) lw 2 lc s+1 title columnheader(5 + 5*s)
unset multiplot
