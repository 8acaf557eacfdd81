"""Values that are almost surely mistakes (memory in millibytes or bytes, a label value longer than
Kubernetes allows) are planned as written, with a warning in the text and JSON reports that names
the object, the field and the value, cut."""

import json

import pytest

from sizing import cli
from sizing.kube.doubtful import LABEL_WARNING, MAX_DOUBTFUL, MEMORY_WARNING
from sizing.kube.objects import read_objects
from tests.sizing.sample_objects import NODE_POOL, deployment


def _plan(capsys, tmp_path, text, *more):
    path = tmp_path / "objects.yaml"
    path.write_text(text)
    status = cli.main(["plan", str(path), *more])
    out, err = capsys.readouterr()
    assert status == 0, err
    return out


@pytest.mark.parametrize(
    "memory, why",
    [
        ("1000m", "= '1000m' (1 byte: 'm' is a thousandth, not mega; write Mi or M)"),
        ("512", "= 512 (512 bytes: a number without a suffix is bytes; write Mi or Gi)"),
        ("100Ki", "= '100Ki' (102,400 bytes)"),
    ],
)
def test_memory_below_one_mib_plans_with_a_warning_naming_the_field(capsys, tmp_path, memory, why):
    text = NODE_POOL + "---\n" + deployment("web", 2).replace("memory: 64Mi", f"memory: {memory}")
    report = _plan(capsys, tmp_path, text)
    line = next(line for line in report.splitlines() if line.startswith("Warning: a memory quantity"))
    assert line == (
        f"Warning: {MEMORY_WARNING}: Deployment default/web: spec.template.spec.containers[0].resources.requests.memory "
        + why
    )
    data = json.loads(_plan(capsys, tmp_path, text, "--json"))
    warning = next(w for w in data["warnings"] if w["message"] == MEMORY_WARNING)
    assert warning["workloads"] == [line.split(f"{MEMORY_WARNING}: ", 1)[1]]


def test_a_label_value_of_a_hundred_thousand_characters_is_warned_of_cut(capsys, tmp_path):
    long = "x" * 100_000
    text = (
        NODE_POOL + "---\n" + deployment("web", 2).replace("labels: {app: web}", f"labels: {{app: web, note: {long}}}")
    )
    report = _plan(capsys, tmp_path, text)
    line = next(line for line in report.splitlines() if line.startswith(f"Warning: {LABEL_WARNING}"))
    assert "spec.template.metadata.labels['note'] = 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'… (100,000 characters)" in line
    assert len(line) < 400 and len(report) < 20_000


def test_ordinary_values_warn_of_nothing_and_warnings_are_bounded():
    ordinary = read_objects([("x", NODE_POOL + "---\n" + deployment("web", 2))])
    assert ordinary.doubtful == ()
    many = "---\n".join(deployment(f"w{i}", 1).replace("memory: 64Mi", "memory: 64m") for i in range(MAX_DOUBTFUL + 20))
    assert len(read_objects([("x", NODE_POOL + "---\n" + many)]).doubtful) == MAX_DOUBTFUL
