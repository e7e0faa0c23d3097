#!/usr/bin/env bash
# Regenerates configure and the Makefile.in files from a git checkout.
set -euo pipefail
cd "$(dirname "$0")"
exec autoreconf -fi "$@"
