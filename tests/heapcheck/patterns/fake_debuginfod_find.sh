#!/bin/sh
# Stands in for elfutils' debuginfod-find in the tests: records its arguments (one line per
# call, in $FAKE_DEBUGINFOD_LOG) and finds nothing.
echo "$*" >> "$FAKE_DEBUGINFOD_LOG"
exit 1
