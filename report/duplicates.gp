# duplicates.gp -- duplicate deliveries vs consumers, one line per strategy
# (median over the repeats of each cell).  The y axis is logarithmic, so a
# count of 14 beside one of 1,000 stays readable; zero, which a log axis
# cannot show, is drawn on the axis line at 0.5 and labelled "0".  The x
# tics are the consumer counts that ran, no others.
# usage: gnuplot -c report/duplicates.gp in.csv out.svg|out.png
# in.csv: consumers,<strategy>,<strategy>,... (report/sections.c)
if (ARGC < 2) { print "usage: gnuplot -c duplicates.gp in.csv out.{svg,png}"; exit status 2 }
in = ARG1
out = ARG2
load system("dirname '".ARG0."'")."/common.gp"
set title "Duplicate deliveries vs consumers (median of repeats)"
set ylabel "duplicate deliveries per trial (log scale)"
stats in using (sum [i=2:ncols] (valid(i) ? abs(column(i)) : 0)) nooutput
ymax = STATS_max > 1 ? STATS_max : 1
set logscale y 10
set yrange [0.4 : ymax * 3]
set ytics add ("0" 0.5)
z(v) = v > 0 ? v : 0.5
plot for [i=2:ncols] in using 1:(z(column(i))):xtic(1) title columnheader(i) lw 2
