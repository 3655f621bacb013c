#!/usr/bin/env python3
"""The command line has one table (agent/cli.c); --help, the man page and the
bash completion must say what it says.

  cli_doc.py TEGRAWATCH SOURCE_ROOT            check (the test cli-doc)
  cli_doc.py TEGRAWATCH SOURCE_ROOT --write    rewrite the man page's synopsis
                                               and options, and the completion

Checks: docs/man/tegrawatch.1's generated parts and
configs/bash-completion/tegrawatch are what `tegrawatch help --man-synopsis`,
`--man-options` and `--bash-completion` print; for every command, the options
of `COMMAND --help`, of the man page and of the completion are the same set;
the command takes each of them (`COMMAND --OPTION [ARG] --help` exits 0, an
unknown option exits 64); and the synopsis in docs/commands.md names no other option.
"""
import os
import re
import subprocess
import sys

BIN, SRC = sys.argv[1], sys.argv[2]
WRITE = "--write" in sys.argv[3:]
MAN = os.path.join(SRC, "docs/man/tegrawatch.1")
COMPLETION = os.path.join(SRC, "configs/bash-completion/tegrawatch")
REGIONS = [
    ("--man-synopsis", '.\\" The synopsis is written', '.\\" End of the synopsis.'),
    ("--man-options", '.\\" The options are written', '.\\" End of the options.'),
]
# an argument each kind of option takes, by the name --help gives it
SAMPLE = {"FILE": "/dev/null", "DIR": "/", "N": "1", "MS": "1000", "PROGRAM": "true", "URL": "http://127.0.0.1:9474",
          "NAME": "overview"}

failed = 0


def check(ok, what, detail=""):
    global failed
    print(("ok - " if ok else "not ok - ") + what + ("" if ok else "\n    " + str(detail)[:2000]))
    failed += 0 if ok else 1


def tegrawatch(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60)


def splice(text, start, end, body):
    """TEXT with the lines between the line starting with START and the line END replaced by BODY."""
    lines = text.splitlines(keepends=True)
    a = next(i for i, x in enumerate(lines) if x.startswith(start))
    b = next(i for i, x in enumerate(lines) if x.rstrip("\n") == end)
    return "".join(lines[:a + 1]) + body + "".join(lines[b:])


man = open(MAN).read()
want_man = man
for flag, start, end in REGIONS:
    want_man = splice(want_man, start, end, tegrawatch("help", flag).stdout)
want_completion = tegrawatch("help", "--bash-completion").stdout
if WRITE:
    with open(MAN, "w") as f:
        f.write(want_man)
    with open(COMPLETION, "w") as f:
        f.write(want_completion)
    print("wrote %s and %s" % (MAN, COMPLETION))
    sys.exit(0)

check(man == want_man, "the man page's synopsis and options are the table's (cli_doc.py --write fixes it)",
      [x for x in zip(man.splitlines(), want_man.splitlines()) if x[0] != x[1]][:3])
check(open(COMPLETION).read() == want_completion,
      "configs/bash-completion/tegrawatch is the table's (cli_doc.py --write fixes it)")

usage = tegrawatch("--help").stdout
commands = re.findall(r"^  (\w+) ", usage.split("Commands:\n")[1].split("\n\n")[0], re.M)
check(commands == ["parse", "snapshot", "run", "check", "replay", "report", "top", "help", "version"],
      "--help lists the commands", commands)
completion = open(COMPLETION).read()
check(re.search(r'local commands="%s"' % " ".join(commands), completion) is not None,
      "the completion offers the same commands")


def help_options(cmd):
    """{"--config": "FILE", "--demo": None, ...} of `tegrawatch CMD --help`, without the ones of every command."""
    text = tegrawatch(cmd, "--help").stdout
    part = text.split("\nOptions:\n")[1].split("\n\n")[0] if "\nOptions:\n" in text else ""
    found = {}
    for m in re.finditer(r"^  (?:-\w, )?\s*(--[\w-]+)(?: ([A-Z]+))?", part, re.M):
        found[m.group(1)] = m.group(2)
    return found


def man_options(cmd):
    block = re.search(r"^\.Ss Options of %s\n(.*?)^\.El$" % cmd, man, re.M | re.S)
    if not block:
        return {}
    found = {}
    for m in re.finditer(r"^\.It (?:Fl \w , )?Fl \\-([\w\\-]+)(?: Ar (\w+))?", block.group(1), re.M):
        found["--" + m.group(1).replace("\\-", "-")] = m.group(2).upper() if m.group(2) else None
    return found


def completion_options(cmd):
    m = re.search(r"^\t%s\)\n\t\topts=\"([^\"]*)\"" % cmd, completion, re.M)
    return {x for x in m.group(1).split() if x.startswith("--")} if m else set()


for cmd in commands:
    opts = help_options(cmd)
    check(man_options(cmd) == opts, "%s: the man page has the options of --help" % cmd, (man_options(cmd), opts))
    check(completion_options(cmd) == set(opts), "%s: the completion has the options of --help" % cmd,
          (completion_options(cmd), set(opts)))
    for opt, arg in opts.items():
        args = [opt] + ([SAMPLE[arg]] if arg else [])
        p = tegrawatch(cmd, *args, "--help")
        check(p.returncode == 0 and p.stdout.startswith("Usage: tegrawatch " + cmd),
              "%s takes %s" % (cmd, " ".join(args)), (p.returncode, p.stderr))
    p = tegrawatch(cmd, "--no-such-option")
    if cmd != "version":
        check(p.returncode == 64, "%s refuses an option it does not have" % cmd, (p.returncode, p.stderr))
every = re.findall(r"^  -(\w), (--\w+)", usage.split("anywhere on the line:\n")[1], re.M)
check([o for _, o in every] == ["--verbose", "--quiet", "--help"], "every command's options are listed", every)
check(re.search(r"^\.Ss Options of every command$", man, re.M) is not None, "the man page lists them")
check('local global="-v --verbose -q --quiet -h --help"' in completion, "the completion offers them")
# the synopsis of docs/commands.md (its first code block) names no option a command does not have
commands_md = open(os.path.join(SRC, "docs/commands.md")).read()
block = commands_md.split("```")[1]
check(block.lstrip("\n").startswith("tegrawatch parse"), "docs/commands.md opens with the synopsis", block[:200])
cmd = None
for line in block.splitlines():
    m = re.match(r"tegrawatch (\w+)", line)
    cmd = m.group(1) if m else cmd
    for opt in re.findall(r"(?<![\w-])(--[\w-]+|-\w)\b", line):
        known = set(help_options(cmd)) | {"-c"} if "--config" in help_options(cmd) else set(help_options(cmd))
        check(opt in known or opt in ("--help", "--version"), "docs/commands.md: %s %s is in the table" % (cmd, opt))
p = tegrawatch("--quiet", "parse", "/dev/null", "--verbose")
check(p.returncode == 0, "-v and -q work anywhere on the line", p.stderr)

print("%d failed" % failed)
sys.exit(1 if failed else 0)
