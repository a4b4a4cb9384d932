/* numoracle CLI: the one error printer of the CLI's verbs and of cli/eut.c, in a file of
 * its own because the GTest library links eut.c without the CLI's main.c. */
#include <stdarg.h>
#include <stdio.h>

#include "cli.h"

int cli_error(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* exactly one line: fold any newline a library message might carry */
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    fflush(stdout);
    fprintf(stderr, "numoracle: error: %s\n", msg);
    return CLI_EXIT_USAGE;
}
