/* libpq for the Database module only (the one Swift importer): the whole client API is plain C, so no
 * wrappers are needed. Text reaching it is checked for NUL on the Swift side first. */
#include <libpq-fe.h>
