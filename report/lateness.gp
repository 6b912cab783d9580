# lateness.gp -- p99 lateness (first delivery - due time) vs consumers, one
# line per strategy (median over the repeats of each cell); log y, since
# the points where consumers could not keep up (one consumer against a
# fast arrival rate: queueing) sit far above the others.  x tics: the
# consumer counts that ran.
# usage: gnuplot -c report/lateness.gp in.csv out.svg|out.png
# in.csv: consumers,<strategy>,<strategy>,... (report/sections.c)
if (ARGC < 2) { print "usage: gnuplot -c lateness.gp in.csv out.{svg,png}"; exit status 2 }
in = ARG1
out = ARG2
load system("dirname '".ARG0."'")."/common.gp"
set title "Lateness p99 vs consumers (median of repeats)"
set ylabel "lateness p99 (ms, log scale)"
stats in using (sum [i=2:ncols] (valid(i) ? abs(column(i)) : 0)) nooutput
if (STATS_max > 0) { set logscale y 10; set yrange [*:*] } else { set yrange [0:1] }
plot for [i=2:ncols] in using 1:i:xtic(1) title columnheader(i) lw 2
