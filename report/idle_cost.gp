# idle_cost.gp -- what an idle queue costs Redis, per strategy: Redis
# commands per second (left) and server CPU in ms per second (right),
# both on a log scale.  Bars are coloured by how the consumers wait
# (polling, blocking in Redis, no Redis at all); a value of 0, which a log
# axis cannot show, is drawn as a stub at the bottom labelled "0" (the
# strategies without Redis send no command).
# usage: gnuplot -c report/idle_cost.gp in.csv out.svg|out.png
# in.csv: strategy,redis_commands_per_s,server_cpu_ms_per_s,waits
# (waits 1 polling, 2 blocking, 3 no Redis; report/sec_idle.c)
if (ARGC < 2) { print "usage: gnuplot -c idle_cost.gp in.csv out.{svg,png}"; exit status 2 }
in = ARG1
out = ARG2
if (strstrt(out, ".svg") == strlen(out) - 3) {
    set terminal svg size 900,480 dynamic noenhanced font "DejaVu Sans,11" background "white"
} else {
    if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
        set terminal pngcairo size 900,480 noenhanced font "DejaVu Sans,9" background "white"
    } else {
        set terminal png size 900,480
    }
}
set output out
set datafile separator comma
set linetype 1 lc rgb "#cc6677"
set linetype 2 lc rgb "#4477aa"
set linetype 3 lc rgb "#999999"
set style fill solid 0.75 border -1
set boxwidth 0.7
set grid ytics lc rgb "#dddddd"
set border 3
set tics nomirror
set xtics rotate by -45 scale 0 font ",8" noenhanced
set logscale y 10
set bmargin 9
set key top right samplen 1 font ",8"
floor = 0.1
stub = 0.13
h(v) = v > 0 ? v : stub
set multiplot layout 1,2 title "Idle queue: cost to the Redis server (colour: how consumers wait)"
set title "Redis commands per second"
set yrange [floor:*]
plot in using 0:(h($2)):4:xtic(1) skip 1 with boxes lc variable notitle, \
     in using 0:(stub):($2 > 0 ? "" : "0") skip 1 with labels offset 0,0.6 font ",8" notitle, \
     NaN with boxes lt 1 title "polling", NaN with boxes lt 2 title "blocking", \
     NaN with boxes lt 3 title "no Redis"
set title "server CPU, ms per second"
set yrange [floor:*]
plot in using 0:(h($3)):4:xtic(1) skip 1 with boxes lc variable notitle, \
     in using 0:(stub):($3 > 0 ? "" : "0") skip 1 with labels offset 0,0.6 font ",8" notitle
unset multiplot
