"""What the README promises, held to: its tables are the ones the code uses, every command line it shows
names options its command has, the set-up commands are the ones CI runs, every command prints
``--version``, and ``rmq-conformance`` exits with the status the README gives for each outcome.

(The README's counts sit in ``<!-- generated:NAME -->`` spans that ``rocketmq_spec.conformance.results`` fills
from the committed reports.) """

from __future__ import annotations

import re
import shlex
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from rocketmq_spec.conformance import cli_compare, cli_options
from rocketmq_spec.conformance.cli_help import EXIT_MEANINGS, ExitStatus
from rocketmq_spec.conformance.profile import shipped
from rocketmq_spec.conformance.report.html_page import MEANINGS, SEVERITY_ORDER
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from tests import process_tree
from tests.golden import PROJECT_ROOT

README = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
SCRIPTS: dict[str, str] = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]["scripts"]
RUN_TIMEOUT = 300


def command(script: str, *args: str | Path, cwd: Path = PROJECT_ROOT) -> subprocess.CompletedProcess[str]:
    """A console script run as its entry point names it (installed or not)."""
    module, function = SCRIPTS[script].split(":")
    code = f"import sys; from {module} import {function}; sys.argv[0] = {script!r}; sys.exit({function}())"
    return process_tree.run([sys.executable, "-c", code, *map(str, args)], cwd=cwd, capture_output=True,
                            text=True, timeout=RUN_TIMEOUT, check=False)


def section(marker: str) -> list[str]:
    """The table rows between ``<!-- marker: ... -->`` and ``<!-- /marker -->``."""
    found = re.search(rf"<!-- {marker}:.*?-->\n(.*?)<!-- /{marker} -->", README, re.S)
    assert found, f"README has no {marker} table"
    return found.group(1).strip().splitlines()[2:]


def test_the_verdict_table_is_the_reports_legend() -> None:
    assert section("verdicts") == [f"| {v.value} | {MEANINGS[v]} |" for v in SEVERITY_ORDER]


def test_the_exit_status_table_is_the_commands() -> None:
    assert section("exit-status") == [f"| {int(code)} | {text} |" for code, text in EXIT_MEANINGS.items()]


def test_the_set_up_is_two_commands_and_ci_runs_the_second() -> None:
    block = README[README.index("## Set up"):README.index("## Point it at your broker")]
    (code,) = re.findall(r"```sh\n(.*?)```", block, re.S)
    commands = [line for line in code.splitlines() if line and not line.startswith("#")]
    assert commands == ["python3 -m pip install -e . && rmq-conformance --report reports/conformance",
                        "python3 -m pip install -e '.[dev]' && python3 -m pytest -n 2"]
    ci = (PROJECT_ROOT / ".ci" / "run").read_text()
    assert "python3 -m venv" in ci and "python3 -m pip install -q -e '.[dev]'" in ci
    assert "\npython3 -m pytest -n 2\n" in ci


def _shown_commands() -> list[list[str]]:
    """Every ``rmq-*`` command line of the README's shell blocks, as words."""
    found = []
    for block in re.findall(r"```sh\n(.*?)```", README, re.S):
        for line in block.splitlines():
            for part in line.split("&&"):
                words = shlex.split(part.split("#", 1)[0])
                if words and words[0] in SCRIPTS:
                    found.append(words)
    return found


@pytest.mark.parametrize("words", _shown_commands(), ids=" ".join)
def test_commands_shown_have_the_options_they_use(words: list[str]) -> None:
    subcommand = [words[1]] if len(words) > 1 and not words[1].startswith("-") else []
    helped = command(words[0], *subcommand, "--help")
    assert helped.returncode == 0, helped.stderr
    for option in (w.split("=")[0] for w in words[1:] if w.startswith("-")):
        assert re.search(rf"(^|[\s,\[]){re.escape(option)}\b", helped.stdout), (option, words)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_every_command_prints_its_version(script: str) -> None:
    done = command(script, "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{script} ") and "rocketmq-spec" in done.stdout


def test_conformance_help_explains_every_option_without_markup() -> None:
    helped = command("rmq-conformance", "--help").stdout
    assert "``" not in helped
    for heading in ("examples:", "profiles (--profile NAME", "exit status:"):
        assert heading in helped
    for profile in shipped():
        assert profile.file in helped
    parsers = (cli_options.wire_parser(), cli_options.store_parser(), cli_compare.compare_parser(),
               cli_compare.compare_html_parser())
    for parser in parsers:
        silent = [action.option_strings or action.dest for action in parser._actions if not action.help]
        assert silent == [], parser.prog


def test_a_run_whose_only_failures_are_its_own_exits_3(tmp_path: Path) -> None:
    """A feed address the suite cannot listen on is an ERROR of the run, not a FAIL of the slave: the
    fed-slave cases get ERROR and the command exits 3."""
    with socket.socket() as taken, SyncEmbeddedRocketMQ(tmp_path / "slave") as slave:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        feed = f"127.0.0.1:{taken.getsockname()[1]}"
        done = command("rmq-conformance", "--ha-slave", slave.broker_addr, "--ha-feed", feed,
                       "-k", "fed_slave_serves_records", "-n", "0", "--report", tmp_path / "report")
    assert done.returncode == ExitStatus.RUN_FAILED, done.stdout[-3000:] + done.stderr[-2000:]
    assert "ERROR" in done.stdout and "cannot listen at the HA feed" in done.stdout


def test_spec_doc_check_exit_statuses(tmp_path: Path) -> None:
    assert command("rmq-spec-doc", "--check").returncode == 0
    stale = tmp_path / "PROTOCOL.md"
    stale.write_text("stale\n")
    assert command("rmq-spec-doc", "--check", "--output", stale).returncode == 1
    missing = command("rmq-spec-doc", "--check", cwd=tmp_path)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
