/*
 * A shared library with none of the functions tegrawatch loads, built for
 * the machine the tests run the agent on (qemu's arm64 too): the test
 * exit-messages copies it to libmosquitto.so.1 and libmicrohttpd.so.12.
 */
int tegrawatch_empty_library = 1;
