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
set yrange [0:*]
plot for [i=2:ncols] in using 1:i title columnheader(i) lw 2
