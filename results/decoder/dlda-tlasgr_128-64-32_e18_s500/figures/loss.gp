# loss.gp: written by datm; rerun with `gnuplot loss.gp` in this directory.
# Data: loss.dat (text). Edit freely to restyle.
W = 800; H = 500
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size W,H noenhanced font 'sans,10'
} else {
    set terminal png size W,H noenhanced
}
set output 'loss.png'
set title 'dlda-tlasgr_128-64-32_e18_s500: training loss per document'
set xlabel 'iteration (mini-batches)'
set ylabel 'loss'
set key outside right top
set grid
plot 'loss.dat' index 0 using 1:2 with linespoints lw 1.5 title 'loss'
set terminal svg size W,H noenhanced dynamic
set output 'loss.svg'
replot
unset output
