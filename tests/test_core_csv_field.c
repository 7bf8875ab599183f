/* ctest-labels: unit  ctest-timeout: 30  ctest-link: datm_core */
/* tests/test_core_csv_field.c: datm_csv_field (engine/core/fileio.c), the one CSV field writer
 * of the reports, `datm topics`, `compare` and `export`: a field is written as it is unless
 * it holds a comma, a quote or a line break; then it is quoted with its quotes doubled
 * (RFC 4180), so a CSV reader gives back the same text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "test_check.h"

/* datm_csv_field(s) written to a memory stream */
static void field(const char *s, char *out, size_t cap)
{
    FILE *f = fmemopen(out, cap, "w");
    CHECK(f != NULL);
    if (!f) return;
    datm_csv_field(f, s);
    fclose(f);
}

int main(void)
{
    static const struct { const char *in, *out; } cases[] = {
        {"word", "word"},               /* plain: as it is */
        {"", ""},
        {"café", "café"},               /* UTF-8 bytes pass through */
        {"a,b", "\"a,b\""},
        {"say \"hi\"", "\"say \"\"hi\"\"\""},
        {"two\nlines", "\"two\nlines\""},
        {"cr\r", "\"cr\r\""},
        {"\"", "\"\"\"\""},
    };
    char buf[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(buf, 0, sizeof buf);
        field(cases[i].in, buf, sizeof buf);
        CHECK(!strcmp(buf, cases[i].out), "field '%s' written as '%s', expected '%s'",
              cases[i].in, buf, cases[i].out);
    }
    memset(buf, 0, sizeof buf);
    field(NULL, buf, sizeof buf);   /* NULL: an empty field */
    CHECK(buf[0] == '\0', "NULL written as '%s'", buf);
    return check_result();
}
