# step_size.gp: written by datm; rerun with `gnuplot step_size.gp` in this directory.
# Data: step_size.dat (text). Edit freely to restyle.
W = 800; H = 500
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size W,H noenhanced font 'sans,10'
} else {
    set terminal png size W,H noenhanced
}
set output 'step_size.png'
set title 'dlda-tlasgr_128: mean effective step size eps/M_k per layer'
set xlabel 'iteration (mini-batches)'
set ylabel 'eps / M_k'
set logscale y
set format y '%g'
set key outside right top
set grid
plot 'step_size.dat' index 0 using 1:2 with linespoints lw 1.5 title 'layer 1'
set terminal svg size W,H noenhanced dynamic
set output 'step_size.svg'
replot
unset output
