/* engine/cli/cli_write.c: the text writers the subcommands share for machine-readable output
 * (compare, topics, export): JSON strings and numbers, CSV fields (RFC 4180 quoting) and
 * markdown table cells. Numbers in the C locale, %.9g for float and %.17g for double: enough
 * digits to read back the same value. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

void datm_cli_json_num(FILE *f, double v, int digits)
{
    if (isfinite(v)) fprintf(f, "%.*g", digits, v);
    else fputs("null", f);
}

void datm_cli_md_str(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
}
