#!/usr/bin/env python3
"""transcripts.py MNEMO PAGE... — runs the command transcripts of documentation pages and fails
when one no longer prints what the page says (docs/cli.md "About the examples" states the
convention; tests/CMakeLists.txt runs it as docs/cli-transcripts).

A transcript is a fenced block whose info string is `console`:

    ```console
    $ mnemo add $S user "hi"          a command (a line ending in \\ continues on the next)
    7                                 what it prints, stdout and stderr together
    $ mnemo pin 999
    mnemo: message 999 not found
    [exit 1]                          a non-zero exit status, after the output
    ```

Every block of a page runs in order in ONE bash process (variables set by one command, such as
S=$(mnemo session new), hold for the commands after it), in a fresh temporary directory that is
also HOME and the XDG roots, with `mnemo` on PATH being the binary under test and no MNEMO_*
variable of the caller. What varies from run to run is compared loosely:
  - a UUID stands for "some UUID": the n-th distinct UUID of a command's output must match the
    n-th distinct one of the page, wherever it appears again in that output;
  - a time in milliseconds (13 digits) and a "YYYY-MM-DD HH:MM:SS" time match any such value;
  - so do the sizes of the database's files (`mnemo stats`: db_bytes, wal_bytes,
    bytes_per_message), which depend on when the keyword index's thread wrote;
  - `<…>` inside a line matches any text; a line that is only `<…>` matches any number of lines;
  - the temporary directory's path prints as <tmp>.
A block right after a line `<!-- transcript: not checked: REASON -->` is skipped (a REASON is
required: e.g. it needs a PostgreSQL server or a model). Exit status 0 when every transcript
matches; else a unified diff per failing command naming PAGE:LINE, and status 1.
"""
import difflib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

ELLIPSIS = "<…>"
SKIP_RE = re.compile(r"^<!-- transcript: not checked: (.+\S) -->\s*$")
UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
DURATION_RE = re.compile(r'"(duration_ms|elapsed_ms|took_ms)":[0-9]+')
# file sizes: the keyword index's file is written by a background thread, when it gets to it
SIZE_JSON_RE = re.compile(r'"(db_bytes|wal_bytes|bytes_per_message)":[0-9.]+')
SIZE_TEXT_RE = re.compile(r'^(bytes on disk: +)[0-9]+ \(\+[0-9]+ (in the write-ahead log\))$|^(bytes per message: +)[0-9]+$', re.M)
MS_RE = re.compile(r"(?<![0-9])1[0-9]{12}(?![0-9])")
TIME_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?")
PAGE_TIMEOUT_S = 900  # a bound on a hung page only; a healthy run takes seconds


class Command:
    def __init__(self, line, text):
        self.line = line  # 1-based line of the `$ ` in the page
        self.text = text  # the shell command (continuations joined with newlines)
        self.expected = []  # expected output lines, `[exit N]` included
        self.actual = None  # what it printed (tmp path as <tmp>), set by run_page


def parse(path):
    """The commands of the checked transcripts of a page, and the number of skipped blocks."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    commands, skipped, i = [], 0, 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("```console"):
            i += 1
            continue
        prev = lines[i - 1] if i > 0 else ""
        if prev.startswith("<!-- transcript:") and not SKIP_RE.match(prev):
            sys.exit(f"{path}:{i}: a skipped transcript needs `<!-- transcript: not checked: REASON -->`")
        skip = bool(SKIP_RE.match(prev))
        skipped += skip
        i += 1
        cur = None
        while i < len(lines) and not lines[i].startswith("```"):
            line = lines[i]
            if line.startswith("$ "):
                cur = Command(i + 1, line[2:])
                while cur.text.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    cur.text += "\n" + lines[i]
                if not skip:
                    commands.append(cur)
            elif cur is None:
                sys.exit(f"{path}:{i + 1}: a console block must start with a `$ ` command line")
            else:
                cur.expected.append(line)
            i += 1
        if i >= len(lines):
            sys.exit(f"{path}: the console block opened before line {i} is not closed")
        i += 1
    return commands, skipped


def script(commands, outdir):
    """One bash script running every command, each one's output and status into outdir."""
    parts = [
        "trap 'for j in $(jobs -p); do kill $j 2>/dev/null; done' EXIT",
    ]
    for n, c in enumerate(commands):
        parts.append(f"{{ {c.text}\n}} >'{outdir}/{n}.out' 2>&1 </dev/null\necho $? >'{outdir}/{n}.rc'")
    return "\n".join(parts) + "\n"


def normalise(text, tmp):
    text = text.replace(tmp, "<tmp>")
    seen = {}

    def uuid(m):
        key = m.group(0).lower()
        if key not in seen:
            seen[key] = f"<uuid{len(seen) + 1}>"
        return seen[key]

    text = UUID_RE.sub(uuid, text)
    # sizes first: a size's decimals can hold 13 digits that look like a time in ms (6384.1234567890123)
    text = SIZE_JSON_RE.sub(r'"\1":<n>', text)
    text = MS_RE.sub("<ms>", text)
    text = DURATION_RE.sub(r'"\1":<n>', text)  # how long a step took varies from run to run
    text = SIZE_TEXT_RE.sub(lambda m: (m.group(1) + "<n> (+<n> " + m.group(2)) if m.group(1) else m.group(3) + "<n>", text)
    return TIME_RE.sub("<time>", text)


def pattern(expected_lines):
    """A regex for the whole expected output of one command."""
    out = []
    for line in expected_lines:
        if line == ELLIPSIS:
            out.append(r"(?:[^\n]*\n)*?")
        else:
            out.append(r"[^\n]*?".join(re.escape(piece) for piece in line.split(ELLIPSIS)) + r"\n")
    return "".join(out)


def run_page(mnemo, page):
    commands, skipped = parse(page)
    work = tempfile.mkdtemp(prefix="mnemo-docs-")
    try:
        tmp = os.path.realpath(os.path.join(work, "run"))
        outdir = os.path.join(work, "out")
        bindir = os.path.join(work, "bin")
        for d in (tmp, outdir, bindir):
            os.makedirs(d)
        os.symlink(mnemo, os.path.join(bindir, "mnemo"))
        env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
        env.update(
            PATH=bindir + os.pathsep + env.get("PATH", "/usr/bin:/bin"),
            HOME=tmp,
            XDG_CONFIG_HOME=tmp + "/.config",
            XDG_DATA_HOME=tmp + "/.local/share",
            XDG_CACHE_HOME=tmp + "/.cache",
            XDG_STATE_HOME=tmp + "/.local/state",
            LC_ALL="C.UTF-8",
            TZ="UTC",
        )
        with open(os.path.join(work, "page.sh"), "w", encoding="utf-8") as f:
            f.write(script(commands, outdir))
        proc = subprocess.Popen(["bash", os.path.join(work, "page.sh")], cwd=tmp, env=env,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            proc.wait(timeout=PAGE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            print(f"{page}: gave up after {PAGE_TIMEOUT_S} s (a command hung)")
        failed = 0
        for n, c in enumerate(commands):
            try:
                with open(os.path.join(outdir, f"{n}.out"), encoding="utf-8", errors="replace") as f:
                    got = f.read()
                with open(os.path.join(outdir, f"{n}.rc")) as f:
                    rc = int(f.read())
            except (OSError, ValueError):
                got, rc = "(the command did not finish)\n", -1
            if got and not got.endswith("\n"):
                got += "\n"
            if rc != 0:
                got += f"[exit {rc}]\n"
            c.actual = got.replace(tmp, "<tmp>")
            got = normalise(got, tmp)
            want = normalise("".join(line + "\n" for line in c.expected), tmp)
            if re.fullmatch(pattern(want.split("\n")[:-1]), got, re.S):
                continue
            failed += 1
            c.stale = True
            print(f"{page}:{c.line}: $ {c.text}")
            sys.stdout.writelines(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                                       "page", "actual", n=2))
            print()
        print(f"{page}: {len(commands) - failed} of {len(commands)} commands as documented"
              f" ({skipped} blocks not checked)")
        if UPDATE and failed:
            update(page, commands)
        return failed
    finally:
        shutil.rmtree(work, ignore_errors=True)


def update(page, commands):
    """--update: writes what each stale command printed into the page, for review with git diff."""
    with open(page, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for c in reversed(commands):
        if getattr(c, "stale", False):
            first = c.line + c.text.count("\n")  # index of the first output line
            lines[first:first + len(c.expected)] = c.actual.split("\n")[:-1]
    with open(page, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print(f"{page}: rewrote the output of the stale commands")


UPDATE = False


def main():
    global UPDATE
    args = sys.argv[1:]
    if args and args[0] == "--update":
        UPDATE = True
        args = args[1:]
    if len(args) < 2:
        sys.exit("usage: transcripts.py [--update] MNEMO PAGE...")
    mnemo = os.path.realpath(args[0])
    # The pages show exact token counts of the default tokenizer, cl100k_base, whose rank files
    # scripts/fetch-ranks installs (make test does); without them every count would differ.
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    shown = subprocess.run([mnemo, "config", "show"], env=env, capture_output=True, text=True).stdout
    if not re.search(r"^tokenizer\.active\s+cl100k_base\b", shown, re.M):
        sys.exit("transcripts.py: the pages are written for the cl100k_base tokenizer, which this mnemo"
                 " cannot load (run scripts/fetch-ranks)")
    failed = sum(run_page(mnemo, page) for page in args[1:])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
