# SPDX-License-Identifier: GPL-2.0-or-later
"""The mutation operators of tests/mutation/run: reads a C file and lists
its mutants, each a small change to one place, with a deterministic id
FILE:LINE:COL:OP (COL counts characters from 1, a tab is one).

Operators (one mutant per place and operator unless said otherwise):

  ROR  a comparison flipped: < to <=, <= to <, > to >=, >= to >, == to !=,
       != to ==  (a bound moved by one, or the test turned around)
  LCR  && to ||, || to &&
  NEG  the condition of an if/while negated: (x) to (!(x)), (!x) to (x);
       only for conditions without a top-level comparison or && / ||,
       which ROR and LCR already change
  BND  an integer constant compared with something moved by one, the way
       ROR does not move the bound: x < N to x < N-1 (BND-1), x <= N to
       x <= N+1 (BND+1), x > N to x > N+1, x >= N to x >= N-1, x == N and
       x != N to N+1; not for the sign tests x < 0 and x >= 0, whose other
       bound (-1) is an errno too
  CRP  a constant swapped: 0 to 1, 1 to 0, true to false, false to true
       (constants in comparisons get BND instead); not the 0 of 'return 0;'
       in an int function that returns negative errnos: there 0 and 1
       both mean success (callers test r < 0), the mutant is equivalent
  SDL  a statement deleted (replaced by {}): a call whose result is
       ignored (f(x); or (void)f(x);), and the return or goto that an if
       takes (if (r < 0) return r;); not the calls that only release
       memory or descriptors (free, close, stats_done, ...: see RELEASE)
  ESC  an escape dropped: a string literal that is the escaped form of one
       character ("\\\\\"", "&lt;", "&amp;", ...) becomes that character

Not mutated: comments, preprocessor lines (#include, #define, ...),
string literals other than the escape forms above (message and format
text: changing words no test reads only adds noise, and the messages
users see are pinned by the tests that read them, not by mutants of
their spelling). A leak (a deleted free) is invisible to a functional
test, hence the RELEASE list.
"""

import re

PUNCT = sorted("""<<= >>= ... -> ++ -- << >> <= >= == != && || += -= *= /= %= &=
^= |= ## { } [ ] ( ) ; : , . ? ~ ! + - * / % & | ^ < > = #""".split(),
               key=len, reverse=True)
ROR = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
LCR = {"&&": "||", "||": "&&"}
COMPARE = set(ROR)
# Operators binding looser than unary '!': NEG wraps instead of unwrapping.
BINARY = COMPARE | set(LCR) | set("+ - * / % & | ^ << >> ? : = , += -= *= "
                                  "/= %= &= |= ^= <<= >>=".split())
# The escaped form (as written in C source) of one character, and the
# character (as written in C source).
ESCAPES = {r'\\\"': r'\"', r'\\\\': r'\\', r'\\n': r'\n', r'\\t': r'\t',
           r'\\r': r'\r', r'\"\"': r'\"', '&lt;': '<', '&gt;': '>',
           '&amp;': '&', '&quot;': r'\"', '&apos;': "'", '&#39;': "'"}
RELEASE = re.compile(r"^(free|close|fclose|closedir|va_end|va_start|"
                     r"sd_journal_close|.*_unref|.*_free|.*_freep|"
                     r"stats_done|report_data_done|journal_set_done)$")
INTEGER = re.compile(r"^(0[xX][0-9a-fA-F]+|[0-9]+)([uUlL]*)$")


class Token:
    __slots__ = ("kind", "text", "start", "end", "line", "col")

    def __init__(self, kind, text, start, line, col):
        self.kind, self.text, self.start = kind, text, start
        self.end = start + len(text)
        self.line, self.col = line, col


def tokenize(src):
    """C tokens without comments and preprocessor lines."""
    toks = []
    i, n, line, bol = 0, len(src), 1, 0
    at_line_start = True
    while i < n:
        c = src[i]
        if c == "\n":
            i += 1
            line += 1
            bol = i
            at_line_start = True
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if c == "\\" and src.startswith("\\\n", i):
            i += 2
            line += 1
            bol = i
            continue
        if src.startswith("//", i):
            i = src.find("\n", i)
            i = n if i < 0 else i
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += src.count("\n", i, j)
            if "\n" in src[i:j]:
                bol = src.rfind("\n", i, j) + 1
            i = j
            continue
        if c == "#" and at_line_start:  # preprocessor line, with continuations
            while i < n and src[i] != "\n":
                if src.startswith("\\\n", i):
                    i += 1
                    line += 1
                    bol = i + 1
                elif src.startswith("/*", i):
                    j = src.find("*/", i + 2)
                    j = n if j < 0 else j + 2
                    line += src.count("\n", i, j)
                    if "\n" in src[i:j]:
                        bol = src.rfind("\n", i, j) + 1
                    i = j - 1
                i += 1
            continue
        at_line_start = False
        start, col = i, i - bol + 1
        if c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            i = j + 1
            toks.append(Token("str" if c == '"' else "chr", src[start:i],
                              start, line, col))
            continue
        m = re.compile(r"\.?[0-9]([0-9a-zA-Z_.]|[eEpP][+-])*").match(src, i)
        if m:
            toks.append(Token("num", m.group(0), start, line, col))
            i = m.end()
            continue
        m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(src, i)
        if m:
            toks.append(Token("id", m.group(0), start, line, col))
            i = m.end()
            continue
        for p in PUNCT:
            if src.startswith(p, i):
                toks.append(Token("op", p, start, line, col))
                i += len(p)
                break
        else:
            raise ValueError("line %d: cannot read %r" % (line, c))
    return toks


class Mutant:
    """One change: edits are (start, end, replacement) on the file text."""
    __slots__ = ("file", "line", "col", "op", "edits", "what")

    def __init__(self, file, tok, op, edits, what):
        self.file, self.line, self.col = file, tok.line, tok.col
        self.op, self.edits, self.what = op, edits, what

    @property
    def id(self):
        return "%s:%d:%d:%s" % (self.file, self.line, self.col, self.op)

    def apply(self, src):
        for start, end, text in sorted(self.edits, reverse=True):
            src = src[:start] + text + src[end:]
        return src


def _match(toks):
    """Index of the matching bracket for every bracket token."""
    pair, stack = {}, []
    for k, t in enumerate(toks):
        if t.text in "([{" and t.kind == "op":
            stack.append(k)
        elif t.text in ")]}" and t.kind == "op" and stack:
            o = stack.pop()
            pair[o], pair[k] = k, o
    return pair


def _statement_start(toks, pair, k):
    """Does a statement begin at token k?"""
    if k == 0:
        return False
    p = toks[k - 1]
    if p.text in (";", "{", "}") or p.text == "else":
        return True
    if p.text == ")" and (k - 1) in pair:
        o = pair[k - 1]
        return o > 0 and toks[o - 1].text in ("if", "while", "for")
    if p.text == ":":  # case X: / default: / label:
        j = k - 2
        while j >= 0 and toks[j].text not in (";", "{", "}", "?", "case",
                                                 "default"):
            j -= 1
        if j < 0:
            return False
        if toks[j].text in ("case", "default"):
            return True
        return j == k - 3 and toks[j].text != "?" and toks[k - 2].kind == "id"
    return False


def _top_level(toks, pair, a, b):
    """Tokens between a and b (exclusive) outside nested brackets."""
    k = a + 1
    while k < b:
        t = toks[k]
        yield t
        k = pair[k] + 1 if t.text in "([{" and t.kind == "op" and k in pair \
            else k + 1


# The bound ROR does not move: ROR turns x < N into x <= N (N now passes),
# BND moves it the other way, x < N - 1 (N - 1 now fails too).
BOUND_SHIFT = {"<": -1, "<=": +1, ">": +1, ">=": -1, "==": +1, "!=": +1}
MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def _comparison(toks, k):
    """The operator a literal is compared with, as if the literal stood on
    the right; None if token k is not an operand of a comparison."""
    j = k - 1
    if j >= 0 and toks[j].text == "-":  # x > -1: the literal is 1
        j -= 1
    if j >= 0 and toks[j].text in COMPARE:
        return toks[j].text
    if k + 1 < len(toks) and toks[k + 1].text in COMPARE:
        return MIRROR[toks[k + 1].text]
    return None


def mutants(path, src, name=None):
    """Every mutant of one C source (path is how ids name the file)."""
    name = name or path
    toks = tokenize(src)
    pair = _match(toks)
    out = []

    def add(tok, op, edits, what):
        out.append(Mutant(name, tok, op, edits, what))

    errno_functions = _errno_functions(toks, pair)

    def errno_success(k):
        """Is token k the 0 of 'return 0;' in an int function that
        returns negative errnos?"""
        return toks[k - 1].text == "return" and toks[k + 1].text == ";" and \
            any(a < k < b for a, b in errno_functions)

    for k, t in enumerate(toks):
        if t.kind == "op" and t.text in ROR:
            add(t, "ROR", [(t.start, t.end, ROR[t.text])],
                "%s -> %s" % (t.text, ROR[t.text]))
        elif t.kind == "op" and t.text in LCR:
            add(t, "LCR", [(t.start, t.end, LCR[t.text])],
                "%s -> %s" % (t.text, LCR[t.text]))
        elif t.kind == "num" and INTEGER.match(t.text):
            m = INTEGER.match(t.text)
            digits = m.group(1)
            base = 16 if digits[:2] in ("0x", "0X") else \
                8 if len(digits) > 1 and digits[0] == "0" else 10
            value = int(digits, base)

            def spell(v):
                form = {16: "%#x", 8: "0%o", 10: "%d"}[base]
                return form % v + m.group(2)
            cmp = _comparison(toks, k)
            if cmp:
                shift = BOUND_SHIFT[cmp]
                if toks[k - 1].text == "-":
                    shift = -shift
                # x < 0 and x >= 0 are sign tests of a negative errno: -1
                # is one too (-EPERM), so their other bound is no bound.
                if value + shift >= 0:
                    op = "BND%+d" % shift
                    add(t, op, [(t.start, t.end, spell(value + shift))],
                        "%s -> %s" % (t.text, spell(value + shift)))
            elif value == 0 and errno_success(k):
                pass
            elif value in (0, 1):
                add(t, "CRP", [(t.start, t.end, spell(1 - value))],
                    "%s -> %s" % (t.text, spell(1 - value)))
        elif t.kind == "id" and t.text in ("true", "false"):
            other = "false" if t.text == "true" else "true"
            add(t, "CRP", [(t.start, t.end, other)],
                "%s -> %s" % (t.text, other))
        elif t.kind == "str" and t.text[1:-1] in ESCAPES:
            raw = '"%s"' % ESCAPES[t.text[1:-1]]
            add(t, "ESC", [(t.start, t.end, raw)], "%s -> %s" % (t.text, raw))
        elif t.kind == "id" and t.text in ("if", "while") and \
                k + 1 < len(toks) and toks[k + 1].text == "(" and \
                (k + 1) in pair:
            a, b = k + 1, pair[k + 1]
            if b == a + 1 or any(x.text in COMPARE or x.text in LCR
                                 for x in _top_level(toks, pair, a, b)):
                continue
            first, last = toks[a + 1], toks[b - 1]
            inner = src[first.start:last.end]
            if first.text == "!" and not any(
                    x.text in BINARY for x in _top_level(toks, pair, a, b)):
                edits = [(first.start, first.end, "")]
                what = "(%s) -> (%s)" % (inner, src[first.end:last.end])
            else:
                edits = [(first.start, first.start, "!("),
                         (last.end, last.end, ")")]
                what = "(%s) -> (!(%s))" % (inner, inner)
            add(first, "NEG", edits, what)
        if _statement_start(toks, pair, k):
            _deletion(toks, pair, k, src, add)
    return out


def _errno_functions(toks, pair):
    """(start, end) of the bodies of the int functions that return a
    negative errno somewhere (return -EINVAL;)."""
    found, k = [], 0
    while k < len(toks):
        t = toks[k]
        if t.text == "{" and k in pair and k > 0 and toks[k - 1].text == ")":
            end = pair[k]
            # The return type: the tokens before the name and its '('.
            j = pair[k - 1] - 1
            start = j
            while start > 0 and toks[start - 1].text not in (";", "}", ")"):
                start -= 1
            rtype = [x.text for x in toks[start:j]]
            body = toks[k:end]
            if rtype and rtype[-1] == "int" and any(
                    a.text == "return" and b.text == "-" and
                    re.match(r"^E[A-Z0-9]+$", c.text)
                    for a, b, c in zip(body, body[1:], body[2:])):
                found.append((k, end))
            k = end + 1
        elif t.text == "{" and k in pair:
            k = pair[k] + 1  # struct, enum or initializer at top level
        else:
            k += 1
    return found


def _short(code):
    code = " ".join(code.split())
    return code if len(code) <= 60 else code[:56] + " ..."


def _deletion(toks, pair, k, src, add):
    t = toks[k]
    j = k
    # (void)f(x);
    if t.text == "(" and j + 3 < len(toks) and toks[j + 1].text == "void" \
            and toks[j + 2].text == ")":
        j += 3
    if toks[j].kind == "id" and j + 1 < len(toks) and \
            toks[j + 1].text == "(" and (j + 1) in pair and \
            toks[j].text not in ("if", "while", "for", "switch", "return",
                                 "sizeof") and \
            pair[j + 1] + 1 < len(toks) and toks[pair[j + 1] + 1].text == ";":
        if RELEASE.match(toks[j].text):
            return
        end = toks[pair[j + 1] + 1]
        add(t, "SDL", [(t.start, end.end, "{}")],
            "%s -> {}" % _short(src[t.start:end.end]))
        return
    if t.text not in ("return", "goto"):
        return
    # Only the return/goto an if takes: its whole body, or the last
    # statement of its braced body.
    end = k
    while end < len(toks) and toks[end].text != ";":
        end = pair.get(end, end) + 1 if toks[end].text in "([{" else end + 1
    if end >= len(toks):
        return
    p = toks[k - 1]
    body_of_if = p.text == ")" and (k - 1) in pair and \
        toks[pair[k - 1] - 1].text == "if"
    if p.text in (";", "{", "}") and end + 1 < len(toks) and \
            toks[end + 1].text == "}" and (end + 1) in pair:
        o = pair[end + 1]
        body_of_if = o > 0 and toks[o - 1].text == ")" and \
            (o - 1) in pair and toks[pair[o - 1] - 1].text == "if"
    if body_of_if:
        add(t, "SDL", [(t.start, toks[end].end, "{}")],
            "%s -> {}" % _short(src[t.start:toks[end].end]))
