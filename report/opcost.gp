# opcost.gp -- ns per operation against pending tasks, from `dqlab opcost`
# (harness/opcost.h): one line per strategy and mix, the median of the
# repeats with a bar from the fastest to the slowest repeat; colour per
# strategy, solid for the steady mix, dashed for the now mix.
# usage: gnuplot -c report/opcost.gp in.csv out.svg|out.png [slopes.csv]
# in.csv: opcost.csv (strategy,mix,n,ops,ns_per_op_median,ns_per_op_min,
#   ns_per_op_max,...), one row per strategy, mix and n (rising n)
# slopes.csv (optional): opcost_slopes.csv of the same run; each line's
#   key then gives its fitted ns per doubling of n
# The x axis is logarithmic (pending tasks) and the y axis linear from 0,
# so O(log n) is a straight rising line, O(1) a flat one, and the slope
# read off the figure is the fitted ns per doubling.
if (ARGC < 2) { print "usage: gnuplot -c opcost.gp in.csv out.{svg,png} [slopes.csv]"; exit status 2 }
in = ARG1
out = ARG2
slopes = ARGC >= 3 ? ARG3 : ""
strategies = "heap wheel"
mixes = "steady now"
if (strstrt(out, ".svg") == strlen(out) - 3) {
    set terminal svg size 760,480 dynamic noenhanced font "DejaVu Sans,11" background "white"
} else {
    if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
        set terminal pngcairo size 760,480 noenhanced font "DejaVu Sans,9" background "white"
    } else {
        set terminal png size 760,480
    }
}
set output out
set linetype 1 lc rgb "#1f77b4"
set linetype 2 lc rgb "#d62728"
set linetype 3 lc rgb "#2ca02c"
set linetype 4 lc rgb "#ff7f0e"
set linetype cycle 4
set datafile separator comma
set datafile missing ""
# Every stats and table first: they obey the ranges set below.
stats in using 3 nooutput
xlo = STATS_min / 1.5
xhi = STATS_max * 1.5
stats in using 7 nooutput
yhi = STATS_max * 1.1
# One datablock $s<k> per strategy and mix with rows (n, median, min,
# max), and its key: "<strategy> <mix>", with the fitted slope when
# slopes.csv is given.  A series without rows is drawn from $none, without
# a key.  The counts and the slope are sums of an expression over every
# row (the header row adds 0), so stats never meets an empty file.
$none << EOD
NaN,NaN,NaN,NaN
EOD
ns = words(strategies)
nm = words(mixes)
array keys[ns * nm]
array src[ns * nm]
is(s, m) = strcol(1) eq s && strcol(2) eq m
do for [i = 1:ns] {
    do for [j = 1:nm] {
        s = word(strategies, i)
        m = word(mixes, j)
        k = (i - 1) * nm + j
        stats in using (is(s, m) ? 1 : 0) nooutput
        src[k] = '$none'
        keys[k] = ""
        if (STATS_sum > 0) {
            src[k] = sprintf('$s%d', k)
            eval sprintf('set table %s separator comma', src[k])
            plot in using 3:5:6:7 with table if (is(s, m))
            unset table
            keys[k] = s . " " . m
        }
        if (slopes ne "" && STATS_sum > 0) {
            stats slopes using (is(s, m) ? 1 : 0) nooutput
            if (STATS_sum > 0) {
                stats slopes using (is(s, m) ? $6 : 0) nooutput
                keys[k] = keys[k] . sprintf(": %+.1f ns per doubling of n", STATS_sum)
            }
        }
    }
}
set xrange [xlo : xhi]
set yrange [0 : yhi]
set logscale x 10
set format x "%.0s%c"
set grid xtics ytics lc rgb "#dddddd"
set border 3
set tics nomirror
set key top left inside box opaque
set title "Cost per operation against pending tasks (median; bar: min to max)"
set xlabel "pending tasks n (log scale)"
set ylabel "ns per operation (enqueue + claim)"
# Series k: colour by strategy, dash and point by mix (a parenthesis
# after dt would read as a dash pattern).
colour(k) = (k - 1) / nm + 1
dash(k) = (k - 1) % nm + 1
point(k) = 7 - (k - 1) % nm
plot for [k = 1:ns * nm] src[k] using 1:2:3:4 with yerrorlines \
        title keys[k] lt colour(k) dt dash(k) lw 2 pt point(k) ps 0.9
