#!/bin/sh
# One rank of the `pario tune` failure tests (tests/test_tune.py), put between mpirun and the program:
# under Open MPI's romio321 component it fails (exit 3, a message on stderr); when the injected hints
# (PARIO_HINTS) set cb_nodes 2 it hangs (a sleep of an odd length, so that the test that looks for a
# sleeper left behind finds only this one); otherwise it becomes the program.
if [ "${OMPI_MCA_io:-}" = romio321 ]; then
    echo "tune_flaky: refusing to run under OMPI_MCA_io=romio321" >&2
    exit 3
fi
if [ -n "${PARIO_HINTS:-}" ] && grep -q '^cb_nodes 2$' "$PARIO_HINTS"; then
    exec sleep 120.417
fi
exec "$@"
