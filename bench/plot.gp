# bench/plot.gp: GB/s per shape and ISA of a `make bench` run (one panel per
# dtype, bars per ISA, log scale) with the ceilings measured in the same run
# drawn across each group: memcpy, non-temporal copy, in-place RMW pass.
# Reads the --dat file of build/bench.  Usage:
#   gnuplot -e "datafile='out/bench.dat'; outfile='out/bench.png'" bench/plot.gp
if (!exists("datafile")) datafile = 'out/bench.dat'
if (!exists("outfile")) outfile = 'out/bench.png'

stats datafile using 0 nooutput
nblocks = STATS_blocks

set terminal pngcairo size 1500, 520 * nblocks font "sans,10"
set output outfile
set multiplot layout nblocks, 1 title "kgen bench: GB/s (read + written) per shape and ISA, 1 thread; lines: ceilings over the same bytes"
set logscale y
set yrange [0.5:400]
set ylabel "GB/s"
set grid ytics
set xtics rotate by 20 right noenhanced font "sans,9"
set key outside right top noenhanced
set style fill solid 0.85 border -1
set boxwidth 0.2
set bmargin 6
set rmargin 16
do for [i = 0:nblocks - 1] {
  stats datafile index i using (dt = strcol(9), 1) nooutput
  set title dt
  plot datafile index i using ($0 - 0.3):2 with boxes lc rgb "#aaaaaa" title "scalar", \
       '' index i using ($0 - 0.1):3 with boxes lc rgb "#4477aa" title "avx2", \
       '' index i using ($0 + 0.1):4 with boxes lc rgb "#cc3311" title "avx512", \
       '' index i using ($0 + 0.3):5 with boxes lc rgb "#228833" title "neon", \
       '' index i using ($0 - 0.45):6:(0.9):(0) with vectors nohead lw 2.5 lc rgb "black" title "memcpy", \
       '' index i using ($0 - 0.45):7:(0.9):(0) with vectors nohead lw 2.5 dt 2 lc rgb "#ee7733" title "NT copy", \
       '' index i using ($0 - 0.45):8:(0.9):(0) with vectors nohead lw 2.5 dt 3 lc rgb "#aa3377" title "in-place RMW", \
       '' index i using 0:(NaN):xtic(1) notitle
}
unset multiplot
