"""bench/corpus.py on a small corpus written here: a bug found, a bug missed, a look-alike
with a false positive, and the exact table it prints."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "corpus.py"

FOUND = '''# source: https://pytorch.org/docs/stable/notes/faq.html
# label: GG101 11
# effect: graph_kept
import torch


def train(model, loader, optimizer):
    total = 0
    for x in loader:
        loss = model(x).sum(); loss.backward()
        total += loss
    return total


def observe():
    return {"kept": []}
'''
MISSED = FOUND.replace("# label: GG101 11", "# label: GG101 10")
LOOKALIKE = '''# source: https://example.org/a-real-page
# label: lookalike GG101
# effect: graph_kept
import torch

net = torch.nn.Linear(2, 1)
kept = []
for x in [torch.randn(3, 2)]:
    kept.append(net(x))


def observe():
    return {"kept": []}
'''


def test_table_and_listing(tmp_path):
    (tmp_path / "GG101").mkdir()
    (tmp_path / "GG101" / "found.py").write_text(FOUND)
    (tmp_path / "GG101" / "missed.py").write_text(MISSED)
    (tmp_path / "GG101" / "lookalike.py").write_text(LOOKALIKE)
    run = subprocess.run([sys.executable, str(BENCH), "--root", str(tmp_path), "--verbose"],
                         capture_output=True, text=True, check=True)
    block = [
        "class    bugs  found  recall  look-alikes  false +",
        "GG101       2      1     50%            1        1",
        "all         2      1     50%            1        1",
        "  missed GG101/missed (GG101:10); reported: GG101:11",
        "  false positive GG101/lookalike: GG101:9",
        "",
    ]
    assert run.stdout.splitlines() == [
        "== default (3 programs)", *block, "== types (3 programs)", *block, "== strict (3 programs)", *block
    ]


CORPUS = Path(__file__).resolve().parent / "corpus"
# (program, found with its caller in another module, found alone): the first five need what only the
# caller says (the optimizer class it passes, the tensors, an instance built in a file without torch, the
# rows of tensors whose columns `zip(*data)` makes, the tensor attribute of an object of its own class); the
# sixth lacks evidence in either shape (the step count in a `SimpleNamespace`); the look-alike's caller
# freezes the networks it passes
PROJECT_PROGRAMS = {
    "GG302/custom_optimizer_step_closure_no_grad": (True, False),
    "GG402/eigenpro_tensor_of_tensor": (True, False),
    "GG102/location_attention_alignment_fed_back": (True, False),
    "GG402/collate_column_tensor_copy": (True, False),
    "GG402/lanpaint_sigmas_copy": (True, False),
    "GG302/b33_maml_one_update_step_query_no_grad": (False, False),
    "GG103/b29_stylegan2_generator_phase_fakes": (None, None),
}


def test_project_mode_checks_each_program_with_its_caller_in_another_module(tmp_path):
    for name in PROJECT_PROGRAMS:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / f"{name}.py").write_text((CORPUS / f"{name}.py").read_text())
    run = subprocess.run([sys.executable, str(BENCH), "--root", str(tmp_path), "--modes", "default,project",
                          "--verbose"], capture_output=True, text=True, check=True)
    assert run.stdout.splitlines() == [
        "== default (7 programs)",
        "class    bugs  found  recall  look-alikes  false +",
        "GG102       1      0      0%            0        0",
        "GG103       0      0       -            1        0",
        "GG302       2      0      0%            0        0",
        "GG402       3      0      0%            0        0",
        "all         6      0      0%            1        0",
        "  missed GG102/location_attention_alignment_fed_back (GG102:28); reported: nothing",
        "  missed GG302/b33_maml_one_update_step_query_no_grad (GG302:71); reported: nothing",
        "  missed GG302/custom_optimizer_step_closure_no_grad (GG302:41); reported: nothing",
        "  missed GG402/collate_column_tensor_copy (GG402:23); reported: nothing",
        "  missed GG402/eigenpro_tensor_of_tensor (GG402:13); reported: nothing",
        "  missed GG402/lanpaint_sigmas_copy (GG402:14); reported: nothing",
        "",
        "== project (7 programs)",
        "class    bugs  found  recall  look-alikes  false +",
        "GG102       1      1    100%            0        0",
        "GG103       0      0       -            1        0",
        "GG302       2      1     50%            0        0",
        "GG402       3      3    100%            0        0",
        "all         6      5     83%            1        0",
        "  missed GG302/b33_maml_one_update_step_query_no_grad (GG302:71); reported: nothing",
        "",
    ]


def test_project_mode_caller_module_reads_only_what_observe_reads():
    spec = importlib.util.spec_from_file_location("bench_corpus", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    source = (CORPUS / "GG102/location_attention_alignment_fed_back.py").read_text()
    assert bench.caller_module(source) == (
        "from library import LocationAttention, align_frames\n\n\n"
        "def observe():\n"
        "    from corpus.oracle import graph_size\n\n"
        "    attention = LocationAttention(hidden_size=8)\n"
        "    sizes = []\n"
        "    attention.register_forward_hook(lambda m, inp, out: sizes.append(graph_size(out)))\n"
        "    align_frames(attention, batch_size=2, num_tokens=5, num_frames=4)\n"
        '    return {"sizes": sizes}\n'
    )
