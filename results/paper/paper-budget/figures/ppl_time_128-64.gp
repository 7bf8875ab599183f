# ppl_time_128-64.gp: written by datm; rerun with `gnuplot ppl_time_128-64.gp` in this directory.
# Data: ppl_time_128-64.dat (text). Edit freely to restyle.
W = 800; H = 500
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size W,H noenhanced font 'sans,10'
} else {
    set terminal png size W,H noenhanced
}
set output 'ppl_time_128-64.png'
set title '20News, 128-64: held-out perplexity against training time'
set xlabel 'training seconds (log scale)'
set ylabel 'held-out perplexity (1,000 test documents)'
set logscale x
set format x '%g'
set key outside right top
set grid
plot 'ppl_time_128-64.dat' index 0 using 1:2 with lines lw 1.5 lc 1 dt 1 title 'whai paper', \
     'ppl_time_128-64.dat' index 1 using 1:2 with lines lw 1.5 lc 2 dt 1 title 'whai code', \
     'ppl_time_128-64.dat' index 2 using 1:2 with lines lw 1.5 lc 3 dt 1 title 'wai paper', \
     'ppl_time_128-64.dat' index 3 using 1:2 with lines lw 1.5 lc 4 dt 1 title 'iwhai paper', \
     'ppl_time_128-64.dat' index 4 using 1:2 with lines lw 1.5 lc 5 dt 1 title 'ghai paper', \
     'ppl_time_128-64.dat' index 5 using 1:2 with lines lw 1.5 lc 6 dt 1 title 'whai datm', \
     'ppl_time_128-64.dat' index 6 using 1:2 with lines lw 1.5 lc 7 dt 1 title 'dlda-gibbs paper', \
     'ppl_time_128-64.dat' index 7 using 1:2 with lines lw 1.5 lc 8 dt 1 title 'dlda-tlasgr paper', \
     'ppl_time_128-64.dat' index 8 using 1:2 with lines lw 1.5 lc 1 dt 2 title 'iwhai datm', \
     'ppl_time_128-64.dat' index 9 using 1:2 with lines lw 1.5 lc 2 dt 2 title 'ghai datm', \
     'ppl_time_128-64.dat' index 10 using 1:2 with lines lw 1.5 lc 3 dt 2 title 'wai datm'
set terminal svg size W,H noenhanced dynamic
set output 'ppl_time_128-64.svg'
replot
unset output
