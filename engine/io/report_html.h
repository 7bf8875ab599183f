/* engine/io/report_html.h: `datm report`: one self-contained HTML file that explores a run —
 * the topic hierarchy across layers (a node per topic sized by its usage and coloured by its
 * NPMI, links by Phi(l) weight; a click shows the topic's words, coherence, usage, children
 * and parents), the training curves and the metrics. Everything is inline (data as JSON, SVG
 * drawn by a small script): the file opens without network. After drawing, the page writes
 * the counts it drew and the script errors it met into <body data-datm-nodes, data-datm-links,
 * data-datm-errors> and #datm-status, which the browser test reads. */
#ifndef DATM_IO_REPORT_HTML_H
#define DATM_IO_REPORT_HTML_H

#include "core/core.h"

/* Writes the page of RUN (a run directory or result.h5) to out_path (written to a temporary
 * name and renamed). Topics come from /topics (or from /model/phi_<l> when /topics is absent,
 * without coherence). */
int datm_report_html_write(const char *run, const char *out_path, datm_error *err);

/* The page's script and style (report_page.c). */
extern const char datm_report_page_head[];   /* <!doctype html> ... up to the data */
extern const char datm_report_page_tail[];   /* the script that draws, and </html> */

#endif
