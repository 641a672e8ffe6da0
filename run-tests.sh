#!/bin/sh
# Install dependencies, build with sanitizers and warnings as errors, and run
# the whole test suite (unit and end-to-end; capture tests need root).
set -e
cd "$(dirname "$0")"
./install-deps.sh
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Debug -DSWT_SANITIZE=ON -DSWT_WERROR=ON >/dev/null
cmake --build build-test -j "$(nproc)"
# the tracing libraries leak a little on their own paths; ours must not
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
ctest --test-dir build-test --output-on-failure "$@"
