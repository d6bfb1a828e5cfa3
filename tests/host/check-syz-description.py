#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check the syzkaller description of nnp's uapi against the header.

Usage: check-syz-description.py [--header H] [--desc D] [--cc CC]

Fails (exit 1, one line per problem) unless:
  - every DRM_IOCTL_NNP_* of the header has an ioctl$ call whose argument is
    the header's struct for it, in the direction the ioctl number encodes
    (_IOW: in, _IOWR: inout, _IOR: out);
  - every struct drm_nnp_* of the header is described by a syz struct of the
    same name, or by one headed "# as struct NAME", with the header's
    fields in the header's order;
  - each described struct's fields sit at the C compiler's offsets and the
    struct has the C compiler's size;
  - every syz struct is reachable from a call (syzkaller rejects others),
    and every DRM_NNP_* name the description uses is defined by the header.
Sizes come from compiling a probe against the header, not from this script.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

SYZ_BUILTIN_FLAGS = {"open_flags", "mmap_prot", "mmap_flags", "dup_flags"}


def split_args(s):
    """Split 'a, b[c, d], e' at top-level commas."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "[" or ch == "(":
            depth += 1
        elif ch == "]" or ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def type_head(t):
    """'ptr64[out, x]' -> ('ptr64', ['out', 'x']); 'int32' -> ('int32', [])."""
    m = re.fullmatch(r"(\w+)(?:\[(.*)\])?", t.strip())
    if not m:
        raise ValueError("bad type %r" % t)
    return m.group(1), split_args(m.group(2)) if m.group(2) is not None else []


class Desc:
    def __init__(self, text):
        self.resources = {}      # name -> base type
        self.structs = {}        # name -> [(field, type)]
        self.as_struct = {}      # syz struct -> C struct it lays out
        self.flags = {}          # flag set -> [values]
        self.calls = []          # (name, [(arg, type)])
        lines = text.splitlines()
        i, pending_as = 0, None
        while i < len(lines):
            line = lines[i].strip()
            i += 1
            m = re.fullmatch(r"#\s*as struct (\w+)", line)
            if m:
                pending_as = m.group(1)
                continue
            if not line or line.startswith("#") or line.startswith("include "):
                continue
            m = re.fullmatch(r"resource (\w+)\[(\w+)\]", line)
            if m:
                self.resources[m.group(1)] = m.group(2)
                continue
            m = re.fullmatch(r"(\w+)\s*\{", line)
            if m:
                name, fields = m.group(1), []
                while lines[i].strip() != "}":
                    f = lines[i].split()
                    i += 1
                    if f:
                        ftype = " ".join(f[1:])
                        ftype = re.sub(r"\s*\((in|out|inout)\)$", "", ftype)
                        fields.append((f[0], ftype))
                i += 1
                self.structs[name] = fields
                if pending_as:
                    self.as_struct[name] = pending_as
                pending_as = None
                continue
            m = re.fullmatch(r"(\w+)\s*=\s*(.+)", line)
            if m:
                self.flags[m.group(1)] = [v.strip() for v in m.group(2).split(",")]
                continue
            m = re.fullmatch(r"(\w+\$\w+)\((.*)\)(?:\s+\w+)?", line)
            if m:
                args = []
                for a in split_args(m.group(2)):
                    an, at = a.split(None, 1)
                    args.append((an, at))
                self.calls.append((m.group(1), args))
                continue
            raise ValueError("cannot parse line %d: %s" % (i, line))


def parse_header(text):
    """Structs (name -> [field]) and ioctls (macro -> (dir macro, struct))."""
    structs = {}
    for m in re.finditer(r"^struct (drm_nnp_\w+) \{\n(.*?)^\};", text, re.S | re.M):
        body = re.sub(r"/\*.*?\*/", "", m.group(2), flags=re.S)
        structs[m.group(1)] = re.findall(
            r"^\s*(?:__[us]\d+|char|struct \w+)\s+(\w+)(?:\[[^\]]*\])?;",
            body, re.M)
    ioctls = {}
    for m in re.finditer(r"#define (DRM_IOCTL_NNP_\w+) \\\n\s*(DRM_IO\w*)\([^,]+, struct (\w+)\)",
                         text):
        ioctls[m.group(1)] = (m.group(2), m.group(3))
    return structs, ioctls


def probe(cc, header, exprs):
    """Evaluate integer C expressions against the header; name -> value."""
    src = ["#include <stddef.h>", "#include <stdio.h>",
           '#include "%s"' % os.path.abspath(header), "int main(void) {"]
    for key, expr in exprs.items():
        src.append('printf("%%s %%llu\\n", "%s", (unsigned long long)(%s));'
                   % (key, expr))
    src.append("return 0; }")
    with tempfile.TemporaryDirectory() as tmp:
        c, exe = os.path.join(tmp, "probe.c"), os.path.join(tmp, "probe")
        with open(c, "w") as f:
            f.write("\n".join(src) + "\n")
        subprocess.run([cc, "-std=gnu11", "-I/usr/include/libdrm", "-o", exe, c],
                       check=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    return {k: int(v) for k, v in (l.rsplit(None, 1) for l in out.splitlines())}


class Layout:
    """Sizes and offsets of syz types, natural alignment as in C."""

    def __init__(self, desc, consts):
        self.d, self.consts = desc, consts

    def number(self, s):
        return int(s, 0) if re.fullmatch(r"-?\d+|0x[0-9a-fA-F]+", s) else self.consts[s]

    def size_align(self, t):
        head, args = type_head(t)
        m = re.fullmatch(r"int(8|16|32|64)", head)
        if m:
            n = int(m.group(1)) // 8
            return n, n
        if head in ("intptr", "ptr64", "ptr"):
            return 8, 8
        if head == "fd":
            return 4, 4
        if head in ("const", "flags", "len", "bytesize"):
            return self.size_align(args[-1]) if len(args) > 1 else (8, 8)
        if head == "fileoff":
            return self.size_align(args[0]) if args else (8, 8)
        if head == "array":
            size, align = self.size_align(args[0])
            return size * self.number(args[1]), align
        if head in self.d.resources:
            return self.size_align(self.d.resources[head])
        if head in self.d.structs:
            offsets, size, align = self.struct(head)
            return size, align
        raise ValueError("unknown type %r" % t)

    def struct(self, name):
        offsets, off, align = [], 0, 1
        for _, ftype in self.d.structs[name]:
            size, a = self.size_align(ftype)
            off = (off + a - 1) // a * a
            offsets.append(off)
            off += size
            align = max(align, a)
        return offsets, (off + align - 1) // align * align, align


def referenced_types(t):
    head, args = type_head(t)
    yield head
    for a in args:
        if re.fullmatch(r"\w+(\[.*\])?", a):
            yield from referenced_types(a)


def check(header_path, desc_path, cc):
    problems = []
    with open(header_path) as f:
        htext = f.read()
    with open(desc_path) as f:
        d = Desc(f.read())
    hstructs, hioctls = parse_header(htext)
    c_of = {s: d.as_struct.get(s, s) for s in d.structs}

    # The C facts the description is compared with.
    exprs = {}
    for s, fields in d.structs.items():
        cs = c_of[s]
        if cs in hstructs or s in d.as_struct:
            exprs["sizeof:" + s] = "sizeof(struct %s)" % cs
            for fname, _ in fields:
                exprs["off:%s.%s" % (s, fname)] = "offsetof(struct %s, %s)" % (cs, fname)
    for name, (_, cs) in hioctls.items():
        exprs["dir:" + name] = "_IOC_DIR(%s)" % name
        exprs["size:" + name] = "_IOC_SIZE(%s)" % name
        exprs["sizeof:struct " + cs] = "sizeof(struct %s)" % cs
    # Names the description uses (call names after '$' are only labels).
    with open(desc_path) as f:
        body = re.sub(r"\$\w+|#.*", "", f.read())
    used_consts = set(re.findall(r"\bDRM_(?:IOCTL_)?NNP_[A-Z0-9_]+\b", body))
    for c in used_consts:
        if not re.search(r"#define %s\b" % c, htext):
            problems.append("%s is not defined by the header" % c)
        else:
            exprs["const:" + c] = c
    try:
        facts = probe(cc, header_path, exprs)
    except subprocess.CalledProcessError as e:
        return problems + ["the probe does not build against the header: %s" % e]
    consts = {k[6:]: v for k, v in facts.items() if k.startswith("const:")}
    lay = Layout(d, consts)

    # Structs: every header struct described, fields and layout exact.
    described = set(c_of.values())
    for cs in hstructs:
        if cs not in described:
            problems.append("struct %s is not described" % cs)
    for s, fields in d.structs.items():
        cs = c_of[s]
        names = [f for f, _ in fields]
        if cs in hstructs and names != hstructs[cs]:
            problems.append("%s: fields %s, header struct %s has %s"
                            % (s, names, cs, hstructs[cs]))
        if "sizeof:" + s not in facts:
            continue
        try:
            offsets, size, _ = lay.struct(s)
        except (KeyError, ValueError) as e:
            problems.append("%s: %s" % (s, e))
            continue
        if size != facts["sizeof:" + s]:
            problems.append("%s: %d bytes, struct %s has %d"
                            % (s, size, cs, facts["sizeof:" + s]))
        for (fname, _), off in zip(fields, offsets):
            want = facts.get("off:%s.%s" % (s, fname))
            if want is not None and want != off:
                problems.append("%s.%s: offset %d, struct %s has it at %d"
                                % (s, fname, off, cs, want))

    # Ioctls: each described, with its struct and direction.
    dirs = {1: "in", 2: "out", 3: "inout"}    # _IOC_WRITE, _IOC_READ
    seen = set()
    for call, args in d.calls:
        if not call.startswith("ioctl$"):
            continue
        cmd = dict(args).get("cmd", "")
        m = re.fullmatch(r"const\[(DRM_IOCTL_NNP_\w+)\]", cmd)
        if not m:
            continue
        name = m.group(1)
        seen.add(name)
        if name not in hioctls:
            problems.append("%s: %s is not an ioctl of the header" % (call, name))
            continue
        head, pargs = type_head(dict(args).get("arg", ""))
        if head != "ptr" or len(pargs) != 2:
            problems.append("%s: the argument is not ptr[DIR, STRUCT]" % call)
            continue
        want_dir = dirs.get(facts["dir:" + name])
        if pargs[0] != want_dir:
            problems.append("%s: ptr[%s, ...], the ioctl number says %s"
                            % (call, pargs[0], want_dir))
        if c_of.get(pargs[1]) != hioctls[name][1]:
            problems.append("%s: argument %s lays out %s, the ioctl takes struct %s"
                            % (call, pargs[1], c_of.get(pargs[1]), hioctls[name][1]))
    for name in hioctls:
        if name not in seen:
            problems.append("%s is not described" % name)

    # Reachability from the calls, as syzkaller demands.
    reach, todo = set(), [t for _, args in d.calls for _, t in args]
    while todo:
        for head in referenced_types(todo.pop()):
            if head in d.structs and head not in reach:
                reach.add(head)
                todo.extend(t for _, t in d.structs[head])
            elif head in d.flags:
                reach.add(head)
    for s in list(d.structs) + list(d.flags):
        if s not in reach:
            problems.append("%s is not used by any call" % s)
    return problems


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser()
    ap.add_argument("--header", default=os.path.join(root, "uapi/drm/nnp_accel.h"))
    ap.add_argument("--desc", default=os.path.join(root, "uapi/drm/nnp_accel.txt"))
    ap.add_argument("--cc", default="cc")
    a = ap.parse_args()
    problems = check(a.header, a.desc, a.cc)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
