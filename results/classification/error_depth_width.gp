# sDATM-N test error vs depth, one line per first-layer width (pipelines/classification.sh)
set xlabel 'depth L (layers)'
set ylabel 'test error (%)'
set title 'sDATM-N on digits: error vs depth and width'
set key top right
set grid
set xtics 1
plot 'error_depth_width.dat' using 1:2 with linespoints lw 2 title 'width 16', 'error_depth_width.dat' using 1:3 with linespoints lw 2 title 'width 32', 'error_depth_width.dat' using 1:4 with linespoints lw 2 title 'width 64'
