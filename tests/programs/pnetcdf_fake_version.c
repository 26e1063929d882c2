/*
 * A shared library preloaded after libpario.so whose ncmpi_inq_libvers answers
 * another PnetCDF version than the installed one (every other call reaches the
 * real library): the PnetCDF layer must then stay silent and say why.
 */
const char *ncmpi_inq_libvers(void);

const char *ncmpi_inq_libvers(void) { return "1.10.0 of March 2, 2018"; }
