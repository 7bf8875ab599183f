# step_2.gp: written by datm; rerun with `gnuplot step_2.gp` in this directory.
# Data: step_2.dat (text). Edit freely to restyle.
W = 800; H = 500
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size W,H noenhanced font 'sans,10'
} else {
    set terminal png size W,H noenhanced
}
set output 'step_2.png'
set title '20News, 128-64-32: TLASGR step size of layer 2 (mean eps / M_k)'
set xlabel 'mini-batches'
set ylabel 'step size'
set logscale y
set format y '%g'
set key outside right top
set grid
plot 'step_2.dat' index 0 using 1:2 with lines lw 1.5 lc 1 dt 1 title 'whai paper', \
     'step_2.dat' index 1 using 1:2 with lines lw 1.5 lc 2 dt 1 title 'whai code', \
     'step_2.dat' index 2 using 1:2 with lines lw 1.5 lc 3 dt 1 title 'iwhai paper', \
     'step_2.dat' index 3 using 1:2 with lines lw 1.5 lc 4 dt 1 title 'ghai paper', \
     'step_2.dat' index 4 using 1:2 with lines lw 1.5 lc 5 dt 1 title 'whai datm', \
     'step_2.dat' index 5 using 1:2 with lines lw 1.5 lc 6 dt 1 title 'dlda-tlasgr paper', \
     'step_2.dat' index 6 using 1:2 with lines lw 1.5 lc 7 dt 1 title 'iwhai datm', \
     'step_2.dat' index 7 using 1:2 with lines lw 1.5 lc 8 dt 1 title 'ghai datm'
set terminal svg size W,H noenhanced dynamic
set output 'step_2.svg'
replot
unset output
