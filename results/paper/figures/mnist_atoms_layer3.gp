# mnist_atoms_layer3.gp: written by datm; rerun with `gnuplot mnist_atoms_layer3.gp` in this directory.
# Data: mnist_atoms_layer3.dat (text). Edit freely to restyle.
W = 1200; H = 1200
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size W,H noenhanced font 'sans,10'
} else {
    set terminal png size W,H noenhanced
}
set output 'mnist_atoms_layer3.png'
set title 'layer 3: 32 of 32 atoms, most used first'
unset key
unset xtics
unset ytics
unset colorbox
set size ratio -1
set xrange [-0.5:174.5]
set yrange [174.5:-0.5]
set palette gray negative
set cbrange [0:1]
set datafile missing 'NaN'
plot 'mnist_atoms_layer3.dat' matrix with image
set terminal svg size W,H noenhanced dynamic
set output 'mnist_atoms_layer3.svg'
replot
unset output
