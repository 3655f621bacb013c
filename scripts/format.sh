#!/usr/bin/env bash
# Formats the production sources as .clang-format says (clang-format 14).
set -eu
cd "$(dirname "$0")/.."
cf=$(command -v clang-format-14 || command -v clang-format)
git ls-files '*.[ch]' | grep / | grep -vE '^(tests|bench|scripts|docs)/' | xargs "$cf" -i
