# outcomes.gp -- early deliveries (as % of the deliveries) and lost tasks
# (as % of the enqueued tasks) per variant, with 95% Wilson intervals as
# whiskers: a tutorial recipe beside dqlab's default for the same
# strategy.
# usage: gnuplot -c report/outcomes.gp in.csv out.svg|out.png
# in.csv: variant,early_pct,early_lo,early_hi,lost_pct,lost_lo,lost_hi
# (report/sec_loss.c)
if (ARGC < 2) { print "usage: gnuplot -c outcomes.gp in.csv out.{svg,png}"; exit status 2 }
in = ARG1
out = ARG2
if (strstrt(out, ".svg") == strlen(out) - 3) {
    set terminal svg size 760,420 dynamic noenhanced font "DejaVu Sans,11" background "white"
} else {
    if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
        set terminal pngcairo size 760,420 noenhanced font "DejaVu Sans,9" background "white"
    } else {
        set terminal png size 760,420
    }
}
set output out
set datafile separator comma
set key top left box noenhanced
set grid ytics lc rgb "#dddddd"
set border 3
set tics nomirror
set yrange [0:105]
set ylabel "% of the enqueued tasks"
set xtics rotate by -30 scale 0 noenhanced
set bmargin 7
set style fill solid 0.7 border -1
set boxwidth 0.35
set title "Early and lost deliveries: the recipe as written against the default (whiskers: 95% Wilson)"
set xrange [-0.6:*]
plot in using 0:(NaN):xtic(1) skip 1 notitle, \
     in using ($0 - 0.18):2 skip 1 with boxes lc rgb "#cc6677" title "early (of deliveries)", \
     in using ($0 - 0.18):2:3:4 skip 1 with yerrorbars lc rgb "#333333" pt 0 notitle, \
     in using ($0 + 0.18):5 skip 1 with boxes lc rgb "#4477aa" title "lost (of tasks)", \
     in using ($0 + 0.18):5:6:7 skip 1 with yerrorbars lc rgb "#333333" pt 0 notitle
