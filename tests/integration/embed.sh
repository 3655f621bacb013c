#!/usr/bin/env bash
# scripts/embed.c, the page assembler: include lines are replaced by the
# files they name (nested, relative to the file that names them), comments
# (CSS, script, HTML) that fill their lines are left out (one with code or
# markup after it is kept), the C
# array holds exactly the assembled bytes, the depfile lists every part, and
# a missing part, a malformed include line or an include loop stops the
# build with the file and line.
#   tests/integration/embed.sh EMBED
set -u
embed=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # WHAT CONDITION...
	local what=$1
	shift
	if "$@"; then echo "ok - $what"; else echo "not ok - $what"; fail=1; fi
}
mkdir -p "$tmp/page/parts" "$tmp/kit"
printf 'body { color: red; }\n' >"$tmp/kit/a.css"
printf '/* kit */\n\t/* a comment\n\t   over lines */  \n<!--#include file="../page/parts/c.js" -->\n/* kept: */ x();\n/* kept\n */ y();\nz(); /* kept */\n' >"$tmp/kit/b.js"
printf 'const c = 1;' >"$tmp/page/parts/c.js" # no newline at the end
printf '<!--\n  notes\n-->\n\t<!-- a note --> \n<!-- kept --><p>\n<style>\n  <!--#include file="../kit/a.css" -->\n</style>\n<script>\n<!--#include file="../kit/b.js" -->  \n</script>\n' >"$tmp/page/index.html"
"$embed" -d "$tmp/out.d" -p "$tmp/out.html" "$tmp/page/index.html" "$tmp/out.c" page_bytes 2>"$tmp/err"
check 'a page with nested includes is assembled' test $? -eq 0
printf '<!-- kept --><p>\n<style>\nbody { color: red; }\n</style>\n<script>\nconst c = 1;/* kept: */ x();\n/* kept\n */ y();\nz(); /* kept */\n</script>\n' >"$tmp/want.html"
check 'the assembled page is the parts in place of their lines, without comments that fill theirs' cmp -s "$tmp/out.html" "$tmp/want.html"
n=$(wc -c <"$tmp/want.html")
check 'the C array holds the same bytes' grep -q "const size_t page_bytes_len = $n;" "$tmp/out.c"
hex=$(od -An -tx1 -v "$tmp/want.html" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')
got=$(grep -o '0x[0-9a-f][0-9a-f]' "$tmp/out.c" | sed 's/0x//' | tr '\n' ' ' | sed 's/ $//')
check 'the C array bytes are the page bytes' test "$hex" = "$got"
check 'the depfile names every part' grep -q "^$tmp/out.c: $tmp/page/index.html $tmp/page/../kit/a.css $tmp/page/../kit/b.js $tmp/page/../kit/../page/parts/c.js\$" "$tmp/out.d"

printf 'x\n<!--#include file="nope.css" -->\n' >"$tmp/page/missing.html"
"$embed" "$tmp/page/missing.html" "$tmp/m.c" m 2>"$tmp/err"
check 'a missing part fails' test $? -ne 0
check 'and says which' grep -q "cannot read $tmp/page/nope.css" "$tmp/err"

printf '/* two\n lines */\n<!--#include file="a.css" --> trailing\n' >"$tmp/page/bad.html"
"$embed" "$tmp/page/bad.html" "$tmp/b.c" b 2>"$tmp/err"
check 'a malformed include line fails with its location' grep -q "bad.html:3: " "$tmp/err"

printf '<!--#include file="loop.html" -->\n' >"$tmp/page/loop.html"
"$embed" "$tmp/page/loop.html" "$tmp/l.c" l 2>"$tmp/err"
check 'an include loop fails' grep -q "nested more than" "$tmp/err"
exit "$fail"
