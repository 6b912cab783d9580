# idle_cost.gp -- what an idle queue costs Redis, per strategy: Redis
# commands per second (left) and server CPU in ms per second (right),
# both on a log scale (a strategy at 0 shows no bar).
# usage: gnuplot -c report/idle_cost.gp in.csv out.svg|out.png
# in.csv: strategy,redis_commands_per_s,server_cpu_ms_per_s (sections.c)
if (ARGC < 2) { print "usage: gnuplot -c idle_cost.gp in.csv out.{svg,png}"; exit status 2 }
in = ARG1
out = ARG2
if (strstrt(out, ".svg") == strlen(out) - 3) {
    set terminal svg size 900,460 dynamic noenhanced font "DejaVu Sans,11" background "white"
} else {
    if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
        set terminal pngcairo size 900,460 noenhanced font "DejaVu Sans,9" background "white"
    } else {
        set terminal png size 900,460
    }
}
set output out
set datafile separator comma
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.7 border -1
set boxwidth 0.8
set grid ytics lc rgb "#dddddd"
set border 3
set tics nomirror
set xtics rotate by -45 scale 0 font ",8"
# The first CSV line is the header: consume it as titles, draw no key.
set key autotitle columnheader
unset key
set logscale y 10
set bmargin 9
set multiplot layout 1,2 title "Idle queue: cost to the Redis server"
set title "Redis commands per second"
set yrange [0.1:*]
plot in using ($2 > 0 ? $2 : 1e-9):xtic(1) lc rgb "#4477aa"
set title "server CPU, ms per second"
set yrange [0.1:*]
plot in using ($3 > 0 ? $3 : 1e-9):xtic(1) lc rgb "#cc6677"
unset multiplot
