# perplexity_vs_time.gp: written by datm; rerun with `gnuplot perplexity_vs_time.gp` in this directory.
# Data: perplexity_vs_time.dat (text). Edit freely to restyle.
W = 800; H = 500
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size W,H noenhanced font 'sans,10'
} else {
    set terminal png size W,H noenhanced
}
set output 'perplexity_vs_time.png'
set title 'dlda-tlasgr_128-64-32_e18_s500: per-word perplexity of the evaluation documents'
set xlabel 'wall time (s)'
set ylabel 'perplexity'
set key outside right top
set grid
plot 'perplexity_vs_time.dat' index 0 using 1:2 with linespoints lw 1.5 title 'held-out words', \
     'perplexity_vs_time.dat' index 1 using 1:2 with linespoints lw 1.5 title 'observed words'
set terminal svg size W,H noenhanced dynamic
set output 'perplexity_vs_time.svg'
replot
unset output
