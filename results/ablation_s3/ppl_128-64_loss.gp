# ppl_128-64_loss.gp: written by datm; rerun with `gnuplot ppl_128-64_loss.gp` in this directory.
# Data: ppl_128-64_loss.dat (text). Edit freely to restyle.
W = 800; H = 500
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size W,H noenhanced font 'sans,10'
} else {
    set terminal png size W,H noenhanced
}
set output 'ppl_128-64_loss.png'
set title 'training loss per document'
set xlabel 'iteration (mini-batches)'
set ylabel 'loss'
set key outside right top
set grid
plot 'ppl_128-64_loss.dat' index 0 using 1:2 with linespoints lw 1.5 title 'whai_128-64', \
     'ppl_128-64_loss.dat' index 1 using 1:2 with linespoints lw 1.5 title 'wai_128-64', \
     'ppl_128-64_loss.dat' index 2 using 1:2 with linespoints lw 1.5 title 'iwhai_128-64', \
     'ppl_128-64_loss.dat' index 3 using 1:2 with linespoints lw 1.5 title 'ghai_128-64'
set terminal svg size W,H noenhanced dynamic
set output 'ppl_128-64_loss.svg'
replot
unset output
