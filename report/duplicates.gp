# duplicates.gp -- duplicate deliveries vs consumers, one line per strategy
# (median over the repeats of each cell).
# usage: gnuplot -c report/duplicates.gp in.csv out.svg|out.png
# in.csv: consumers,<strategy>,<strategy>,... (report.c writes it)
if (ARGC < 2) { print "usage: gnuplot -c duplicates.gp in.csv out.{svg,png}"; exit status 2 }
in = ARG1
out = ARG2
load system("dirname '".ARG0."'")."/common.gp"
set title "Duplicate deliveries vs consumers (median of repeats)"
set ylabel "duplicate deliveries per trial"
set yrange [0:*]
plot for [i=2:ncols] in using 1:i title columnheader(i) lw 2
