# common.gp -- shared settings for dqlab's figures, loaded by the plot
# scripts (duplicates.gp, throughput.gp, lateness.gp).
#
# Expects `in` (input CSV) and `out` (output path) to be set.  The terminal
# follows the output's extension: .svg -> svg, .png -> pngcairo (gnuplot-nox
# on Debian 12 has both; plain `png` (libgd) is the fallback).  Input CSVs
# are "wide": first column the x value (consumers), then one column per
# strategy, with the strategy name in the header row (noenhanced: a label
# such as "enqueue_batch=64" must not turn its "_b" into a subscript).
# Colours: twelve distinct ones (the default cycle of eight repeats purple
# for the 1st and 9th strategy; eleven strategies need more than ten);
# points differ per line as well.
set datafile separator comma
set datafile missing ""
stats in using 1 nooutput
xlo = STATS_min / 1.3
xhi = STATS_max * 1.3
ncols = STATS_columns
# More than ten series (bench variants): a taller figure with the key
# below the plot, so the plot keeps its width and height.
fig_h = ncols > 11 ? 600 : 440
if (strstrt(out, ".svg") == strlen(out) - 3) {
    set terminal svg size 720,fig_h dynamic noenhanced font "DejaVu Sans,12" background "white"
} else {
    if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
        set terminal pngcairo size 720,fig_h noenhanced font "DejaVu Sans,10" background "white"
    } else {
        set terminal png size 720,fig_h
    }
}
set output out
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
if (ncols > 11) { set key below box maxcols 2 height 1; set bmargin 12 } else { set key outside right top box }
set grid ytics lc rgb "#dddddd"
set border 3
set tics nomirror
set xlabel "consumers"
set logscale x 2
set xrange [xlo : xhi]
set style data linespoints
set pointsize 1.2
