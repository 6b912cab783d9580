# lateness.gp -- p99 lateness (first delivery - due time) vs consumers, one
# line per strategy (median over the repeats of each cell).
# usage: gnuplot -c report/lateness.gp in.csv out.svg|out.png
# in.csv: consumers,<strategy>,<strategy>,... (report.c writes it)
if (ARGC < 2) { print "usage: gnuplot -c lateness.gp in.csv out.{svg,png}"; exit status 2 }
in = ARG1
out = ARG2
load system("dirname '".ARG0."'")."/common.gp"
set title "Lateness p99 vs consumers (median of repeats)"
set ylabel "lateness p99 (ms)"
# All zero (no duplicate anywhere, the usual case for most strategies):
# a fixed [0:1] instead of autoscaling to the empty range [0:0], which
# gnuplot would warn about.
stats in using (sum [i=2:ncols] (valid(i) ? abs(column(i)) : 0)) nooutput
if (STATS_max > 0) { set yrange [0:*] } else { set yrange [0:1] }
plot for [i=2:ncols] in using 1:i title columnheader(i) lw 2
