"""bench/variants.py's machinery: each transformation's exact output on small programs, the
labelled line tracked through it, variants that break their program discarded, the verdict
cache, and the printed table. The benchmark itself (every corpus program, every
transformation, ~10 minutes cold) is run by hand: bench/README.md has its figures."""

from __future__ import annotations

import dataclasses
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from corpus import oracle

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench" / "variants.py"
sys.path.append(str(ROOT / "bench"))  # after tests/: bench/corpus.py must not shadow the corpus package

from transforms import anchor, subject  # noqa: E402
from transforms.subject import MARK, NotApplicable, Subject, finish, mark  # noqa: E402

pytest.importorskip("torch")


def _bench():
    spec = importlib.util.spec_from_file_location("bench_variants", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_variants"] = module
    spec.loader.exec_module(module)
    return module


variants = _bench()

FAQ = '''# source: https://pytorch.org/docs/stable/notes/faq.html
# label: GG101 13
# effect: graph_kept
import torch


def train(model, loader, optimizer, criterion):
    total = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        total += loss
    return total


def observe():
    model = torch.nn.Linear(4, 2)
    loader = [(torch.randn(3, 4), torch.randn(3, 2))] * 2
    return {"kept": train(model, loader, torch.optim.SGD(model.parameters(), lr=0.1), torch.nn.MSELoss())}
'''

EVALUATOR = '''# source: https://github.com/giotto-ai/giotto-deep/issues/44
# label: GG101|GG103 15
# effect: activations_alive
import torch


class Evaluator:
    def __init__(self, model):
        self.model = model

    def run(self, batches):
        self.model.eval()
        outputs = []
        for x in batches:
            outputs.append(self.model(x))
        return outputs


def make(width):
    return torch.nn.Linear(width, 2)


def observe():
    return {"kept": Evaluator(make(4)).run([torch.randn(3, 4)] * 2)}
'''

PREDICT = '''# source: https://discuss.pytorch.org/t/model-eval-vs-with-torch-no-grad/19615
# label: GG103 11
# effect: activations_alive
import torch


def predict(model, batches):
    model.eval()
    outputs = []
    for x in batches:
        out = model(x)
        outputs.append(out.softmax(-1))
    return outputs


def observe():
    return {"kept": predict(torch.nn.Linear(4, 2), [torch.randn(3, 4)] * 2)}
'''

PROGRAMS = {"faq": ("GG101", FAQ), "evaluator": ("GG101", EVALUATOR), "predict": ("GG103", PREDICT)}


def program(name: str, source: str | None = None, rule: str = "GG101") -> oracle.Program:
    rule, text = PROGRAMS[name] if source is None else (rule, source)
    return oracle.parse(text, Path(f"/corpus/{rule}/{name}.py"))


def made(transform: str, name: str, kind: str = "", source: str | None = None, rule: str = "GG101"):
    """(the variant's source without its header, the lines where a finding counts) or the reason
    the transformation does not apply."""
    p = program(name, source, rule)
    for o in variants.TRANSFORMS[transform](Subject(p)):
        if o.kind == kind:
            if o.code is None:
                return o.reason
            code, lines = finish(o.code, p)
            return code.split("import torch\n", 1)[1], sorted(lines)
    raise AssertionError(f"no {kind!r} variant")


def line(body: str, n: int) -> str:
    """Line n of the file whose text after `import torch` (line 4) is `body`."""
    return body.splitlines()[n - 5]


# ---------------------------------------------------------------------- the label's line
def test_marking_and_unmarking_gives_back_every_corpus_program():
    for p in oracle.programs():
        if p.line is None or not p.source.splitlines()[p.line - 1].strip():
            continue
        assert finish(mark(p.source, p.line, MARK), p) == (p.source, frozenset({p.line})), p.name


def test_a_line_that_cannot_end_with_a_comment_is_not_tracked():
    source = 'x = """a\nb"""\ny = 1 + \\\n    2\n\n'
    for line in (1, 3, 5):
        with pytest.raises(NotApplicable):
            mark(source, line, MARK)


def test_the_label_follows_the_statement_and_the_header_says_where():
    p = program("faq")
    o = variants.TRANSFORMS["extract-after"](Subject(p))[0]
    code, lines = finish(o.code, p)
    assert sorted(lines) == [13, 18]  # the call that replaced the statement, the statement in the helper
    assert code.splitlines()[1] == "# label: GG101 18"
    assert code.splitlines()[17] == "    total += loss"
    assert code.splitlines()[12] == "        total = extracted(total, loss)"


def test_a_lookalike_is_anchored_on_the_statement_of_its_rule():
    source = FAQ.replace("# label: GG101 13", "# label: lookalike GG101").replace("total += loss",
                                                                                "total += loss.item()")
    assert anchor.find(source, "GG101") == 13
    assert anchor.find(PREDICT, "GG103") == 11
    assert anchor.find(PREDICT, "GG302") == 12  # no `.backward()`: the store in a loop


# ---------------------------------------------------------------------- each transformation's text
def test_rename():
    assert made("rename", "faq") == ('''

def f1(p1, p2, p3, p4):
    v1 = 0
    for v2, v3 in p2:
        p3.zero_grad()
        v4 = p4(p1(v2), v3)
        v4.backward()
        v1 += v4
    return v1


def observe():
    p1 = torch.nn.Linear(4, 2)
    p2 = [(torch.randn(3, 4), torch.randn(3, 2))] * 2
    return {"kept": f1(p1, p2, torch.optim.SGD(p1.parameters(), lr=0.1), torch.nn.MSELoss())}
''', [13])
    assert made("rename", "evaluator")[0] == '''

class C1:
    def __init__(self, p1):
        self.a1 = p1

    def run(self, p2):
        self.a1.eval()
        v1 = []
        for v2 in p2:
            v1.append(self.a1(v2))
        return v1


def f1(p3):
    return torch.nn.Linear(p3, 2)


def observe():
    return {"kept": C1(f1(4)).run([torch.randn(3, 4)] * 2)}
'''


RENAMED_LIBRARY_NAMES = '''# source: https://github.com/pytorch/pytorch/issues/1
# label: GG104 18
# effect: graph_grows
import torch
from torch import nn


class Cell(nn.Module):
    def __init__(self, size, decay=0.9):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.decay = decay
        self.register_buffer("memory", torch.zeros(size))
        self.stats = {}

    def forward(self, x, scale=1.0):
        self.stats.update(n=1)
        self.memory = self.decay * self.memory + torch.sum(x * self.weight, dim=0) * scale
        return self.memory


def observe():
    cell = Cell(3, decay=0.5)
    return {"sizes": [cell(torch.randn(2, 3), scale=2.0)]}
'''


def test_rename_leaves_library_names_and_follows_keywords_and_registered_buffers():
    assert made("rename", "cell", source=RENAMED_LIBRARY_NAMES, rule="GG104")[0] == '''from torch import nn


class C1(nn.Module):
    def __init__(self, p1, p2=0.9):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(p1))
        self.a1 = p2
        self.register_buffer("a2", torch.zeros(p1))
        self.a3 = {}

    def forward(self, p3, p4=1.0):
        self.a3.update(n=1)
        self.a2 = self.a1 * self.a2 + torch.sum(p3 * self.weight, dim=0) * p4
        return self.a2


def observe():
    v1 = C1(3, p2=0.5)
    return {"sizes": [v1(torch.randn(2, 3), p4=2.0)]}
'''


def test_extract_before_and_after():
    assert made("extract-before", "faq") == ('''

def extracted(total, loss):
    total += loss
    return total


def train(model, loader, optimizer, criterion):
    total = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        total = extracted(total, loss)
    return total


def observe():
    model = torch.nn.Linear(4, 2)
    loader = [(torch.randn(3, 4), torch.randn(3, 2))] * 2
    return {"kept": train(model, loader, torch.optim.SGD(model.parameters(), lr=0.1), torch.nn.MSELoss())}
''', [8, 18])
    # a statement that reads `self` becomes a method of the caller's class
    assert made("extract-after", "evaluator") == ('''

class Evaluator:
    def __init__(self, model):
        self.model = model

    def run(self, batches):
        self.model.eval()
        outputs = []
        for x in batches:
            self.extracted(outputs, x)
        return outputs

    def extracted(self, outputs, x):
        outputs.append(self.model(x))


def make(width):
    return torch.nn.Linear(width, 2)


def observe():
    return {"kept": Evaluator(make(4)).run([torch.randn(3, 4)] * 2)}
''', [15, 19])


@pytest.mark.parametrize("statement, reason", [
    ("        break", "the statement has break"),
    ("        continue", "the statement has continue"),
    ("        yield loss", "the statement has yield"),
])
def test_extract_refuses_what_would_change_meaning(statement, reason):
    source = FAQ.replace("        total += loss", statement)
    assert made("extract-before", "faq", source=source) == reason


def test_container():
    loop = """    total = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
{}
    return total
"""
    expected = {
        "dict": ('def as_dict(value):\n    return {"out": value}\n', '        total += as_dict(loss)["out"]', [17]),
        "tuple": ("def as_pair(value):\n    return value, None\n", "        total += as_pair(loss)[0]", [17]),
        "kwargs": ("class Record:\n    def __init__(self, **fields):\n        self.fields = fields\n",
                   '        total += Record(out=loss).fields["out"]', [18]),
        # the `for` line holds the value now: it counts for the label too
        "items": ('def as_dict(value):\n    return {"out": value}\n',
                  "        for key, value in as_dict(loss).items():\n            total += value", [17, 18]),
    }
    for kind, (helper, statement, lines) in expected.items():
        code, got = made("container", "faq", kind)
        assert code == f"\n\n{helper}\n\ndef train(model, loader, optimizer, criterion):\n{loop.format(statement)}" \
                       + FAQ.split("    return total\n", 1)[1], kind
        assert got == lines, kind


def test_container_routes_the_operand():
    # the receiver a method chain starts from, not what the chain makes of it
    source = PREDICT.replace("out = model(x)", "out = model(x).detach()")
    assert line(made("container", "predict", "dict", source=source, rule="GG103")[0], 15) == \
        '        out = as_dict(model(x))["out"].detach()'
    # what a store call keeps
    assert line(made("container", "evaluator", "tuple")[0], 19) == \
        "            outputs.append(as_pair(self.model(x))[0])"


def test_method():
    assert made("method", "faq") == ('''

class Holder:
    def train(self, model, loader, optimizer, criterion):
        self.total = 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            self.total += loss
        return self.total


def observe():
    model = torch.nn.Linear(4, 2)
    loader = [(torch.randn(3, 4), torch.randn(3, 2))] * 2
    return {"kept": Holder().train(model, loader, torch.optim.SGD(model.parameters(), lr=0.1), torch.nn.MSELoss())}
''', [14])
    # a method keeps the state on its own object
    assert made("method", "evaluator") == (EVALUATOR.split("import torch\n", 1)[1].replace(
        "        outputs = []\n        for x in batches:\n            outputs.append(self.model(x))\n"
        "        return outputs",
        "        self.outputs = []\n        for x in batches:\n            self.outputs.append(self.model(x))\n"
        "        return self.outputs"), [15])


def test_method_keeps_a_parameter_on_self():
    source = FAQ.replace("def train(model, loader, optimizer, criterion):\n    total = 0",
                         "def train(model, loader, optimizer, criterion, total):").replace(
        "torch.nn.MSELoss())}", "torch.nn.MSELoss(), 0)}").replace("# label: GG101 13", "# label: GG101 12")
    code, lines = made("method", "faq", source=source)
    assert [line(code, 8), line(code, 9)] == ["    def train(self, model, loader, optimizer, criterion, total):",
                                              "        self.total = total"]
    assert line(code, 14) == "            self.total += loss" and lines == [14]


def test_method_leaves_an_attribute_the_class_has():
    source = EVALUATOR.replace("self.model.eval()", "self.model.eval()\n        self.outputs = None").replace(
        "# label: GG101|GG103 15", "# label: GG101|GG103 16")
    assert made("method", "evaluator", source=source) == "the state's name is an attribute of the class already"


def test_generator():
    assert made("generator", "faq") == ('''

def produce(loader, criterion, model):
    for x, y in loader:
        yield (x, y), criterion(model(x), y)


def train(model, loader, optimizer, criterion):
    total = 0
    for (x, y), loss in produce(loader, criterion, model):
        optimizer.zero_grad()
        loss.backward()
        total += loss
    return total
''' + FAQ.split("    return total\n", 1)[1], [17])
    # the labelled producer: its line is the yield's, and the loop that consumes it counts
    assert made("generator", "predict", rule="GG103") == ('''

def produce(batches, model):
    for x in batches:
        yield x, model(x)


def predict(model, batches):
    model.eval()
    outputs = []
    for x, out in produce(batches, model):
        outputs.append(out.softmax(-1))
    return outputs
''' + PREDICT.split("    return outputs\n", 1)[1], [9, 15])
    assert made("generator", "evaluator") == "no producer at the top of the loop"
    assert made("generator", "faq", source=FAQ.replace("        optimizer.zero_grad()\n", "        x = x * 2\n")) == \
        "no producer at the top of the loop"


def test_neutral_ops():
    ops = {
        "mul-one": "        loss = criterion(model(x) * 1.0, y)",
        "add-zero": "        loss = criterion(model(x) + 0.0, y)",
        "ellipsis": "        loss = criterion(model(x)[...], y)",
        "slice": "        loss = criterion(model(x)[:], y)",
        "squeeze": "        loss = criterion(model(x).unsqueeze(-1).squeeze(-1), y)",
    }
    for kind, text in ops.items():
        assert made("neutral-op", "faq", kind) == (
            FAQ.split("import torch\n", 1)[1].replace("        loss = criterion(model(x), y)", text), [13]), kind
    assert made("neutral-op", "faq", "view-as") == "the model call's result is not assigned to a name"
    assert made("neutral-op", "predict", "view-as", rule="GG103") == (PREDICT.split("import torch\n", 1)[1].replace(
        "        out = model(x)\n", "        out = model(x)\n        out = out.view_as(out)\n"), [11])
    # a binary op in parentheses where it is no argument or assigned value
    assert line(made("neutral-op", "predict", "add-zero", rule="GG103",
                     source=PREDICT.replace("out = model(x)", "out = model(x).relu()"))[0], 11) == \
        "        out = (model(x) + 0.0).relu()"


def test_reverse():
    p = program("evaluator")
    o = variants.TRANSFORMS["reverse"](Subject(p))[0]
    code, lines = finish(o.code, p)
    assert code.split("import torch\n", 1)[1] == '''

def make(width):
    return torch.nn.Linear(width, 2)


class Evaluator:
    def __init__(self, model):
        self.model = model

    def run(self, batches):
        self.model.eval()
        outputs = []
        for x in batches:
            outputs.append(self.model(x))
        return outputs
''' + EVALUATOR.split("    return torch.nn.Linear(width, 2)\n", 1)[1]
    assert lines == {19}
    assert [o.origin[line] for line in (7, 8, 11, 19, 20, 23)] == [19, 20, 7, 15, 16, 23]
    based = EVALUATOR.replace("def make(width):\n    return torch.nn.Linear(width, 2)",
                              "class Strict(Evaluator):\n    pass")
    assert made("reverse", "evaluator", source=based) == "a definition is needed above where it would go"
    assert made("reverse", "faq") == "fewer than two definitions"


# ---------------------------------------------------------------------- running: kept or discarded
def _variant(name: str, source: str, rule: str = "GG101") -> object:
    p = program(name, source, rule)
    return variants.Variant(p, "test", source=source, lines=frozenset({p.line}) if p.line else frozenset())


def test_a_variant_that_breaks_its_program_or_loses_its_label_is_discarded(tmp_path):
    lookalike = FAQ.replace("# label: GG101 13", "# label: lookalike GG101")
    cases = {
        "kept": _variant("faq", FAQ),
        "raised": _variant("faq", FAQ.replace("total += loss", "total += loss.nonexistent")),
        "lost": _variant("faq", FAQ.replace("total += loss", "total += loss.item()")),
        "gained": _variant("faq", lookalike),
        "import": _variant("faq", FAQ.replace("import torch\n", "import torch\nundefined_name\n", 1)),
        "slow": _variant("faq", FAQ.replace("    total = 0\n", "    total = 0\n    while True:\n        pass\n")),
    }
    ran = variants.run_all(list(cases.values()), cache=tmp_path, timeout=5)
    assert ran == 6
    assert {k: v.discarded for k, v in cases.items()} == {
        "kept": None, "raised": "observe() raised", "lost": "effect lost", "gained": "effect gained",
        "import": "observe() raised", "slow": "timeout"}
    assert cases["raised"].detail == "AttributeError: 'Tensor' object has no attribute 'nonexistent'"
    again = {k: _variant("faq", v.source) for k, v in cases.items() if k != "slow"}
    assert variants.run_all(list(again.values()), cache=tmp_path) == 0  # every verdict from the cache
    assert {k: v.discarded for k, v in again.items()} == {k: cases[k].discarded for k in again}


def test_a_variant_that_does_not_parse_is_discarded(monkeypatch):
    monkeypatch.setitem(variants.TRANSFORMS, "broken", lambda s: [subject.Outcome("", code=s.module.code + "def (:\n")])
    monkeypatch.setitem(variants.TRANSFORMS, "lossy", lambda s: [subject.Outcome("", code="import torch\n")])
    made_ = variants.generate([program("faq")], ["broken", "lossy"])
    assert [(v.transform, v.discarded) for v in made_] == [("broken", "did not parse"), ("lossy", "label lost")]


def test_generation_on_a_sample_of_the_corpus_makes_valid_programs():
    programs = oracle.programs()[::10]
    made_ = variants.generate(programs, list(variants.TRANSFORMS))
    assert {v.discarded for v in made_} <= {None, "not applicable"}
    for v in made_:
        if v.source is not None:
            assert MARK not in v.source and subject.CALL not in v.source
            where = v.modules[v.anchor_in] if v.anchor_in else v.source  # module: the labelled line may have moved
            assert v.lines and all(where.splitlines()[n - 1].strip() for n in v.lines), (v.name, v.program.name)
            assert all(MARK not in text and subject.CALL not in text for text in (v.modules or {}).values())


# ---------------------------------------------------------------------- the report
def test_the_printed_table(tmp_path):
    root = tmp_path / "corpus"
    (root / "GG101").mkdir(parents=True)
    (root / "GG101" / "evaluator.py").write_text(EVALUATOR)
    (root / "GG101" / "evaluator_no_grad.py").write_text(
        EVALUATOR.replace("# label: GG101|GG103 15", "# label: lookalike GG101")
        .replace("    def run(self, batches):\n", "    @torch.no_grad()\n    def run(self, batches):\n"))
    command = [sys.executable, str(BENCH), "--root", str(root), "--cache", str(tmp_path / "cache"), "--only", "reverse"]
    run = subprocess.run([*command, "--verbose"], capture_output=True, text=True, check=True)
    assert run.stdout.splitlines() == [
        "== variants of 2 programs (1 bugs, 1 look-alikes), default settings; originals: 1 of 1 bugs found, "
        "0 false positives",
        "transformation          made  kept  disc   n/a |  bugs found recall   orig ratio  lost  gain | looks   FP "
        "FP rate",
        "reverse                    2     2     0     0 |     1     1   100%   100%  1.00     0     0 |     1    0   "
        "    0",
        "reasons:",
        "  reverse: discarded: none",
        "           not applicable: none",
        "reverse: findings identical to the original's on 2 of 2 programs; differ on 0",
    ]
    assert "(2 variants run" in run.stderr
    again = subprocess.run([*command, "--write", str(tmp_path / "out")], capture_output=True, text=True, check=True)
    assert again.stdout == run.stdout and "(0 variants run" in again.stderr
    written = (tmp_path / "out" / "reverse" / "GG101" / "evaluator.py").read_text()
    assert written.splitlines()[1] == "# label: GG101|GG103 19"


def test_judging_a_variant_counts_the_lines_it_was_given():
    p = program("faq")
    v = variants.Variant(p, "test", source=p.source, lines=frozenset({12}))
    o = variants.original(p)
    variants.judge([v], {p.name: o})
    assert o.found and not v.found
    moved = dataclasses.replace(v, lines=frozenset({12, 13}), found=None)
    variants.judge([moved], {p.name: o})
    assert moved.found


# ---------------------------------------------------------------------- module: the program split into a package
def split(name: str, kind: str, source: str | None = None, rule: str = "GG101"):
    p = program(name, source, rule)
    o = next(o for o in variants.TRANSFORMS["module"](Subject(p)) if o.kind == kind)
    if o.code is None:
        return o.reason
    main, modules, anchor_in, lines = subject.finish_package(o.code, o.modules, p)
    return main.split("import torch\n", 1)[1], modules, anchor_in, sorted(lines)


def test_module_model_moves_the_classes_to_a_module_and_imports_them_back():
    assert split("evaluator", "model") == (
        "from gg_models import Evaluator\n\n\ndef make(width):\n    return torch.nn.Linear(width, 2)\n\n\n"
        'def observe():\n    return {"kept": Evaluator(make(4)).run([torch.randn(3, 4)] * 2)}\n',
        {"gg_models": "import torch\n\n\nclass Evaluator:\n    def __init__(self, model):\n        self.model = model\n\n"
                      "    def run(self, batches):\n        self.model.eval()\n        outputs = []\n"
                      "        for x in batches:\n            outputs.append(self.model(x))\n        return outputs\n"},
        "gg_models", [12],
    )


def test_module_caller_moves_the_labelled_function_and_what_it_uses():
    main, modules, anchor_in, lines = split("faq", "caller")
    assert main.startswith("from gg_steps import train\n\n\ndef observe():\n")
    assert modules["gg_steps"].startswith("import torch\n\n\ndef train(model, loader, optimizer, criterion):\n")
    assert (anchor_in, lines) == ("gg_steps", [10])
    assert modules["gg_steps"].splitlines()[9] == "        total += loss"


def test_module_is_not_applicable_where_a_moved_definition_reads_a_variable_of_the_program():
    source = FAQ.replace("def train(", "SCALE = 2\n\n\ndef train(").replace("total += loss", "total += loss * SCALE")
    assert split("faq", "caller", source) == "a moved definition reads the program's variable SCALE"
    assert split("faq", "model") == "no top-level class"


def test_a_split_program_runs_as_a_package_and_is_checked_as_one(tmp_path):
    p = program("faq")
    o = next(o for o in variants.TRANSFORMS["module"](Subject(p)) if o.kind == "caller")
    v = variants.Variant(p, "module", "caller")
    v.source, v.modules, v.anchor_in, v.lines = subject.finish_package(o.code, o.modules, p)
    assert variants.run_all([v], cache=tmp_path, timeout=60) == 1
    assert v.discarded is None  # the oracle, with gg_steps importable beside the program, still sees the graph kept
    variants.judge([v], {})
    assert v.found and [(f.code, f.range.start.line) for f in v.findings] == [("GG101", 10)]


def test_fix_convergence_is_checked_on_kept_variants():
    v = _variant("faq", FAQ)
    assert variants.converging([v]) == "fix convergence: 1 variants, 0 failed"


def test_reversed_findings_compare_with_every_line_of_their_messages_mapped_back():
    def finding(line, message):
        pos = dataclasses.make_dataclass("Pos", ["line", "column"])
        span = dataclasses.make_dataclass("Span", ["start"])
        return dataclasses.make_dataclass("F", ["code", "range", "message"])("GG103", span(pos(line, 16)), message)

    p = program("evaluator")
    original = variants.Variant(p, "reverse", findings=[finding(97, "reach only `.numpy()` (lines 48, 51 and 60)")])
    moved = {60: 97, 68: 48, 71: 51, 80: 60}
    same = variants.Variant(p, "reverse", origin=moved, findings=[finding(60, "reach only `.numpy()` (lines 68, 71 and 80)")])
    other = variants.Variant(p, "reverse", origin=moved, findings=[finding(60, "reach only `.numpy()` (lines 68, 72 and 80)")])
    assert variants.same_findings(same, original)
    assert not variants.same_findings(other, original)
