# Predicted against measured, one point per measured row (bench/accuracy.sh --plots DIR).
# Input `data`: the TSV of jobgen_accuracy --tsv (split, file, id, memory measured/predicted in
# GiB, throughput measured/predicted in tokens/s per GPU; "-" where a row has no such figure).
# The band around y = x is the issue's tolerance: memory +-20 %, throughput x/ 1.35.
set terminal svg size 720,640 dynamic font "sans,12"
set datafile separator "\t"
set datafile missing "-"
set key top left
set grid
set logscale xy
set size square

set output out."/memory.svg"
set title "Peak memory per GPU (GiB): predicted vs measured"
set xlabel "measured GiB"
set ylabel "predicted GiB"
set xrange [1:100]
set yrange [1:100]
plot x title "exact" lc rgb "black", \
     1.2*x notitle dt 2 lc rgb "gray", 0.8*x title "+-20 %" dt 2 lc rgb "gray", \
     data using (strcol(1) eq "calibration" ? $4 : NaN):5 title "calibration" pt 7 ps 0.6 lc rgb "#1f77b4", \
     data using (strcol(1) eq "held-back" ? $4 : NaN):5 title "held back" pt 5 ps 0.6 lc rgb "#d62728"

set output out."/throughput.svg"
set title "Throughput (tokens/s per GPU): predicted vs measured"
set xlabel "measured tokens/s per GPU"
set ylabel "predicted tokens/s per GPU"
set xrange [50:200000]
set yrange [50:200000]
plot x title "exact" lc rgb "black", \
     1.35*x notitle dt 2 lc rgb "gray", x/1.35 title "x/ 1.35" dt 2 lc rgb "gray", \
     data using (strcol(1) eq "calibration" ? $6 : NaN):7 title "calibration" pt 7 ps 0.6 lc rgb "#1f77b4", \
     data using (strcol(1) eq "held-back" ? $6 : NaN):7 title "held back" pt 5 ps 0.6 lc rgb "#d62728"
