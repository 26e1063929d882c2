/* The hints-file line grammar of include/pario-hint-line.h against the corpus that
 * python/pario/launch/hints.py is tested with too (tests/data/hint-lines.tsv): both parsers take,
 * skip or refuse each line alike.  Usage: test_hint_line CORPUS */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "pario-hint-line.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* s with \t, \\ and \xHH decoded into out (at most n bytes); the decoded length. */
static size_t unescape(const char *s, char *out, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; s[i] && len + 1 < n; i++) {
        if (s[i] == '\\' && s[i + 1] == 't') {
            out[len++] = '\t';
            i++;
        } else if (s[i] == '\\' && s[i + 1] == '\\') {
            out[len++] = '\\';
            i++;
        } else if (s[i] == '\\' && s[i + 1] == 'x' && s[i + 2] && s[i + 3]) {
            char hex[3] = {s[i + 2], s[i + 3], 0};
            out[len++] = (char)strtol(hex, NULL, 16);
            i += 3;
        } else {
            out[len++] = s[i];
        }
    }
    out[len] = '\0';
    return len;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_hint_line CORPUS\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    char row[4096];
    int cases = 0;
    while (fgets(row, sizeof row, f)) {
        if (row[0] == '#' || row[0] == '\n')
            continue;
        row[strcspn(row, "\n")] = '\0';
        char *expected = row, *input = strchr(row, '\t');
        if (!input)
            continue;
        *input++ = '\0';
        char *why = strchr(input, '\t');
        if (why)
            *why++ = '\0';
        char line[2048], reason[256], *key = NULL, *val = NULL;
        size_t len = unescape(input, line, sizeof line - 1);
        int rc = pario_parse_hint_line(line, len, &key, &val, reason, sizeof reason);
        cases++;
        int ok;
        if (strcmp(expected, "-") == 0)
            ok = rc == 0;
        else if (strcmp(expected, "!") == 0)
            ok = rc == -1;
        else {
            char *eq = strchr(expected, '=');
            ok = rc == 1 && eq && strlen(key) == (size_t)(eq - expected) &&
                 strncmp(key, expected, (size_t)(eq - expected)) == 0 && strcmp(val, eq + 1) == 0;
        }
        if (!ok)
            fprintf(stderr, "case '%s' (%s): got %d\n", why ? why : "", expected, rc);
        CHECK(ok);
    }
    fclose(f);
    CHECK(cases >= 20);
    return CHECK_SUMMARY();
}
