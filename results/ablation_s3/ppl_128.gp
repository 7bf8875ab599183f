# ppl_128.gp: written by datm; rerun with `gnuplot ppl_128.gp` in this directory.
# Data: ppl_128.dat (text). Edit freely to restyle.
W = 800; H = 500
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size W,H noenhanced font 'sans,10'
} else {
    set terminal png size W,H noenhanced
}
set output 'ppl_128.png'
set title 'held-out perplexity'
set xlabel 'iteration (mini-batches)'
set ylabel 'perplexity'
set key outside right top
set grid
plot 'ppl_128.dat' index 0 using 1:2 with linespoints lw 1.5 title 'whai_128', \
     'ppl_128.dat' index 1 using 1:2 with linespoints lw 1.5 title 'wai_128', \
     'ppl_128.dat' index 2 using 1:2 with linespoints lw 1.5 title 'iwhai_128', \
     'ppl_128.dat' index 3 using 1:2 with linespoints lw 1.5 title 'ghai_128'
set terminal svg size W,H noenhanced dynamic
set output 'ppl_128.svg'
replot
unset output
