#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Build a man page from its template (docs/man/NAME.SECTION.in) and pmbpf itself.

The prose is hand-written roff in the template; what pmbpf can say about
itself is generated, so that it cannot drift from the binary:

  @VERSION@ @DATE@    from debian/changelog (passed by the Makefile)
  @NAME@              "pmbpf-CMD \\- ..." from the command table (pmbpf help)
  @SYNOPSIS@          from the "Usage:" line of pmbpf CMD --help
  @OPTIONS@           every option line of pmbpf CMD --help
  @COMMANDS@          the command table of pmbpf help (pmbpf.8)
  @INCLUDE file@      a shared fragment from docs/man/ (e.g. events.roff)
  @MARKDOWN file@     a Markdown file of the checkout (docs/fields.md) as roff
  @KEYS file@         the key table of top's help screen (help_lines[] in
                      user/cmd/top_draw.c, the lines that top draws for '?') as .TP items

CMD comes from the template's file name (pmbpf-record.8.in: record).
Usage: mkman.py --pmbpf BIN --version V --date YYYY-MM-DD TEMPLATE > PAGE
"""
import argparse
import ast
import os
import re
import subprocess
import sys

OPT_LINE = re.compile(r"^  +(-[^ ].*?)(?:  +(\S.*))?$")


def run(pmbpf, *args):
    p = subprocess.run([pmbpf, *args], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        sys.exit(f"mkman: {pmbpf} {' '.join(args)} exited {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def esc(text, line_start=True):
    """Text for a filled roff line: backslashes, hyphens (minus signs: options
    must copy and paste), and a leading control character."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if line_start and text[:1] in (".", "'"):
        text = "\\&" + text
    return text


def parse_options(help_text):
    """[(spec, [description lines])] of the option lines of a --help text.

    An option line starts with spaces and '-'; its description follows after
    two or more spaces, and goes on in more-indented lines without a '-'."""
    opts = []
    cont = False
    for line in help_text.splitlines():
        m = OPT_LINE.match(line)
        if m:
            opts.append((m.group(1).strip(), [m.group(2)] if m.group(2) else []))
            cont = True
        elif cont and line.startswith("   ") and line.strip():
            opts[-1][1].append(line.strip())
        else:
            cont = False
    return opts


def spec_roff(spec):
    """'-e, --events LIST' as bold names and an italic argument."""
    parts = []
    for alt in spec.split(", "):
        name, _, arg = alt.partition(" ")
        s = "\\fB" + name.replace("-", "\\-") + "\\fR"
        if arg:
            s += " \\fI" + arg.replace("-", "\\-") + "\\fR"
        parts.append(s)
    return ", ".join(parts)


def options_roff(help_text):
    out = []
    for spec, desc in parse_options(help_text):
        out.append(".TP")
        out.append(spec_roff(spec))
        out.extend(esc(d) for d in desc)
    if not out:
        out.append("None but those of the SYNOPSIS.")
    return "\n".join(out)


def synopsis_roff(help_text, cmd):
    """The "Usage:" line and the usage lines under it ("       pmbpf list
    --attr LIST"), each without its trailing explanation: the command in
    bold, the rest as written, placeholders in italics."""
    forms, lines = [], help_text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Usage: "):
            forms.append(line[len("Usage: "):])
            for u in lines[i + 1:]:
                if not re.match(r"^ +pmbpf ", u):
                    break
                forms.append(u.strip())
            break
    if not forms:  # a command without a usage text
        return f".B pmbpf {cmd}"
    out = []
    n = 2 if cmd else 1
    for form in forms:
        words = form.split("   ")[0].split()
        head, rest = " ".join(words[:n]), " ".join(words[n:])
        rest = re.sub(r"([A-Z][A-Z_.]+)", r"\\fI\1\\fR", rest.replace("-", "\\-"))
        out.append(f".B {head}\n{rest}" if rest else f".B {head}")
    return "\n.br\n".join(out)


def command_table(pmbpf):
    """{name: one-line help} from pmbpf help."""
    cmds = {}
    for line in run(pmbpf, "help").splitlines():
        m = re.match(r"^  (\S+) +(\S.*)$", line)
        if m:
            cmds[m.group(1)] = m.group(2)
    return cmds


def inline_md(text):
    """`code` bold, *emphasis* italic, [text](link) as its text; escaped."""
    text = re.sub(r"\[([^]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\*\*(.+?)\*\*", "\x01\\1\x02", text)  # bold, across `code` too
    parts = re.split(r"(`[^`]*`)", text)
    out = []
    for p in parts:
        if p.startswith("`") and p.endswith("`") and len(p) > 1:
            out.append("\\fB" + esc(p[1:-1], False) + "\\fR")
        else:
            out.append(re.sub(r"\*([^*\s][^*]*)\*", r"\\fI\1\\fR", esc(p, False)))
    s = "".join(out).replace("\x01", "\\fB").replace("\x02", "\\fR")
    return "\\&" + s if s[:1] in (".", "'") else s


def table_roff(rows):
    """A Markdown table as tagged paragraphs: the first cell is the tag; a
    "unit" column goes next to it; other columns are "header: cell"."""
    header, out = rows[0], []
    for cells in rows[1:]:
        tag = inline_md(cells[0])
        rest = list(zip(header[1:], cells[1:]))
        if len(header) == 3 and header[1] == "unit":
            if cells[1]:
                tag += " (" + inline_md(cells[1]) + ")"
            rest = rest[1:]
        if len(rest) == 1:
            body = inline_md(rest[0][1])
        else:
            body = "; ".join(inline_md(f"{h}: {c}") for h, c in rest)
        out += [".TP", tag, body]
    return out


def markdown_roff(md):
    """The Markdown of docs/*.md (headings, paragraphs, tables, fences) as roff."""
    out, table = [], []
    in_fence = False
    for line in md.splitlines() + [""]:
        if table and not line.startswith("|"):
            out += table_roff(table)
            table = []
        if line.startswith("```"):
            out.append(".PP\n.nf\n.RS 4" if not in_fence else ".RE\n.fi")
            in_fence = not in_fence
        elif in_fence:
            out.append(esc(line) if line else "")
        elif line.startswith("# ") or re.fullmatch(r"<!--.*-->", line):
            continue  # the title; the marks of generated blocks (docs/mkfields.py)
        elif line.startswith("## "):
            out.append('.SH "' + inline_md(line[3:]) + '"')
        elif line.startswith("### "):
            out.append('.SS "' + inline_md(line[4:]) + '"')
        elif line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                table.append(cells)
        elif not line.strip():
            out.append(".PP")
        else:
            out.append(inline_md(line))
    text = "\n".join(out)
    text = re.sub(r"(\.PP\n)+", ".PP\n", text)
    text = re.sub(r"\.PP\n(\.S[HS] )", r"\1", text)
    text = re.sub(r"(\.S[HS] [^\n]*\n)\.PP\n", r"\1", text)
    return text.strip("\n").removesuffix(".PP").rstrip("\n")


def keys_roff(c_source):
    """The key lines of help_lines[] in top's C source ("  KEYS   WHAT": the
    key column ends at the last run of two or more spaces) as .TP items."""
    m = re.search(r"help_lines\[\] = \{(.*?)\n\};", c_source, re.S)
    if not m:
        sys.exit("mkman: no help_lines[] in top's source")
    rows = []
    for lit in re.findall(r'"(?:[^"\\]|\\.)*"', m.group(1)):
        line = ast.literal_eval(lit)
        gaps = list(re.finditer(r" {2,}(?=\S)", line))
        if not line.startswith("  ") or len(gaps) < 2:
            if rows and not line.strip():
                break  # the blank line after the keys
            continue
        keys, what = line[:gaps[-1].start()].strip(), line[gaps[-1].end():]
        keys = " or ".join("\\fB" + esc(k.strip(), False) + "\\fR"
                           for k in re.split(r" +or +", keys))
        rows += [".TP", keys, esc(what)]
    if not rows:
        sys.exit("mkman: no key lines in help_lines[]")
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pmbpf", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--date", required=True)
    ap.add_argument("template")
    a = ap.parse_args()

    base = os.path.basename(a.template)
    m = re.match(r"^pmbpf(?:-([a-z]+))?\.8\.in$", base)
    cmd = m.group(1) if m else None
    text = open(a.template).read()
    here = os.path.dirname(os.path.abspath(a.template))

    def include(m):
        with open(os.path.join(here, m.group(1))) as f:
            return f.read().rstrip("\n")
    text = re.sub(r"^@INCLUDE (\S+)@$", include, text, flags=re.M)

    def markdown(m):
        with open(os.path.join(here, "..", "..", m.group(1))) as f:
            return markdown_roff(f.read())
    text = re.sub(r"^@MARKDOWN (\S+)@$", markdown, text, flags=re.M)

    def keys(m):
        with open(os.path.join(here, "..", "..", m.group(1))) as f:
            return keys_roff(f.read())
    text = re.sub(r"^@KEYS (\S+)@$", keys, text, flags=re.M)

    cmds = command_table(a.pmbpf)
    if cmd and cmd in cmds:
        help_text = run(a.pmbpf, cmd, "--help")
        text = text.replace("@NAME@", f"pmbpf\\-{cmd} \\- {esc(cmds[cmd])}")
        text = text.replace("@SYNOPSIS@", synopsis_roff(help_text, cmd))
        text = text.replace("@OPTIONS@", options_roff(help_text))
    elif m and not cmd:  # pmbpf.8
        help_text = run(a.pmbpf, "--help")
        text = text.replace("@SYNOPSIS@", synopsis_roff(help_text, None))
        rows = []
        for name, desc in cmds.items():
            rows += [".TP", f"\\fBpmbpf {name}\\fR", esc(desc)]
        text = text.replace("@COMMANDS@", "\n".join(rows))
    elif cmd:
        sys.exit(f"mkman: {base}: pmbpf has no command '{cmd}' (pmbpf help)")
    text = text.replace("@VERSION@", a.version).replace("@DATE@", a.date)
    left = re.findall(r"@[A-Z]+@", text)
    if left:
        sys.exit(f"mkman: {base}: unknown placeholders {' '.join(sorted(set(left)))}")
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
