# error_depth_width.gp: written by datm; rerun with `gnuplot error_depth_width.gp` in this directory.
# Data: error_depth_width.dat (text). Edit freely to restyle.
W = 800; H = 500
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size W,H noenhanced font 'sans,10'
} else {
    set terminal png size W,H noenhanced
}
set output 'error_depth_width.png'
set title 'digits: sDATM-N test error by depth and first-layer width'
set ylabel 'test error rate'
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key outside right top
set grid ytics
set datafile missing 'NaN'
set yrange [0:*]
plot 'error_depth_width.dat' using 2:xtic(1) title 'w = 16', \
     'error_depth_width.dat' using 3 title 'w = 32', \
     'error_depth_width.dat' using 4 title 'w = 64'
set terminal svg size W,H noenhanced dynamic
set output 'error_depth_width.svg'
replot
unset output
