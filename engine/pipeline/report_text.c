/* engine/pipeline/report_text.c: the text pieces of the report (report_internal.h) —
 * templates filled from a run's labels and metrics, numbers, escaping for markdown, CSV and
 * JSON, relative paths, and files written under a temporary name. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pipeline/compose.h"
#include "pipeline/report_internal.h"

static int format_ok(const char *f)
{
    const size_t n = f ? strlen(f) : 0;
    return n >= 2 && n < 16 && f[0] == '%' && strchr("eEfgG", f[n - 1]) &&
           strspn(f + 1, "0123456789.") == n - 2;
}

void rep_num(char *out, size_t size, double v, const char *fmt)
{
    if (!isfinite(v)) { rep_num_exact(out, size, v); return; }
    snprintf(out, size, format_ok(fmt) ? fmt : "%.4g", v);
}

void rep_num_exact(char *out, size_t size, double v)
{
    if (isnan(v)) { snprintf(out, size, "nan"); return; }
    if (isinf(v)) { snprintf(out, size, v > 0 ? "inf" : "-inf"); return; }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, size, "%.*g", prec, v);
        if (strtod(out, NULL) == v) return;
    }
}

/* An integral number as an integer, else in fmt. */
static void fill_num(char *out, size_t size, double v, const char *fmt)
{
    if (v == 0) snprintf(out, size, "0");
    else if (v == nearbyint(v) && fabs(v) < 1e15) snprintf(out, size, "%.0f", v);
    else rep_num(out, size, v, fmt);
}

int rep_fill(const rep_ctx *c, int i, const char *tmpl, const char *fmt, char *out, size_t size)
{
    size_t len = 0;
    int ok = 0;
    out[0] = '\0';
    for (const char *s = tmpl; *s && len + 1 < size;) {
        const char *close = *s == '{' ? strchr(s, '}') : NULL;
        if (!close) {
            out[len++] = *s++;
            continue;
        }
        char key[256], piece[300];
        snprintf(key, sizeof key, "%.*s", (int)(close - s - 1), s + 1);
        s = close + 1;
        const char *name = key;
        int want_label = 1, want_metric = 1;
        if (!strncmp(key, "label:", 6)) { name = key + 6; want_metric = 0; }
        else if (!strncmp(key, "metric:", 7)) { name = key + 7; want_label = 0; }
        const char *lab = want_label ? datm_pipe_run_label(c->runs[i].run, name) : NULL;
        double v;
        if (lab) snprintf(piece, sizeof piece, "%s", lab);
        else if (want_metric && rep_metric(c, i, name, &v) == 0) fill_num(piece, sizeof piece, v, fmt);
        else { snprintf(piece, sizeof piece, "{%s}", key); ok = -1; }
        const size_t n = strlen(piece);
        if (len + n + 1 > size) break;
        memcpy(out + len, piece, n);
        len += n;
    }
    out[len] = '\0';
    return ok;
}

void rep_md_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|') fputs("\\|", f);
        else if (*s == '\n' || *s == '\r') fputc(' ', f);
        else fputc(*s, f);
    }
}

void rep_md_cell(FILE *f, const rep_cell *x)
{
    char buf[64];
    switch (x->kind) {
    case REP_NUMBER: rep_num(buf, sizeof buf, x->v, x->fmt); fputs(buf, f); break;
    case REP_TEXT: rep_md_text(f, x->text[0] ? x->text : "-"); break;
    default: fputc('-', f); break;
    }
}

void rep_csv_cell(FILE *f, const rep_cell *x)
{
    char buf[64];
    switch (x->kind) {
    case REP_NUMBER: rep_num_exact(buf, sizeof buf, x->v); fputs(buf, f); break;
    case REP_TEXT: datm_csv_field(f, x->text[0] ? x->text : "-"); break;
    default: fputc('-', f); break;
    }
}

void rep_json_cell(FILE *f, const rep_cell *x)
{
    char buf[64];
    if (x->kind == REP_NUMBER && isfinite(x->v)) {
        rep_num_exact(buf, sizeof buf, x->v);
        fputs(buf, f);
    } else if (x->kind == REP_TEXT) {
        datm_json_string(f, x->text);
    } else {
        fputs("null", f);
    }
}

void rep_relpath(const char *target, const char *dir, char *out, size_t size)
{
    char a[PATH_MAX], b[PATH_MAX], head[PATH_MAX];
    /* the longest existing head of target, resolved, then the rest as given */
    snprintf(head, sizeof head, "%s", target);
    const char *tail = "";
    int ok = 0;
    for (;;) {
        if (realpath(head[0] ? head : "/", a)) { ok = 1; break; }
        char *slash = strrchr(head, '/');
        if (!slash) break;
        *slash = '\0';
        tail = target + (slash - head);
    }
    if (ok && *tail) {
        const size_t n = strlen(a);
        snprintf(a + n, sizeof a - n, "%s", n > 1 ? tail : tail + 1);   /* a == "/": no '//' */
        datm_path_normalise(a);
    }
    if (!ok || !realpath(dir, b)) {
        const char *base = strrchr(target, '/');
        snprintf(out, size, "%s", target[0] != '/' ? target : base + 1);
        return;
    }
    /* a and b as "/c1/c2/.../" so that every component ends with '/' */
    strncat(a, "/", sizeof a - strlen(a) - 1);
    if (strcmp(b, "/")) strncat(b, "/", sizeof b - strlen(b) - 1);
    size_t common = 0;   /* length of the common prefix of whole components */
    for (size_t k = 0; a[k] && a[k] == b[k]; k++)
        if (a[k] == '/') common = k + 1;
    size_t len = 0;
    out[0] = '\0';
    for (const char *q = b + common; *q; q++)
        if (*q == '/' && len + 4 < size) { memcpy(out + len, "../", 4); len += 3; }
    snprintf(out + len, size - len, "%s", a + common);
    len = strlen(out);
    if (len && out[len - 1] == '/') out[--len] = '\0';
    if (!len) snprintf(out, size, ".");
}

int rep_mkdir(const char *dir, datm_error *err)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *q = buf + 1;; q++) {
        if (*q == '/' || *q == '\0') {
            const char ch = *q;
            *q = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return datm_error_set(err, DATM_E_IO, "%s: cannot create directory: %s", buf,
                                      strerror(errno));
            *q = ch;
            if (!ch) break;
        }
    }
    return DATM_OK;
}

FILE *rep_open(const rep_ctx *c, const char *rel, datm_error *err)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s.tmp", c->out, rel);
    FILE *f = fopen(path, "w");
    if (!f) datm_error_set(err, DATM_E_IO, "%s: cannot write: %s", path, strerror(errno));
    return f;
}

int rep_close(const rep_ctx *c, FILE *f, const char *rel, datm_error *err)
{
    char tmp[PATH_MAX + 8], path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", c->out, rel);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    const int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        remove(tmp);
        return datm_error_set(err, DATM_E_IO, "%s: write failed", path);
    }
    if (rename(tmp, path) != 0) {
        remove(tmp);
        return datm_error_set(err, DATM_E_IO, "%s: cannot rename %s: %s", path, tmp,
                              strerror(errno));
    }
    return DATM_OK;
}
