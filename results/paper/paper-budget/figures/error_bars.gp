# error_bars.gp: written by datm; rerun with `gnuplot error_bars.gp` in this directory.
# Data: error_bars.dat (text). Edit freely to restyle.
W = 800; H = 500
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size W,H noenhanced font 'sans,10'
} else {
    set terminal png size W,H noenhanced
}
set output 'error_bars.png'
set title 'Test error rate by data set and model'
set ylabel 'test error rate'
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key outside right top
set grid ytics
set datafile missing 'NaN'
set yrange [0:*]
plot 'error_bars.dat' using 2:xtic(1) title 'DATM + LR', \
     'error_bars.dat' using 3 title 'sDATM-L', \
     'error_bars.dat' using 4 title 'sDATM-N'
set terminal svg size W,H noenhanced dynamic
set output 'error_bars.svg'
replot
unset output
