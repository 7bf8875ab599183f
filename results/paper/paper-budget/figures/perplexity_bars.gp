# perplexity_bars.gp: written by datm; rerun with `gnuplot perplexity_bars.gp` in this directory.
# Data: perplexity_bars.dat (text). Edit freely to restyle.
W = 800; H = 500
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size W,H noenhanced font 'sans,10'
} else {
    set terminal png size W,H noenhanced
}
set output 'perplexity_bars.png'
set title '20News: held-out perplexity by model and depth'
set ylabel 'held-out perplexity'
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key outside right top
set grid ytics
set datafile missing 'NaN'
set yrange [0:*]
plot 'perplexity_bars.dat' using 2:xtic(1) title 'whai paper', \
     'perplexity_bars.dat' using 3 title 'whai code', \
     'perplexity_bars.dat' using 4 title 'wai paper', \
     'perplexity_bars.dat' using 5 title 'iwhai paper', \
     'perplexity_bars.dat' using 6 title 'ghai paper', \
     'perplexity_bars.dat' using 7 title 'whai datm', \
     'perplexity_bars.dat' using 8 title 'dlda-gibbs paper', \
     'perplexity_bars.dat' using 9 title 'dlda-tlasgr paper', \
     'perplexity_bars.dat' using 10 title 'iwhai datm', \
     'perplexity_bars.dat' using 11 title 'ghai datm', \
     'perplexity_bars.dat' using 12 title 'wai datm'
set terminal svg size W,H noenhanced dynamic
set output 'perplexity_bars.svg'
replot
unset output
