/* Exit statuses of every command, from sysexits(3): one table for the whole program. */
#ifndef TEGRAWATCH_EXIT_CODES_H
#define TEGRAWATCH_EXIT_CODES_H

#define EX_OK 0
#define EX_USAGE 64       /* a command line it cannot use */
#define EX_NOINPUT 66     /* an input file that does not exist or cannot be read */
#define EX_UNAVAILABLE 69 /* no Jetson board found, the demo not installed, a configured feature's library missing */
#define EX_SOFTWARE 70    /* the loop itself failed */
#define EX_OSERR 71       /* a listener the system would not start (no thread, no memory) */
#define EX_IOERR 74       /* writing the output failed */
#define EX_TEMPFAIL 75    /* a listening port taken by another program: may work later (the service retries) */
#define EX_CONFIG 78      /* a configuration `check` refuses */

#endif
