/*
 * What the files of the kernels' shared library give each other (not the
 * kernels): option parsing and help (options.c), hints (hints.c).
 */
#ifndef PARIO_KERNEL_PARTS_H
#define PARIO_KERNEL_PARTS_H

#include "kernel_common.h"

#define KC_MSG 512          /* one message, broadcast or sent between ranks */
#define KC_HINTS_MAX 65536  /* hints read from the environment, in bytes */

/* Parse argv against the kernel's and the common options; 1 if --help was asked for. */
int kc_parse_args(kc_ctx *ctx, kc_opt *tables[2], int argc, char **argv);
/* Print --help for kernel k and the common options. */
void kc_usage(const kc_kernel *k, kc_opt *common);
/* The MPI-IO hints of this run (collective: rank 0 reads, every rank gets them). */
void kc_build_hints(kc_ctx *ctx, MPI_Info *info);

#endif
