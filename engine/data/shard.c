/* engine/data/shard.c: reading and writing the sharded binary corpus (format in shard.h).
 * Reads check everything a damaged file could break, so that a training run over millions
 * of documents stops at the first bad byte with the file named, never on garbage counts. */
#include "data/shard.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define IDX_MAGIC   "DATMIDX1"
#define SHARD_MAGIC "DATMCSR1"
#define FMT_VERSION 1u
#define IDX_HEAD    (8 + 4 + 4 + 8 * 5)
#define IDX_ENTRY   (8 * 3 + 4 + 4)
#define SHARD_HEAD  (8 + 4 + 4 + 8 * 4 + 4 + 4)

/* ---- little-endian fields (the format is little-endian; so is every machine datm targets,
 * which the magic check of a read confirms) ---- */

static void put_u32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put_u64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get_u32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get_u64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static uint32_t crc_of(uint32_t crc, const void *p, size_t n)
{
    return (uint32_t)crc32_z(crc, (const Bytef *)p, n);
}

static uint64_t fnv1a(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint64_t content_hash(int64_t V, const datm_shard_info *sh, int n)
{
    uint64_t h = fnv1a(0xcbf29ce484222325ull, (uint64_t)V);
    for (int k = 0; k < n; k++) {
        h = fnv1a(h, (uint64_t)sh[k].n_docs);
        h = fnv1a(h, (uint64_t)sh[k].nnz);
        h = fnv1a(h, sh[k].crc);
    }
    return h;
}

void datm_shardset_hash_hex(const datm_shardset *s, char out[17])
{
    snprintf(out, 17, "%016llx", (unsigned long long)s->content_hash);
}

static void shard_file(const char *dir, int k, char *out, size_t size)
{
    snprintf(out, size, "%s/shard-%06d.bin", dir, k);
}

int datm_shards_path(const char *dir, const char *split, char *out, size_t size)
{
    snprintf(out, size, "%s/%s.shards", dir, split);
    struct stat st;
    return stat(out, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---- reading ---- */

static int read_exact(FILE *f, void *p, size_t n, const char *path, const char *what,
                      datm_error *err)
{
    if (n && fread(p, 1, n, f) != n)
        return datm_error_set(err, DATM_E_FORMAT, "%s: truncated (%s ends early)", path, what);
    return DATM_OK;
}

int datm_shardset_open(const char *shard_dir, datm_shardset *s, datm_error *err)
{
    memset(s, 0, sizeof *s);
    if (strlen(shard_dir) >= sizeof s->dir - 16)
        return datm_error_set(err, DATM_E_INVALID, "%s: path too long", shard_dir);
    snprintf(s->dir, sizeof s->dir, "%s", shard_dir);
    char path[1100];
    snprintf(path, sizeof path, "%s/index.bin", shard_dir);
    FILE *f = fopen(path, "rb");
    if (!f) return datm_error_set(err, DATM_E_IO, "%s: cannot open (%s)", path, strerror(errno));
    unsigned char head[IDX_HEAD];
    unsigned char *tab = NULL;
    int rc = read_exact(f, head, sizeof head, path, "header", err);
    if (!rc && memcmp(head, IDX_MAGIC, 8) != 0)
        rc = datm_error_set(err, DATM_E_FORMAT, "%s: not a datm shard index (magic)", path);
    if (!rc && get_u32(head + 8) != FMT_VERSION)
        rc = datm_error_set(err, DATM_E_FORMAT, "%s: format version %u (this datm reads %u)",
                            path, get_u32(head + 8), FMT_VERSION);
    uint32_t n = rc ? 0 : get_u32(head + 12);
    if (!rc && (n < 1 || n > 100000000u))
        rc = datm_error_set(err, DATM_E_FORMAT, "%s: %u shards", path, n);
    if (!rc) {
        tab = malloc((size_t)n * IDX_ENTRY + 4);
        if (!tab) rc = datm_error_set(err, DATM_E_NOMEM, "%s: out of memory", path);
    }
    if (!rc) rc = read_exact(f, tab, (size_t)n * IDX_ENTRY + 4, path, "shard table", err);
    if (!rc && fgetc(f) != EOF)
        rc = datm_error_set(err, DATM_E_FORMAT, "%s: trailing bytes after the index", path);
    fclose(f);
    if (!rc) {
        uint32_t crc = crc_of(crc_of(0, head, sizeof head), tab, (size_t)n * IDX_ENTRY);
        if (crc != get_u32(tab + (size_t)n * IDX_ENTRY))
            rc = datm_error_set(err, DATM_E_FORMAT, "%s: checksum mismatch (damaged index)", path);
    }
    if (!rc) {
        s->n_shards = (int)n;
        s->n_docs = (int64_t)get_u64(head + 16);
        s->n_cols = (int64_t)get_u64(head + 24);
        s->nnz = (int64_t)get_u64(head + 32);
        memcpy(&s->tokens, head + 40, 8);
        s->content_hash = get_u64(head + 48);
        s->shard = datm_alloc_array(n, sizeof *s->shard, err);
        if (!s->shard) rc = DATM_E_NOMEM;
    }
    int64_t docs = 0, nnz = 0;
    for (uint32_t k = 0; !rc && k < n; k++) {
        const unsigned char *e = tab + (size_t)k * IDX_ENTRY;
        datm_shard_info *si = &s->shard[k];
        si->first_doc = (int64_t)get_u64(e);
        si->n_docs = (int64_t)get_u64(e + 8);
        si->nnz = (int64_t)get_u64(e + 16);
        si->crc = get_u32(e + 24);
        if (si->first_doc != docs || si->n_docs < 1 || si->nnz < 0)
            rc = datm_error_set(err, DATM_E_FORMAT, "%s: shard %u: documents [%lld, +%lld) do not "
                                "follow the previous shard", path, k, (long long)si->first_doc,
                                (long long)si->n_docs);
        docs += si->n_docs;
        nnz += si->nnz;
    }
    if (!rc && (docs != s->n_docs || nnz != s->nnz || s->n_cols < 1))
        rc = datm_error_set(err, DATM_E_FORMAT, "%s: header says %lld documents, %lld entries, V "
                            "%lld; the shard table sums to %lld and %lld", path,
                            (long long)s->n_docs, (long long)s->nnz, (long long)s->n_cols,
                            (long long)docs, (long long)nnz);
    if (!rc && content_hash(s->n_cols, s->shard, s->n_shards) != s->content_hash)
        rc = datm_error_set(err, DATM_E_FORMAT, "%s: content hash does not match the shard table",
                            path);
    free(tab);
    if (rc) datm_shardset_close(s);
    return rc;
}

void datm_shardset_close(datm_shardset *s)
{
    if (!s) return;
    datm_free(s->shard);
    memset(s, 0, sizeof *s);
}

/* Row pointers, column ids and counts of a shard just read. */
static int check_csr(const char *path, const datm_csr *m, int64_t first_doc, datm_error *err)
{
    if (m->row_ptr[0] != 0 || m->row_ptr[m->n_rows] != m->nnz)
        return datm_error_set(err, DATM_E_FORMAT, "%s: row pointers do not span the %lld entries",
                              path, (long long)m->nnz);
    for (int64_t i = 0; i < m->n_rows; i++) {
        int64_t a = m->row_ptr[i], b = m->row_ptr[i + 1];
        if (b < a || b > m->nnz)
            return datm_error_set(err, DATM_E_FORMAT, "%s: document %lld: bad row pointer", path,
                                  (long long)(first_doc + i + 1));
        for (int64_t j = a; j < b; j++) {
            int32_t c = m->col[j];
            float v = m->val[j];
            if (c < 0 || c >= m->n_cols || (j > a && c <= m->col[j - 1]))
                return datm_error_set(err, DATM_E_FORMAT, "%s: document %lld: word id %d out of "
                                      "range or order (V = %lld)", path,
                                      (long long)(first_doc + i + 1), (int)c + 1,
                                      (long long)m->n_cols);
            if (!(v >= 1.0f && v <= 16777216.0f && v == floorf(v)))
                return datm_error_set(err, DATM_E_FORMAT, "%s: document %lld, word %d: count %.9g "
                                      "(a positive integer is needed)", path,
                                      (long long)(first_doc + i + 1), (int)c + 1, (double)v);
        }
    }
    return DATM_OK;
}

int datm_shard_read(const datm_shardset *s, int k, datm_csr *out, datm_error *err)
{
    DATM_ASSERT(k >= 0 && k < s->n_shards);
    memset(out, 0, sizeof *out);
    const datm_shard_info *si = &s->shard[k];
    char path[1100];
    shard_file(s->dir, k, path, sizeof path);
    FILE *f = fopen(path, "rb");
    if (!f) return datm_error_set(err, DATM_E_IO, "%s: cannot open (%s)", path, strerror(errno));
    unsigned char h[SHARD_HEAD];
    int rc = read_exact(f, h, sizeof h, path, "header", err);
    if (!rc && memcmp(h, SHARD_MAGIC, 8) != 0)
        rc = datm_error_set(err, DATM_E_FORMAT, "%s: not a datm shard (magic)", path);
    if (!rc && crc_of(0, h, SHARD_HEAD - 4) != get_u32(h + SHARD_HEAD - 4))
        rc = datm_error_set(err, DATM_E_FORMAT, "%s: header checksum mismatch (damaged)", path);
    if (!rc && (get_u32(h + 8) != FMT_VERSION || get_u32(h + 12) != (uint32_t)k ||
                (int64_t)get_u64(h + 16) != si->first_doc || (int64_t)get_u64(h + 24) != si->n_docs ||
                (int64_t)get_u64(h + 32) != s->n_cols || (int64_t)get_u64(h + 40) != si->nnz ||
                get_u32(h + 48) != si->crc))
        rc = datm_error_set(err, DATM_E_FORMAT, "%s: header disagrees with %s/index.bin (a shard "
                            "of another corpus or version?)", path, s->dir);
    if (!rc) rc = datm_csr_alloc(out, si->n_docs, s->n_cols, si->nnz, err);
    size_t nr = sizeof(int64_t) * (size_t)(si->n_docs + 1);
    size_t nc = sizeof(int32_t) * (size_t)si->nnz, nv = sizeof(float) * (size_t)si->nnz;
    if (!rc) rc = read_exact(f, out->row_ptr, nr, path, "row pointers", err);
    if (!rc) rc = read_exact(f, out->col, nc, path, "word ids", err);
    if (!rc) rc = read_exact(f, out->val, nv, path, "counts", err);
    if (!rc && fgetc(f) != EOF)
        rc = datm_error_set(err, DATM_E_FORMAT, "%s: trailing bytes after the counts", path);
    if (ferror(f) && !rc)
        rc = datm_error_set(err, DATM_E_IO, "%s: read error (%s)", path, strerror(errno));
    fclose(f);
    if (!rc) {
        uint32_t crc = crc_of(crc_of(crc_of(0, out->row_ptr, nr), out->col, nc), out->val, nv);
        if (crc != si->crc)
            rc = datm_error_set(err, DATM_E_FORMAT, "%s: payload checksum mismatch (damaged)",
                                path);
    }
    if (!rc) rc = check_csr(path, out, si->first_doc, err);
    if (rc) datm_csr_free(out);
    return rc;
}

int datm_shardset_read_first(const datm_shardset *s, int64_t n, datm_csr *out, datm_error *err)
{
    memset(out, 0, sizeof *out);
    if (n <= 0 || n > s->n_docs) n = s->n_docs;
    int64_t nnz = 0;
    int last = 0;
    for (int k = 0; k < s->n_shards && s->shard[k].first_doc < n; k++) last = k;
    for (int k = 0; k < last; k++) nnz += s->shard[k].nnz;
    /* the last shard may be used in part: read it first to count its entries */
    datm_csr sh = {0};
    int rc = datm_shard_read(s, last, &sh, err);
    if (rc) return rc;
    int64_t keep = n - s->shard[last].first_doc;
    nnz += sh.row_ptr[keep];
    rc = datm_csr_alloc(out, n, s->n_cols, nnz, err);
    int64_t row = 0, pos = 0;
    for (int k = 0; !rc && k <= last; k++) {
        datm_csr cur = {0};
        if (k == last) cur = sh;
        else rc = datm_shard_read(s, k, &cur, err);
        if (rc) break;
        int64_t rows = k == last ? keep : cur.n_rows, e = cur.row_ptr[rows];
        memcpy(out->col + pos, cur.col, sizeof *cur.col * (size_t)e);
        memcpy(out->val + pos, cur.val, sizeof *cur.val * (size_t)e);
        for (int64_t i = 1; i <= rows; i++) out->row_ptr[row + i] = pos + cur.row_ptr[i];
        row += rows;
        pos += e;
        if (k != last) datm_csr_free(&cur);
    }
    datm_csr_free(&sh);
    if (rc) datm_csr_free(out);
    return rc;
}

/* ---- writing ---- */

static int remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? 0 : -1;
    char p[1300];
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    return rmdir(dir);
}

int datm_shard_writer_open(datm_shard_writer *w, const char *dir, int64_t n_cols,
                           int64_t docs_per_shard, int overwrite, datm_error *err)
{
    memset(w, 0, sizeof *w);
    if (strlen(dir) >= sizeof w->dir - 16)
        return datm_error_set(err, DATM_E_INVALID, "%s: path too long", dir);
    if (n_cols < 1 || n_cols > INT32_MAX || docs_per_shard < 1)
        return datm_error_set(err, DATM_E_INVALID, "%s: V = %lld, %lld documents per shard", dir,
                              (long long)n_cols, (long long)docs_per_shard);
    struct stat st;
    if (!overwrite && stat(dir, &st) == 0)
        return datm_error_set(err, DATM_E_IO, "%s: exists (use --overwrite to replace it)", dir);
    snprintf(w->dir, sizeof w->dir, "%s", dir);
    snprintf(w->tmp, sizeof w->tmp, "%s.tmp.%ld", dir, (long)getpid());
    remove_tree(w->tmp);
    if (mkdir(w->tmp, 0777) != 0)
        return datm_error_set(err, DATM_E_IO, "%s: cannot create (%s)", w->tmp, strerror(errno));
    w->n_cols = n_cols;
    w->docs_per_shard = docs_per_shard;
    w->pend.n_cols = n_cols;
    w->pend.row_ptr = datm_alloc_array((size_t)docs_per_shard + 1, sizeof(int64_t), err);
    if (!w->pend.row_ptr) { datm_shard_writer_abort(w); return DATM_E_NOMEM; }
    return DATM_OK;
}

static int write_all(FILE *f, const void *p, size_t n)
{
    return n == 0 || fwrite(p, 1, n, f) == n;
}

/* Writes the pending rows as the next shard. */
static int flush_shard(datm_shard_writer *w, datm_error *err)
{
    const datm_csr *m = &w->pend;
    if (m->n_rows == 0) return DATM_OK;
    if (w->n_shards == w->cap_shards) {
        int cap = w->cap_shards ? 2 * w->cap_shards : 64;
        datm_shard_info *n = realloc(w->shard, (size_t)cap * sizeof *n);
        if (!n) return datm_error_set(err, DATM_E_NOMEM, "%s: out of memory", w->dir);
        w->shard = n;
        w->cap_shards = cap;
    }
    size_t nr = sizeof(int64_t) * (size_t)(m->n_rows + 1);
    size_t nc = sizeof(int32_t) * (size_t)m->nnz, nv = sizeof(float) * (size_t)m->nnz;
    datm_shard_info *si = &w->shard[w->n_shards];
    si->first_doc = w->n_docs;
    si->n_docs = m->n_rows;
    si->nnz = m->nnz;
    si->crc = crc_of(crc_of(crc_of(0, m->row_ptr, nr), m->col, nc), m->val, nv);
    unsigned char h[SHARD_HEAD];
    memcpy(h, SHARD_MAGIC, 8);
    put_u32(h + 8, FMT_VERSION);
    put_u32(h + 12, (uint32_t)w->n_shards);
    put_u64(h + 16, (uint64_t)si->first_doc);
    put_u64(h + 24, (uint64_t)si->n_docs);
    put_u64(h + 32, (uint64_t)w->n_cols);
    put_u64(h + 40, (uint64_t)si->nnz);
    put_u32(h + 48, si->crc);
    put_u32(h + 52, crc_of(0, h, SHARD_HEAD - 4));
    char path[1200];
    shard_file(w->tmp, w->n_shards, path, sizeof path);
    FILE *f = fopen(path, "wb");
    if (!f) return datm_error_set(err, DATM_E_IO, "%s: cannot create (%s)", path, strerror(errno));
    int ok = write_all(f, h, sizeof h) && write_all(f, m->row_ptr, nr) &&
             write_all(f, m->col, nc) && write_all(f, m->val, nv) && fflush(f) == 0 &&
             fsync(fileno(f)) == 0;
    int e = errno;
    if (fclose(f) != 0 && ok) { ok = 0; e = errno; }
    if (!ok) return datm_error_set(err, DATM_E_IO, "%s: write failed (%s)", path, strerror(e));
    w->n_docs += m->n_rows;
    w->nnz += m->nnz;
    for (int64_t j = 0; j < m->nnz; j++) w->tokens += m->val[j];
    w->n_shards++;
    w->pend.n_rows = 0;
    w->pend.nnz = 0;
    return DATM_OK;
}

/* Room for `extra` more entries in the pending shard. */
static int reserve(datm_shard_writer *w, int64_t extra, datm_error *err)
{
    return datm_csr_reserve_nnz(&w->pend, &w->pend_cap_nnz, w->pend.nnz + extra, w->dir, err);
}

int datm_shard_writer_add(datm_shard_writer *w, const datm_csr *m, datm_error *err)
{
    if (m->n_cols != w->n_cols)
        return datm_error_set(err, DATM_E_INVALID, "%s: documents of %lld words added to a corpus "
                              "of V = %lld", w->dir, (long long)m->n_cols, (long long)w->n_cols);
    char what[1100];
    snprintf(what, sizeof what, "%s (document %lld on)", w->dir,
             (long long)(w->n_docs + w->pend.n_rows));
    int rc = check_csr(what, m, w->n_docs + w->pend.n_rows, err);
    for (int64_t i = 0; !rc && i < m->n_rows; i++) {
        int64_t a = m->row_ptr[i], b = m->row_ptr[i + 1];
        rc = reserve(w, b - a, err);
        if (rc) break;
        memcpy(w->pend.col + w->pend.nnz, m->col + a, sizeof *m->col * (size_t)(b - a));
        memcpy(w->pend.val + w->pend.nnz, m->val + a, sizeof *m->val * (size_t)(b - a));
        w->pend.nnz += b - a;
        w->pend.row_ptr[++w->pend.n_rows] = w->pend.nnz;
        if (w->pend.n_rows == w->docs_per_shard) rc = flush_shard(w, err);
    }
    return rc;
}

static int write_index(datm_shard_writer *w, datm_error *err)
{
    unsigned char head[IDX_HEAD];
    memcpy(head, IDX_MAGIC, 8);
    put_u32(head + 8, FMT_VERSION);
    put_u32(head + 12, (uint32_t)w->n_shards);
    put_u64(head + 16, (uint64_t)w->n_docs);
    put_u64(head + 24, (uint64_t)w->n_cols);
    put_u64(head + 32, (uint64_t)w->nnz);
    memcpy(head + 40, &w->tokens, 8);
    put_u64(head + 48, content_hash(w->n_cols, w->shard, w->n_shards));
    size_t nt = (size_t)w->n_shards * IDX_ENTRY;
    unsigned char *tab = calloc(nt + 4, 1);
    if (!tab) return datm_error_set(err, DATM_E_NOMEM, "%s: out of memory", w->dir);
    for (int k = 0; k < w->n_shards; k++) {
        unsigned char *e = tab + (size_t)k * IDX_ENTRY;
        put_u64(e, (uint64_t)w->shard[k].first_doc);
        put_u64(e + 8, (uint64_t)w->shard[k].n_docs);
        put_u64(e + 16, (uint64_t)w->shard[k].nnz);
        put_u32(e + 24, w->shard[k].crc);
    }
    put_u32(tab + nt, crc_of(crc_of(0, head, sizeof head), tab, nt));
    char path[1200];
    snprintf(path, sizeof path, "%s/index.bin", w->tmp);
    FILE *f = fopen(path, "wb");
    int ok = f && write_all(f, head, sizeof head) && write_all(f, tab, nt + 4) &&
             fflush(f) == 0 && fsync(fileno(f)) == 0;
    int e = errno;
    if (f && fclose(f) != 0 && ok) { ok = 0; e = errno; }
    free(tab);
    if (!ok) return datm_error_set(err, DATM_E_IO, "%s: write failed (%s)", path, strerror(e));
    return DATM_OK;
}

int datm_shard_writer_commit(datm_shard_writer *w, datm_error *err)
{
    int rc = flush_shard(w, err);
    if (!rc && w->n_docs == 0)
        rc = datm_error_set(err, DATM_E_INVALID, "%s: no documents to write", w->dir);
    if (!rc) rc = write_index(w, err);
    if (!rc) rc = datm_fsync_path(w->tmp, err);
    char old[1200] = "";
    struct stat st;
    if (!rc && stat(w->dir, &st) == 0) {   /* --overwrite: the old set goes only now */
        snprintf(old, sizeof old, "%s.old.%ld", w->dir, (long)getpid());
        if (rename(w->dir, old) != 0)
            rc = datm_error_set(err, DATM_E_IO, "%s: cannot move aside (%s)", w->dir,
                                strerror(errno));
    }
    if (!rc && rename(w->tmp, w->dir) != 0)
        rc = datm_error_set(err, DATM_E_IO, "%s: cannot rename %s into place (%s)", w->dir,
                            w->tmp, strerror(errno));
    if (!rc) {
        datm_error e2 = {0};
        datm_fsync_parent(w->dir, &e2);
        if (old[0]) remove_tree(old);
        w->tmp[0] = '\0';
    } else if (old[0]) {
        rename(old, w->dir);
    }
    datm_shard_writer_abort(w);
    return rc;
}

void datm_shard_writer_abort(datm_shard_writer *w)
{
    if (w->tmp[0]) remove_tree(w->tmp);
    free(w->shard);
    free(w->pend.col);
    free(w->pend.val);
    datm_free(w->pend.row_ptr);
    memset(w, 0, sizeof *w);
}
