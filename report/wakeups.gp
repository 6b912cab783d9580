# wakeups.gp -- wake-ups per delivery vs consumers, one line per strategy
# and wait scheme (wake = leader / broadcast), median over the repeats.
# usage: gnuplot -c report/wakeups.gp in.csv out.svg|out.png
# in.csv: consumers,<variant>,<variant>,... (report/sections.c)
if (ARGC < 2) { print "usage: gnuplot -c wakeups.gp in.csv out.{svg,png}"; exit status 2 }
in = ARG1
out = ARG2
load system("dirname '".ARG0."'")."/common.gp"
set title "Wake-ups per delivery vs consumers (median of repeats)"
set ylabel "wake-ups per task delivered"
set yrange [0:*]
plot for [i=2:ncols] in using 1:i:xtic(1) title columnheader(i) lw 2 dashtype 1+i%2
