# common.gp -- shared settings for dqlab's figures, loaded by the plot
# scripts (duplicates.gp, throughput.gp, lateness.gp).
#
# Expects `in` (input CSV) and `out` (output path) to be set.  The terminal
# follows the output's extension: .svg -> svg, .png -> pngcairo (gnuplot-nox
# on Debian 12 has both; plain `png` (libgd) is the fallback).  Input CSVs
# are "wide": first column the x value (consumers), then one column per
# strategy, with the strategy name in the header row.
if (strstrt(out, ".svg") == strlen(out) - 3) {
    set terminal svg size 720,440 dynamic enhanced font "DejaVu Sans,12" background "white"
} else {
    if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
        set terminal pngcairo size 720,440 enhanced font "DejaVu Sans,10" background "white"
    } else {
        set terminal png size 720,440
    }
}
set output out
set datafile separator comma
set datafile missing ""
set key outside right top box
set grid ytics lc rgb "#dddddd"
set border 3
set tics nomirror
set xlabel "consumers"
set logscale x 2
stats in using 1 nooutput
set xrange [STATS_min / 1.3 : STATS_max * 1.3]
ncols = STATS_columns
set style data linespoints
set pointsize 1.2
