#!/usr/bin/env bash
# The production sources are formatted as .clang-format says (clang-format 14,
# the version of Debian 12 and Ubuntu 22.04; other versions format slightly
# differently, so they are not used). Fix with: scripts/format.sh
set -u
cd "${1:-$(dirname "$0")/../..}" || exit 1
cf=$(command -v clang-format-14 || true)
if [ -z "$cf" ] && command -v clang-format >/dev/null &&
	clang-format --version | grep -q 'version 14\.'; then
	cf=$(command -v clang-format)
fi
if [ -z "$cf" ]; then
	echo "skipped: clang-format 14 is not installed (apt-get install clang-format-14)"
	exit 77
fi
# every module's sources: the top folders but the supporting ones
files=$(git ls-files '*.[ch]' 2>/dev/null | grep / | grep -vE '^(tests|bench|scripts|docs)/' ||
	find . -name '*.[ch]' -not -path './tests/*' -not -path './bench/*' -not -path './scripts/*' -not -path './build*')
if ! "$cf" --dry-run --Werror $files 2>&1 | head -40 | grep .; then
	echo "format: $(printf '%s\n' $files | wc -l) files ok"
	exit 0
fi
echo "FAIL: run scripts/format.sh"
exit 1
