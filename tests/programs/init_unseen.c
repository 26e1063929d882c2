/* An MPI program whose MPI_Init and MPI_Finalize pario cannot see: it calls
 * the MPI library's own PMPI_Init / PMPI_Finalize, looked up in the library
 * itself, as a binding that pario does not intercept would. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    Dl_info info;
    if (!dladdr((void *)&PMPI_Get_library_version, &info))
        return 2;
    void *lib = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    int (*init)(int *, char ***) = lib ? (int (*)(int *, char ***))dlsym(lib, "PMPI_Init") : NULL;
    int (*finalize)(void) = lib ? (int (*)(void))dlsym(lib, "PMPI_Finalize") : NULL;
    if (!init || !finalize)
        return 2;
    init(&argc, &argv);
    return finalize();
}
