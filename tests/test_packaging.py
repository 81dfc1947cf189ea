"""The project builds into a wheel (and an sdist) that installs into a fresh virtualenv and runs the main
job from there: the conformance suite against the embedded broker, with its cases, profiles and report.

The short form (default run) builds the wheel and installs it without dependencies into a virtualenv that
sees this interpreter's packages (a virtualenv's or not); the long form (``slow``) builds the sdist, the
wheel from the sdist, and also reads a store through the ``rocketmq-store`` format on a plain
SparkSession of the installed copy. Both run from a directory outside the checkout with ``PYTHONPATH``
cleared, so only the installed copy can be imported.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import os
import subprocess
import sys
import tarfile
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

from rocketmq_spec.spec.golden import STORE_TARBALL
from tests import process_tree
from tests.golden import PROJECT_ROOT

pytestmark = pytest.mark.skipif(importlib.util.find_spec("build") is None,
                                reason="needs the 'build' package (pip install -e '.[dev]')")

BUILD_TIMEOUT = 300
"""Seconds for ``python -m build``: it fetches setuptools into an isolated environment first."""
RUN_TIMEOUT = 300
A_FEW_CASES = "largest_length_accepted or unknown_code or store_layout"
"""A quick selection of wire cases, enough to show the installed suite runs and reports."""
SHIPPED = ("rocketmq_spec/conformance/cases/test_framing.py",
           "rocketmq_spec/conformance/profiles/rocketmq-4.9.toml",
           "pyspark_rocketmq/__init__.py", "pyspark_rocketmq_store/__init__.py",
           "rocketmq_spec/spec/clauses.py")


def build(out: Path, *kinds: str, env: dict[str, str] | None = None) -> list[Path]:
    process_tree.run([sys.executable, "-m", "build", *kinds, "--outdir", str(out), str(PROJECT_ROOT)],
                     check=True, capture_output=True, timeout=BUILD_TIMEOUT, env=env)
    return sorted(out.iterdir())


def sdist_names(sdist: Path) -> set[str]:
    with tarfile.open(sdist) as tar:
        return {name.split("/", 1)[-1] for name in tar.getnames()}


def installed(tmp_path: Path, wheel: Path) -> tuple[Path, dict[str, str]]:
    """A virtualenv holding only the wheel of this project, which sees the dependencies this interpreter
    has, and the environment to run it in.

    The dependencies come from this interpreter's own package directories, named in a ``.pth`` file, not
    from ``system_site_packages``: that option shows the base interpreter's packages, which inside a
    virtualenv are not the ones this run has. Only the directories are listed, so the ``.pth`` files in
    them (an editable install of this project) are not run. ``--ignore-installed``: a copy of the project
    this interpreter already has must neither satisfy the install nor be touched."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    bin_dir = env_dir / "bin"
    purelib = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site_packages = Path(subprocess.run([bin_dir / "python", "-c", purelib], check=True, capture_output=True,
                                        text=True).stdout.strip())
    ours = [entry for entry in sys.path if entry.endswith(("site-packages", "dist-packages"))]
    (site_packages / "dependencies.pth").write_text("\n".join(ours) + "\n")
    process_tree.run([sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "-q",
                      "--ignore-installed", "--no-deps", str(wheel)],
                     check=True, capture_output=True, timeout=RUN_TIMEOUT)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    return bin_dir, env


FORMER_PACKAGES = ("spec", "codec", "admin", "fuzz", "conformance", "reference_broker", "interop",
                   "apache_rocketmq", "rocketmq_rust", "rocketmq_targets", "spark_tests")
"""The top-level import packages the project installed before everything moved under ``rocketmq_spec``:
generic names that would shadow, or be shadowed by, a user's own modules."""


def run_main_job(tmp_path: Path, bin_dir: Path, env: dict[str, str]) -> None:
    work = tmp_path / "elsewhere"
    work.mkdir()
    ask = "import rocketmq_spec.conformance as c; print(c.__file__)"
    where = subprocess.run([bin_dir / "python", "-c", ask],
                           cwd=work, env=env, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(tmp_path / "venv")), where
    found = "import importlib.util, sys; print([n for n in sys.argv[1:] if importlib.util.find_spec(n)])"
    reachable = subprocess.run([bin_dir / "python", "-c", found, *FORMER_PACKAGES],
                               cwd=work, env=env, capture_output=True, text=True, check=True).stdout
    assert reachable.strip() == "[]", "the project's modules are reachable only under rocketmq_spec"
    job = process_tree.run([bin_dir / "rmq-conformance", "-k", A_FEW_CASES, "--report", "report",
                            "--profile", "rocketmq-4.9"], cwd=work, env=env, capture_output=True,
                           text=True, timeout=RUN_TIMEOUT)
    assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
    for page in ("index.json", "index.html", "protocol.html", "junit.xml"):
        assert (work / "report" / page).is_file(), page
    assert "passed" in job.stdout


def implementation(bin_dir: Path, env: dict[str, str]) -> str:
    """Which per-send codec work the installed copy runs (``rocketmq_spec.codec.hotpath``)."""
    ask = "from rocketmq_spec.codec import hotpath; print(hotpath.implementation())"
    return subprocess.run([bin_dir / "python", "-c", ask], env=env, capture_output=True, text=True,
                          check=True, cwd=bin_dir).stdout.strip()


def package_data() -> set[str]:
    """Every file of the packages that is not Python source: profiles, regressions, Java drivers, proto
    files, TOML tables. The code reads them at run time, so the wheel must carry each one."""
    found = set()
    for package in ("rocketmq_spec", "pyspark_rocketmq", "pyspark_rocketmq_store"):
        for path in (PROJECT_ROOT / package).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".py", ".c", ".so"):
                found.add(path.relative_to(PROJECT_ROOT).as_posix())
    return found


def test_wheel_installs_and_runs_the_main_job(tmp_path: Path) -> None:
    (wheel,) = build(tmp_path / "dist", "--wheel")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert set(SHIPPED) <= names, set(SHIPPED) - names
    assert package_data() <= names, package_data() - names
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert any(name.startswith("rocketmq_spec/conformance/regressions/") for name in names)
    assert not any(name.startswith(("tests/", "benchmarks/")) for name in names)
    assert any(name.startswith("rocketmq_spec/codec/_hotpath") and name.endswith(".so") for name in names)
    bin_dir, env = installed(tmp_path, wheel)
    assert implementation(bin_dir, env) == "compiled"
    run_main_job(tmp_path, bin_dir, env)
    # what tox -e doc runs, from the checkout, with the project installed as a wheel rather than editable
    doc = process_tree.run([bin_dir / "rmq-spec-doc", "--check"], cwd=PROJECT_ROOT, env=env,
                           capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert doc.returncode == 0, doc.stderr


def test_wheel_built_without_a_compiler_runs_the_pure_python_path(tmp_path: Path) -> None:
    """No C compiler at build time (``CC`` that fails): the build goes on without the extension and the
    installed copy picks the pure-Python twins by itself. The wheel is built from the sdist, as pip
    builds one on such a machine, so no earlier build in the checkout can lend it an extension."""
    built = build(tmp_path / "dist", env={**os.environ, "CC": "false"})
    (wheel,) = [path for path in built if path.suffix == ".whl"]
    names = zipfile.ZipFile(wheel).namelist()
    assert not any(name.startswith("rocketmq_spec/codec/_hotpath") for name in names)
    bin_dir, env = installed(tmp_path, wheel)
    assert implementation(bin_dir, env) == "pure-python"
    run_main_job(tmp_path, bin_dir, env)


@pytest.mark.slow
def test_sdist_builds_a_wheel_that_installs_runs_and_serves_spark_formats(tmp_path: Path) -> None:
    built = build(tmp_path / "dist")  # the wheel is built from the sdist
    (sdist,) = [path for path in built if path.name.endswith(".tar.gz")]
    (wheel,) = [path for path in built if path.suffix == ".whl"]
    assert "pyspark_rocketmq_store/__init__.py" in sdist_names(sdist)
    bin_dir, env = installed(tmp_path, wheel)
    run_main_job(tmp_path, bin_dir, env)
    store_dir = tmp_path / "golden"
    store_dir.mkdir()
    subprocess.run(["tar", "-xzf", str(STORE_TARBALL), "-C", str(store_dir)], check=True)
    (store,) = store_dir.iterdir()
    conf = tmp_path / "spark-conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text("spark.master local[1]\nspark.driver.memory 512m\n"
                                              "spark.ui.enabled false\nspark.driver.host 127.0.0.1\n")
    job = ("from pyspark.sql import SparkSession\nimport sys\n"
           "print(SparkSession.builder.getOrCreate().read.format('rocketmq-store').load(sys.argv[1]).count())")
    count = process_tree.run([bin_dir / "python", "-c", job, str(store)], cwd=tmp_path / "elsewhere",
                             env={**env, "SPARK_CONF_DIR": str(conf), "SPARK_LOCAL_IP": "127.0.0.1"},
                             capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert count.returncode == 0, count.stderr[-3000:]
    assert count.stdout.split()[-1] == "50"


def test_ci_type_checks_every_package_the_wheel_ships() -> None:
    """The top-level packages ``[tool.setuptools.packages.find]`` puts in the wheel, and the tests, are what
    CI's ``mypy`` line and ``tox -e lint`` name: a package added later is not left unchecked."""
    include = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"][
        "find"]["include"]
    shipped = {path.name for path in PROJECT_ROOT.iterdir() if (path / "__init__.py").is_file()
               and any(fnmatch.fnmatch(path.name, pattern) for pattern in include)}
    assert "rocketmq_spec" in shipped
    for runner in (".ci/run", "tox.ini"):
        mypy = [line.split() for line in (PROJECT_ROOT / runner).read_text().splitlines()
                if line.split()[-1:] and "mypy" in line.split()[:4] and not line.lstrip().startswith("#")]
        assert any(shipped | {"tests"} <= set(words) for words in mypy), runner
