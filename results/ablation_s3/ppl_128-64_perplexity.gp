# ppl_128-64_perplexity.gp: written by datm; rerun with `gnuplot ppl_128-64_perplexity.gp` in this directory.
# Data: ppl_128-64_perplexity.dat (text). Edit freely to restyle.
W = 800; H = 500
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size W,H noenhanced font 'sans,10'
} else {
    set terminal png size W,H noenhanced
}
set output 'ppl_128-64_perplexity.png'
set title 'perplexity by name'
set xlabel 'name'
set ylabel 'perplexity'
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key outside right top
set grid ytics
set datafile missing 'NaN'
set yrange [0:*]
plot 'ppl_128-64_perplexity.dat' using 2:xtic(1) title 'perplexity'
set terminal svg size W,H noenhanced dynamic
set output 'ppl_128-64_perplexity.svg'
replot
unset output
