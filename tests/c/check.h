/* The C unit tests' one assertion: CHECK counts, reports a failure with its line
 * and goes on, so one run lists every failed check; CHECK_SUMMARY() ends main. */
#ifndef PARIO_TEST_CHECK_H
#define PARIO_TEST_CHECK_H

#include <stdio.h>

static int failures, checks;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);              \
        }                                                                                          \
    } while (0)

#define CHECK_SUMMARY()                                                                            \
    (printf("%d passed, %d failed\n", checks - failures, failures), failures ? 1 : 0)

#endif
