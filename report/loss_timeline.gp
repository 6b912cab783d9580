# loss_timeline.gp -- one fault of the loss experiment over time: one panel
# per strategy (its first repeat under that fault), x = seconds since the
# trial's first record, bars = deliveries per time bucket (left axis; the
# bucket is the step between the rows, 10-100 ms), first deliveries in
# blue and repeated ones (redeliveries after a lease, duplicates) stacked
# on them in orange and named in the key where there are any,
# line = share of the enqueued tasks delivered so far (right axis, %), the
# trial's fault windows (F begin .. end records) shaded in front of the
# bars.  A window shorter than 1% of the x axis (a kill, a quick restart)
# is drawn that wide so it stays visible; a consumer kill is also marked by
# an arrow labelled "kill".
# usage: gnuplot -c report/loss_timeline.gp in.csv out.svg|out.png
# in.csv (report/sec_loss.c): block 0 the windows "panel,t0_s,t1_s,kill"
# (panel 1..N; kill 1 for a consumer kill; a row with panel 0 is padding),
# then one block per panel, blocks two blank lines apart, each starting
# with the header "t_s,<label>,redelivered,delivered_pct" and a row per
# bucket (t_s: its start; <label> the first deliveries).
if (ARGC < 2) { print "usage: gnuplot -c loss_timeline.gp in.csv out.{svg,png}"; exit status 2 }
in = ARG1
out = ARG2
set datafile separator comma
set datafile commentschars "#"

# Panels, windows and the x range, before the terminal (its height
# depends on the number of panels).
stats in using 1 nooutput
np = STATS_blocks - 1
if (np < 1) { print "loss_timeline.gp: no panel in ", in; exit status 1 }
stats in index 0 using 1 nooutput
nw = STATS_records
array WP[nw]
array W0[nw]
array W1[nw]
array WK[nw]
stats in index 0 using (WP[int($0)+1] = $1, W0[int($0)+1] = $2, W1[int($0)+1] = $3, WK[int($0)+1] = $4) nooutput
xmax = 0
do for [k=1:np] {
    stats in index k using 1 nooutput
    if (STATS_max > xmax) { xmax = STATS_max }
}
do for [j=1:nw] { if (W1[j] > xmax) { xmax = W1[j] } }
# the bucket: the step between the rows of panel 1 (evenly spaced from 0)
stats in index 1 using 1 nooutput
bw = (STATS_records > 1 && STATS_max > STATS_min) ? (STATS_max - STATS_min) / (STATS_records - 1) : 0.1
xmax = xmax + bw
minw = xmax * 0.01

ph = 150
height = ph * np + 90
if (strstrt(out, ".svg") == strlen(out) - 3) {
    set terminal svg size 780,height dynamic noenhanced font "DejaVu Sans,11" background "white"
} else {
    if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
        set terminal pngcairo size 780,height noenhanced font "DejaVu Sans,9" background "white"
    } else {
        set terminal png size 780,height
    }
}
set output out

set multiplot layout np,1 margins 0.09,0.90,(60.0/height),(1.0-30.0/height) spacing 0,0.012
set xrange [0:xmax]
set yrange [0:*]
set y2range [0:105]
set ytics nomirror
set y2tics 0,50,100 textcolor rgb "#555555"
set border 11
set grid xtics lc rgb "#e4e4e4"
set key inside right top noenhanced samplen 1 nobox
set style fill solid 0.7 noborder
set boxwidth bw absolute
do for [k=1:np] {
    unset object
    unset arrow
    unset label
    do for [j=1:nw] {
        if (WP[j] == k) {
            x0 = W0[j]
            x1 = W1[j]
            if (WK[j] > 0) {
                set arrow from x0, graph 1 to x0, graph 0.8 front lc rgb "#d62728" lw 1.5 head filled size screen 0.008,20
                set label "kill" at x0, graph 0.98 front offset 0.4,0 tc rgb "#d62728" font ",8"
            }
            if (x1 - x0 < minw) { c = (x0 + x1) / 2; x0 = c - minw / 2; x1 = c + minw / 2 }
            set object rect from x0, graph 0 to x1, graph 1 front fillcolor rgb "#d62728" fillstyle transparent solid 0.25 noborder
        }
    }
    stats in index k using 3 nooutput
    rep = STATS_max
    if (k == 1) { set title sprintf("deliveries per %g ms (bars; orange: repeated), %% delivered (line); red: faults, arrows: kills", bw * 1000) font ",10" } else { unset title }
    if (k == np) { set xlabel "seconds since the trial's first record"; set format x "%g" } else { unset xlabel; set format x "" }
    set ylabel sprintf("per %g ms", bw * 1000) font ",9"
    plot in index k using ($1 + bw / 2):($2 + $3) with boxes lc rgb "#ff7f0e" title (rep > 0 ? "redelivered or repeated" : ""), \
         in index k using ($1 + bw / 2):2 with boxes lc rgb "#1f77b4" title columnheader(2), \
         in index k using ($1 + bw):4 axes x1y2 with lines lw 1.5 lc rgb "#333333" notitle
}
unset multiplot
