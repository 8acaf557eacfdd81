"""`python -m sizing solve`: the JSON interface, .vbp input, exit statuses and error messages."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sizing.cli import main
from sizing.commands.native_output import stdout_to_stderr

REPO = Path(__file__).resolve().parents[2]

PROBLEM = {
    "binTypes": [
        {"name": "m5.large", "capacity": {"cpu": 1930, "memory": 6903, "pods": 29}, "cost": 0.096, "max": None},
        {"name": "m5.xlarge", "capacity": {"cpu": 3920, "memory": 14162, "pods": 58}, "cost": 0.192},
    ],
    "items": [
        {"name": "web", "size": {"cpu": 250, "memory": 512, "pods": 1}, "count": 12},
        {"name": "worker", "size": {"cpu": 1000, "memory": 2048}, "count": 3},
    ],
    "timeLimitSeconds": 5,
}


def run_cli(capsys, argv, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def check_json_packing(problem, result):
    """Independent check of a JSON result against its JSON problem."""
    bin_types = {b["name"]: b for b in problem["binTypes"]}
    items = {i["name"]: i for i in problem["items"]}
    placed = {name: 0 for name in items}
    cost = 0.0
    for group in result["bins"]:
        capacity = bin_types[group["type"]]["capacity"]
        for dim, room in capacity.items():
            load = sum(items[name]["size"].get(dim, 0) * n for name, n in group["items"].items())
            assert load <= room, (group, dim)
        for name, n in group["items"].items():
            placed[name] += n * group["count"]
        cost += bin_types[group["type"]]["cost"] * group["count"]
    assert placed == {name: item["count"] for name, item in items.items()}
    assert result["binCount"] == sum(g["count"] for g in result["bins"])
    assert result["cost"] == pytest.approx(cost, abs=1e-6)
    assert result["lowerBound"]["cost"] <= result["cost"] + 1e-9
    assert result["lowerBound"]["bins"] <= result["binCount"]


def test_solve_a_file_prints_a_feasible_packing_as_json(tmp_path, capsys):
    path = tmp_path / "problem.json"
    path.write_text(json.dumps(PROBLEM))
    code, out, err = run_cli(capsys, ["solve", str(path)])
    assert code == 0, err
    result = json.loads(out)
    assert set(result) == {"status", "cost", "binCount", "lowerBound", "bins", "seconds", "work"}
    check_json_packing(PROBLEM, result)
    assert result["status"] == "optimal"
    assert result["cost"] == result["lowerBound"]["cost"]


def test_solve_reads_stdin_and_the_time_limit_option(capsys, monkeypatch):
    code, out, _ = run_cli(capsys, ["solve", "-", "--time-limit", "2"], json.dumps(PROBLEM), monkeypatch)
    assert code == 0
    check_json_packing(PROBLEM, json.loads(out))


def test_example_from_the_interface_description(capsys, monkeypatch):
    problem = {
        "binTypes": [
            {"name": "m5.large", "capacity": {"cpu": 1930, "memory": 6903, "pods": 29}, "cost": 0.096, "max": None}
        ],
        "items": [{"name": "web", "size": {"cpu": 100, "memory": 128, "pods": 1}, "count": 10}],
        "timeLimitSeconds": 10,
    }
    code, out, _ = run_cli(capsys, ["solve", "-"], json.dumps(problem), monkeypatch)
    result = json.loads(out)
    assert code == 0
    assert {k: result[k] for k in ("status", "cost", "binCount", "lowerBound", "bins")} == {
        "status": "optimal",
        "cost": 0.096,
        "binCount": 1,
        "lowerBound": {"cost": 0.096, "bins": 1},
        "bins": [{"type": "m5.large", "count": 1, "items": {"web": 10}}],
    }


def test_infeasible_problem_prints_the_result_and_exits_1(capsys, monkeypatch):
    problem = {
        "binTypes": [{"name": "big", "capacity": {"cpu": 7910}, "cost": 1.0}],
        "items": [{"name": "web", "size": {"cpu": 9000}, "count": 1}],
    }
    code, out, err = run_cli(capsys, ["solve", "-"], json.dumps(problem), monkeypatch)
    assert code == 1
    result = json.loads(out)
    assert result["status"] == "infeasible" and result["bins"] == []
    assert result["reason"] == "item 'web' needs 9000 cpu but the largest bin type offers 7910"
    assert "item 'web' needs 9000 cpu" in err


def _with(path, value):
    document = json.loads(json.dumps(PROBLEM))
    target = document
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return json.dumps(document)


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"binTypes": [', "not valid JSON"),
        ("[]", "must be a JSON object"),
        (
            _with(["items", 0, "size", "cpu"], -5),
            "items[0].size.cpu: input should be greater than or equal to 0, got -5",
        ),
        (
            _with(["binTypes", 0, "capacity", "cpu"], 0),
            "binTypes[0].capacity.cpu: input should be greater than or equal to 1",
        ),
        (_with(["colour"], "red"), "colour: is not a known field"),
        (_with(["binTypes", 1, "region"], "x"), "binTypes[1].region: is not a known field"),
        (_with(["items", 1, "weight"], 3), "items[1].weight: is not a known field"),
        (_with(["items", 0, "count"], KeyError), "items[0].count: is required"),
        (_with(["binTypes", 0, "cost"], KeyError), "binTypes[0].cost: is required"),
        (_with(["binTypes"], KeyError), "binTypes: is required"),
        (_with(["binTypes", 0, "cost"], "0.096"), "binTypes[0].cost: input should be a valid number, got '0.096'"),
        (_with(["binTypes", 0, "cost"], 0), "binTypes[0].cost: input should be greater than 0"),
        (_with(["items", 0, "count"], 2.5), "items[0].count: input should be a valid integer"),
        (
            _with(["binTypes", 0, "capacity", "pods"], True),
            "binTypes[0].capacity.pods: input should be a valid integer",
        ),
        (_with(["binTypes", 0, "max"], -1), "binTypes[0].max: input should be greater than or equal to 0"),
        (_with(["items", 1, "name"], "web"), "items[1].name: 'web' is already the name of items[0]"),
        (_with(["binTypes", 1, "name"], "m5.large"), "binTypes[1].name: 'm5.large' is already the name of binTypes[0]"),
        (_with(["timeLimitSeconds"], -1), "timeLimitSeconds: input should be greater than 0"),
        (_with(["binTypes"], []), "binTypes: list should have at least 1 item"),
        ('{"binTypes": [], "items": [], "timeLimitSeconds": NaN}', "NaN is not a valid JSON number"),
    ],
)
def test_bad_input_gives_one_message_and_exit_2(text, message, capsys, monkeypatch):
    code, out, err = run_cli(capsys, ["solve", "-"], text, monkeypatch)
    assert code == 2
    assert out == ""
    assert err.startswith("error: stdin: ") and err.count("\n") == 1
    assert message in err
    assert "Traceback" not in err


@pytest.mark.parametrize("limit", ["0", "-3", "nan", "inf"])
def test_bad_time_limit_option(limit, capsys, monkeypatch):
    code, _, err = run_cli(capsys, ["solve", "-", "--time-limit", limit], json.dumps(PROBLEM), monkeypatch)
    assert code == 2 and "--time-limit must be a positive number" in err


@pytest.mark.parametrize("workers", ["0", "-1"])
def test_bad_workers_option(workers, capsys, monkeypatch):
    code, _, err = run_cli(capsys, ["solve", "-", "--workers", workers], json.dumps(PROBLEM), monkeypatch)
    assert code == 2 and "--workers must be a positive integer" in err


def test_one_worker_and_two_print_the_same_packing(capsys, monkeypatch):
    outputs = []
    for workers in ("1", "2"):
        code, out, _ = run_cli(capsys, ["solve", "-", "--workers", workers], json.dumps(PROBLEM), monkeypatch)
        assert code == 0
        result = json.loads(out)
        result.pop("seconds")
        outputs.append(result)
    assert outputs[0] == outputs[1]


def test_a_missing_file_is_reported(tmp_path, capsys):
    code, _, err = run_cli(capsys, ["solve", str(tmp_path / "absent.json")])
    assert code == 2 and "cannot read" in err and "absent.json" in err


def test_vbp_option_reads_a_small_file(tmp_path, capsys):
    path = tmp_path / "tiny.vbp"
    path.write_text("2\n10 10\n2\n6 4 2\n4 6 2\n")
    code, out, _ = run_cli(capsys, ["solve", "--vbp", str(path)])
    result = json.loads(out)
    assert code == 0
    assert result["binCount"] == 2 and result["status"] == "optimal"
    assert sorted((g["count"], g["items"]["i0"], g["items"]["i1"]) for g in result["bins"]) == [(2, 1, 1)]


def test_vbp_option_reads_a_benchmark_file(bench_dir, capsys):
    code, out, _ = run_cli(
        capsys, ["solve", "--vbp", str(bench_dir / "Panigrahy_class2_20_3_0.vbp"), "--time-limit", "5"]
    )
    result = json.loads(out)
    assert code == 0
    assert result["binCount"] == 13  # the proven optimum in optima.csv
    assert sum(n * g["count"] for g in result["bins"] for n in g["items"].values()) == 20


def test_vbp_errors_name_the_file_and_position(tmp_path, capsys):
    path = tmp_path / "broken.vbp"
    path.write_text("3\n100 100 100\n1\n5 -1 5 1\n")
    code, _, err = run_cli(capsys, ["solve", "--vbp", str(path)])
    assert code == 2
    assert "broken.vbp: item type 0: size in dimension 1 must be at least 0, got -1" in err


def test_native_output_on_stdout_is_diverted_to_stderr(capfd):
    with stdout_to_stderr():
        os.write(1, b"solver noise\n")
    print("clean", flush=True)
    out, err = capfd.readouterr()
    assert out == "clean\n"
    assert "solver noise" in err


def test_the_command_in_a_new_process_prints_only_json():
    completed = subprocess.run(
        [sys.executable, "-m", "sizing", "solve", "-"],
        input=json.dumps(PROBLEM),
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    check_json_packing(PROBLEM, json.loads(completed.stdout))
    assert "Traceback" not in completed.stderr
