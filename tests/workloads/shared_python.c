/* A CPython interpreter linked against libpython, as Fedora's, pyenv's and Spack's builds
 * (--enable-shared) are: the executable holds none of CPython, the library holds all of it.
 * Its whole body is what CPython's own `python` program does. */
#include <Python.h>

int main(int argc, char** argv) { return Py_BytesMain(argc, argv); }
